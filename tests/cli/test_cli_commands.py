"""`graphflow run / runs / show / resume / approve / draw / schema`: output and exit codes."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from graphflow.events import event_from_json


def _outputs(stdout: str) -> dict:
    return json.loads(stdout[stdout.index("\n{") + 1 :] if not stdout.startswith("{") else stdout)


def test_run_plain_then_runs_show_and_exit_codes(app_dir: Path, run_cli, env_for) -> None:
    done = run_cli(app_dir, "run", "cli_app.py:app", "hello", "--thread-id", "t1", "--plain")
    assert done.returncode == 0, done.stderr
    assert "thread t1" in done.stderr
    lines = done.stdout.splitlines()
    assert "[app] started SequentialAgent" in lines
    assert any(line.startswith("[app/shout] done: completed") for line in lines)
    assert _outputs(done.stdout) == {"loud": "HELLO", "final": "HELLO!"}  # what the agents wrote

    runs = run_cli(app_dir, "runs")
    assert runs.returncode == 0, runs.stderr
    header, row = runs.stdout.splitlines()[:2]
    assert header.split()[:3] == ["thread", "agent", "status"]
    assert row.split()[:3] == ["t1", "app", "done"]

    show = run_cli(app_dir, "show", "t1")
    assert show.returncode == 0, show.stderr
    assert "thread t1: done" in show.stdout and "final = HELLO!" in show.stdout
    assert "input: hello" in show.stdout and " \n" not in show.stdout

    finished = run_cli(app_dir, "resume", "t1")
    assert finished.returncode == 2 and "nothing to resume" in finished.stderr
    assert "Traceback" not in finished.stderr


def test_run_json_lines_are_events(app_dir: Path, run_cli, env_for) -> None:
    done = run_cli(
        app_dir, "--checkpointer", "memory:", "run", "cli_app.py:app", '{"input": "hi"}', "--json"
    )
    assert done.returncode == 0, done.stderr
    events = [event_from_json(line) for line in done.stdout.splitlines()]
    assert events[0].type == "RunStarted" and events[-1].type == "RunFinished"
    assert events[-1].state["final"] == "HI!"
    assert [e.seq for e in events] == list(range(len(events)))
    assert {e.thread_id for e in events} == {events[0].thread_id}


def test_bad_usage_is_one_line_and_exit_2(app_dir: Path, run_cli, env_for) -> None:
    cases = [
        (["run", "cli_app.py:missing", "x"], "has no attribute 'missing'"),
        (["run", "cli_app.py:not_an_agent", "x"], "not a graphflow Agent"),
        (["run", "no_such_module_q:app", "x"], "cannot import module 'no_such_module_q'"),
        (["run", "nofile.py:app", "x"], "no file nofile.py"),
        (["run", "cli_app.py:app", "{oops"], "not valid"),
        (["run", "cli_app.py:app", "  "], "the input is empty"),
        (["run", "no-colon", "x"], "should look like"),
        (["runs"], "no run store at runs.db"),
        (["show", "ghost"], "no run store"),
        (["resume", "cli_app.py:app", "ghost", "--checkpointer", "memory:"], "ghost"),
        (["run", "cli_app.py:app", "x", "--thread-id", "t", "--checkpointer", "bogus://"], "bogus"),
    ]
    for args, says in cases:
        result = run_cli(app_dir, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert says in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2
    assert not (app_dir / "runs.db").exists()  # a listing never creates a store
    debug = run_cli(app_dir, "--debug", "run", "cli_app.py:app", "x", "--checkpointer", "bogus://")
    assert "Traceback" in debug.stderr
    usage = run_cli(app_dir, "run")
    assert usage.returncode == 2


def test_options_before_and_after_the_subcommand(app_dir: Path, run_cli, env_for) -> None:
    db = f"sqlite:///{app_dir}/other.db"
    before = run_cli(
        app_dir, "--checkpointer", db, "run", "cli_app.py:app", "a", "--thread-id", "x1", "--plain"
    )
    after = run_cli(
        app_dir, "run", "cli_app.py:app", "b", "--thread-id", "x2", "--checkpointer", db, "--plain"
    )
    assert before.returncode == after.returncode == 0
    listed = run_cli(app_dir, "runs", "--checkpointer", db).stdout
    assert "x1" in listed and "x2" in listed


def test_resume_after_a_killed_run_does_not_repeat_finished_steps(
    app_dir: Path, run_cli, env_for
) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "graphflow.cli",
            "run",
            "cli_app.py:app",
            "hey",
            "--thread-id",
            "k1",
            "--plain",
        ],
        cwd=app_dir,
        env=env_for(app_dir, GF_TEST_SLOW="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            if (app_dir / "slow_started").exists():
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the slow step never started")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    listed = run_cli(app_dir, "runs").stdout
    assert "k1" in listed and "crashed" in listed  # no live process holds it
    shown = run_cli(app_dir, "show", "k1").stdout
    assert "thread k1: crashed" in shown and "resume with: graphflow resume k1" in shown
    assert re.search(r"^  mark +crashed", shown, re.M)  # the agent it stopped in
    resumed = run_cli(app_dir, "resume", "k1", "--plain")
    assert resumed.returncode == 0, resumed.stderr
    assert _outputs(resumed.stdout)["final"] == "HEY!"
    assert (app_dir / "shout_calls").read_text().count("x") == 1  # shout ran once, before the kill


def test_interrupt_exit_3_then_approve(app_dir: Path, run_cli, env_for) -> None:
    paused = run_cli(app_dir, "run", "cli_app.py:billing", "pay", "--thread-id", "p1", "--plain")
    assert paused.returncode == 3, paused.stderr
    assert "waiting for an answer" in paused.stderr and "graphflow approve p1" in paused.stderr
    assert not (app_dir / "payments").exists()
    show = run_cli(app_dir, "show", "p1")
    assert "interrupted" in show.stdout and "tool_approval" in show.stdout
    approved = run_cli(app_dir, "approve", "p1", "--plain", stdin="a\n")
    assert approved.returncode == 0, approved.stderr
    assert "payer wants to call pay" in approved.stderr
    assert _outputs(approved.stdout)["receipt"] == "done: paid 5"
    assert (app_dir / "payments").read_text() == "5\n"
    # the continued run still knows its target: show and runs need only the thread
    shown = run_cli(app_dir, "show", "p1")
    assert shown.returncode == 0 and "thread p1: done" in shown.stdout, shown.stderr
    assert "receipt = done: paid 5" in shown.stdout
    assert run_cli(app_dir, "runs").stdout.splitlines()[1].split()[:3] == ["p1", "billing", "done"]


def test_a_run_continued_from_python_keeps_its_target(app_dir: Path, run_cli, monkeypatch) -> None:
    paused = run_cli(app_dir, "run", "cli_app.py:billing", "pay", "--thread-id", "py1", "--plain")
    assert paused.returncode == 3, paused.stderr
    monkeypatch.syspath_prepend(str(app_dir))
    import cli_app

    store = f"sqlite:///{app_dir / 'runs.db'}"
    cli_app.billing.resume("py1", {"decision": "approve"}, checkpointer=store)
    cli_app.billing.invoke("pay", thread_id="py2", checkpointer=store)  # never run by the CLI
    untold = run_cli(app_dir, "show", "py2")
    assert untold.returncode == 2 and "name its target: graphflow show TARGET py2" in untold.stderr
    told = run_cli(app_dir, "show", "cli_app.py:billing", "py2")
    assert told.returncode == 0 and "thread py2: interrupted" in told.stdout, told.stderr
    shown = run_cli(app_dir, "show", "py1")
    assert shown.returncode == 0, shown.stderr
    assert "thread py1: done" in shown.stdout and "receipt = done: paid 5" in shown.stdout


def test_a_closed_stdout_stops_quietly(app_dir: Path, env_for) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphflow.cli", "run", "cli_app.py:story", "x", "--plain"],
        cwd=app_dir,
        env=env_for(app_dir, GRAPHFLOW_CHECKPOINTER="memory:"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith("[story] started")
    proc.stdout.close()  # like `graphflow run ... | head -1`
    code = proc.wait(timeout=60)
    err = proc.stderr.read()
    assert code == 1 and "stdout was closed; stopped" in err, err
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_a_failed_run_is_exit_1_then_resumes(app_dir: Path, run_cli, env_for) -> None:
    failed = run_cli(app_dir, "run", "cli_app.py:fragile", "x", "--thread-id", "f1", "--plain")
    assert failed.returncode == 1, failed.stderr
    assert "[fragile/store] failed: RuntimeError: the disk is full" in failed.stdout
    lines = failed.stderr.strip().splitlines()
    assert lines[-2] == "graphflow: RuntimeError: the disk is full (--debug shows the traceback)"
    assert lines[-1] == "graphflow: the run can continue: graphflow resume f1"
    shown = run_cli(app_dir, "show", "f1").stdout
    assert "thread f1: failed" in shown and "the disk is full" in shown
    assert re.search(r"^  store +failed", shown, re.M)
    resumed = run_cli(app_dir, "resume", "f1", "--plain", GF_TEST_FIXED="1")
    assert resumed.returncode == 0, resumed.stderr
    assert _outputs(resumed.stdout) == {"loud": "X", "stored": "stored"}
    assert (app_dir / "shout_calls").read_text().count("x") == 1  # prep did not run again


def test_reject_with_resume_answer(app_dir: Path, run_cli, env_for) -> None:
    assert (
        run_cli(
            app_dir, "run", "cli_app.py:billing", "pay", "--thread-id", "p2", "--plain"
        ).returncode
        == 3
    )
    bad = run_cli(app_dir, "resume", "p2", "--answer", "{nope")
    assert bad.returncode == 2 and "--answer is not valid JSON" in bad.stderr
    answer = json.dumps({"decision": "reject", "reason": "too much"})
    rejected = run_cli(app_dir, "resume", "p2", "--answer", answer)  # not a TTY: plain lines
    assert rejected.returncode == 0, rejected.stderr
    assert "[billing/payer] tool pay → error: " in rejected.stdout
    assert "too much" in _outputs(rejected.stdout)["receipt"]
    assert not (app_dir / "payments").exists()


def test_spec_targets_draw_and_schema(app_dir: Path, run_cli, env_for) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    spec = str(examples / "competitive_analysis.yaml")
    ran = run_cli(app_dir, "--checkpointer", "memory:", "run", spec, "Pura X", "--plain")
    assert ran.returncode == 0, ran.stderr
    assert _outputs(ran.stdout)["review_feedback"] == "APPROVE"
    drawn = run_cli(app_dir, "draw", spec)
    from_py = run_cli(app_dir, "draw", str(examples / "competitive_analysis.py") + ":pipeline")
    assert drawn.returncode == 0 and drawn.stdout == from_py.stdout and "writer" in drawn.stdout
    out = app_dir / "team.json"
    assert run_cli(app_dir, "draw", spec, "-f", "json", "-o", str(out)).returncode == 0
    assert json.loads(out.read_text())["nodes"]
    schema = run_cli(app_dir, "schema")
    assert json.loads(schema.stdout)["$defs"]["ReactAgent"]["properties"]["instruction"]
