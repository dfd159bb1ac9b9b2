"""What a new user meets first: a fast help, hints that work as printed, names that stay names."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path


def _heavy_imports(app_dir: Path, env_for, *argv: str) -> subprocess.CompletedProcess:
    """`graphflow ARGV` in a process that reports, on stderr, the heavy libraries it imported."""
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['graphflow', *{list(argv)!r}]\n"
        "try:\n"
        "    runpy.run_module('graphflow', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langgraph', 'langchain_core', 'langchain_openai', 'langsmith', 'pydantic', 'rich'))\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", probe],
        cwd=app_dir,
        env=env_for(app_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_help_and_version_import_no_langgraph(app_dir: Path, env_for) -> None:
    done = _heavy_imports(app_dir, env_for, "--help")
    assert "usage: graphflow" in done.stdout
    assert "HEAVY []" in done.stderr, done.stderr


def test_runs_reads_a_sqlite_store_without_langgraph(app_dir: Path, run_cli, env_for) -> None:
    assert run_cli(app_dir, "run", "cli_app.py:app", "hi", "--thread-id", "t1").returncode == 0
    failed = run_cli(app_dir, "run", "cli_app.py:fragile", "hi", "--thread-id", "t2")
    assert failed.returncode == 1
    done = _heavy_imports(app_dir, env_for, "runs")
    rows = {line.split()[0]: line.split()[1:4] for line in done.stdout.splitlines()[1:]}
    assert rows == {"t1": ["app", "done", "mark"], "t2": ["fragile", "failed", "store"]}, done
    assert "HEAVY []" in done.stderr, done.stderr


def test_bare_graphflow_prints_help_and_version(app_dir: Path, run_cli) -> None:
    bare = run_cli(app_dir)
    assert bare.returncode == 0 and "usage: graphflow" in bare.stdout and "run" in bare.stdout
    version = run_cli(app_dir, "--version")
    assert version.returncode == 0 and version.stdout.startswith("graphflow 0.")
    module = subprocess.run(
        [sys.executable, "-m", "graphflow", "--version"],
        cwd=app_dir,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert module.returncode == 0 and module.stdout.startswith("graphflow 0.")


def test_json_looking_text_can_be_passed(app_dir: Path, run_cli) -> None:
    refused = run_cli(app_dir, "--checkpointer", "memory:", "run", "cli_app.py:app", "[Refurb] x")
    assert refused.returncode == 2 and "--text" in refused.stderr
    taken = run_cli(
        app_dir, "--checkpointer", "memory:", "run", "cli_app.py:app", "[Refurb] x", "--text"
    )
    assert taken.returncode == 0, taken.stderr
    assert json.loads(taken.stdout[taken.stdout.index("\n{") + 1 :])["final"] == "[REFURB] X!"


def test_printed_commands_are_quoted_and_carry_no_password(app_dir: Path, run_cli) -> None:
    thread = "x; touch PWNED #"
    failed = run_cli(app_dir, "run", "cli_app.py:fragile", "go", "--thread-id", thread, "--plain")
    assert failed.returncode == 1
    hint = failed.stderr.strip().splitlines()[-1].split("the run can continue: ")[1]
    words = shlex.split(hint)
    assert words[-2:] == ["resume", thread]  # one argument, not a second command
    resumed = subprocess.run(hint, shell=True, cwd=app_dir, env=None, capture_output=True)
    assert not (app_dir / "PWNED").exists(), resumed
    from graphflow._internal.commands import resume_command

    command = resume_command("t1", "postgresql://alice:S3cretPW@db.example:5432/runs")
    assert "S3cretPW" not in command and "postgresql://alice@db.example:5432/runs" in command


def test_a_target_that_exits_is_an_error(app_dir: Path, run_cli) -> None:
    (app_dir / "exits.py").write_text("import sys\nsys.exit(0)\n")
    result = run_cli(app_dir, "run", "exits.py:team", "x")
    assert result.returncode == 2 and "sys.exit(0)" in result.stderr


def test_runs_on_an_empty_store_piped_and_long_cells(app_dir: Path, run_cli) -> None:
    import sqlite3

    sqlite3.connect(app_dir / "runs.db").close()  # a store nothing ran in
    empty = run_cli(app_dir, "runs")
    assert empty.returncode == 0 and empty.stdout.split() == [
        "thread",
        "agent",
        "status",
        "last",
        "agent",
        "step",
        "updated",
    ], empty.stderr
    long_thread = "t" * 150
    done = run_cli(app_dir, "run", "cli_app.py:app", "hi", "--thread-id", long_thread, "--plain")
    assert done.returncode == 0, done.stderr
    listed = run_cli(app_dir, "runs").stdout
    assert "…" in listed and max(len(line) for line in listed.splitlines()) < 160
    too_long = run_cli(app_dir, "run", "cli_app.py:app", "hi", "--thread-id", "t" * 500)
    assert too_long.returncode == 2 and "at most" in too_long.stderr


def test_ctrl_c_while_starting_says_nothing_ran(app_dir: Path, env_for) -> None:
    (app_dir / "slow_import.py").write_text(
        "import time\nfrom pathlib import Path\nPath('importing').write_text('x')\ntime.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphflow", "run", "slow_import.py:team", "hi"],
        cwd=app_dir,
        env=env_for(app_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(1200):
            if (app_dir / "importing").exists():
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "before the run started: nothing to resume" in err
    assert "graphflow run slow_import.py:team hi" in err  # how to start it again
    assert "thread" not in err


def test_show_on_a_stopped_loop_counts_finished_passes(app_dir: Path, run_cli, env_for) -> None:
    import re

    proc = subprocess.Popen(
        [sys.executable, "-m", "graphflow", "run", "cli_app.py:looped", "go", "--thread-id", "s1"],
        cwd=app_dir,
        env=env_for(app_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(1200):
            if (app_dir / "second_pass").exists():
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "stopped thread s1 in looped/drafter. Resume with: graphflow resume s1" in err, err
    shown = run_cli(app_dir, "show", "s1").stdout
    assert "thread s1: stopped" in shown, shown
    assert re.search(r"^  drafter +stopped, 1 pass done", shown, re.M), shown
    assert re.search(r"^  checker +completed, 1 pass done", shown, re.M), shown


def test_the_run_readers_copy_of_the_conversation_key_matches_the_state() -> None:
    from graphflow.checkpoint import stored
    from graphflow.state import MESSAGES, MODEL_CALLS

    # stored.py keeps its own copies so `runs` skips LangChain
    assert (stored._MESSAGES, stored._MODEL_CALLS) == (MESSAGES, MODEL_CALLS)
