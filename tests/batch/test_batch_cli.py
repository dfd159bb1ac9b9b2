"""`graphflow batch`: a file of inputs, a results file, bad lines skipped, Ctrl-C and continue."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

APP = textwrap.dedent(
    """
    import asyncio, os
    from pathlib import Path
    from graphflow import FunctionAgent, ReactAgent, SequentialAgent
    from graphflow.testing import ScriptedChatModel

    LOG = Path(os.environ["BATCH_LOG"])

    def reply(messages, n):
        with LOG.open("a") as f:
            f.write("model\\n")
        return "summary: " + messages[-1].content

    async def check(state):
        await asyncio.sleep(float(os.environ.get("BATCH_DELAY", "0")))
        with LOG.open("a") as f:
            f.write("check " + state["input"] + "\\n")
        if state["input"] == os.environ.get("BATCH_FAIL"):
            raise RuntimeError("checker down for " + state["input"])
        return "ok " + state["input"]

    team = SequentialAgent(name="team", sub_agents=[
        ReactAgent(name="writer", model=ScriptedChatModel(fn=reply),
                   instruction="Summarise {input}.", output_key="summary"),
        FunctionAgent(name="checker", fn=check, output_key="verdict"),
    ])
    """
)


@pytest.fixture
def app(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "in.jsonl").write_text(
        '"Pura X"\n{"id": "p9", "input": "Pixel 9"}\n{broken\n\n"Galaxy"\n'
    )
    return tmp_path


def _env(app: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("GRAPHFLOW_CHECKPOINTER", None)
    env["BATCH_LOG"] = str(app / "log.txt")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _batch(app: Path, *more: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphflow.cli", "batch", "app.py:team", "in.jsonl",
         "--out", "out.jsonl", "--checkpointer", "sqlite:///runs.db", "--plain", *more],
        cwd=app, env=_env(app, **env), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _lines(app: Path) -> list[dict]:
    return [json.loads(line) for line in (app / "out.jsonl").read_text().splitlines()]


def _log(app: Path) -> list[str]:
    path = app / "log.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_a_batch_writes_one_line_per_input_and_reports_bad_lines(app: Path) -> None:
    done = _batch(app)
    assert done.returncode == 0, done.stderr
    assert "in.jsonl line 3: not valid JSON" in done.stderr
    assert "in.jsonl line 4: empty line" in done.stderr
    assert "Traceback" not in done.stderr
    rows = _lines(app)
    assert [r["id"] for r in rows] == ["0", "p9", "2"]
    assert [r["status"] for r in rows] == ["done"] * 3
    assert rows[1]["outputs"] == {"summary": "summary: Summarise Pixel 9.", "verdict": "ok Pixel 9"}
    assert rows[0]["usage"]["total_tokens"] > 0 and rows[0]["error"] is None
    assert rows[1]["thread"].endswith("/p9")
    assert _log(app).count("model") == 3

    again = _batch(app)
    assert again.returncode == 0, again.stderr
    assert [r["reused"] for r in _lines(app)] == [True, True, True]
    assert _log(app).count("model") == 3  # nothing ran again


def test_a_failed_input_exits_1_and_the_same_command_resumes_it(app: Path) -> None:
    failed = _batch(app, BATCH_FAIL="Pixel 9")
    assert failed.returncode == 1, failed.stderr
    rows = _lines(app)
    assert [r["status"] for r in rows] == ["done", "failed", "done"]
    assert "checker down for Pixel 9" in rows[1]["error"]
    assert "run the same command to resume the failed inputs" in failed.stderr
    fixed = _batch(app)
    assert fixed.returncode == 0, fixed.stderr
    assert [r["status"] for r in _lines(app)] == ["done"] * 3
    assert _log(app).count("model") == 3  # the writer's call before the failure was kept
    assert _log(app).count("check Pixel 9") == 2


def _runs(app: Path) -> dict[str, str]:
    """Thread → status, as `graphflow runs` lists the store."""
    listed = subprocess.run(
        [sys.executable, "-m", "graphflow.cli", "runs", "--checkpointer", "sqlite:///runs.db"],
        cwd=app, env=_env(app), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()[1:] if line.strip()]
    return {row[0]: row[2] for row in rows}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_marks_the_runs_in_flight_stopped_and_the_printed_command_continues(
    app: Path, sig: signal.Signals
) -> None:
    (app / "in.jsonl").write_text("".join(f'"item {i}"\n' for i in range(12)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphflow.cli", "batch", "app.py:team", "in.jsonl",
         "--out", "out.jsonl", "--checkpointer", "sqlite:///runs.db", "--plain",
         "--concurrency", "2", "--batch-id", "cc"],
        cwd=app, env=_env(app, BATCH_DELAY="0.3"), stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while _log(app).count("model") < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err
    stop = [line for line in err.splitlines() if "stopped" in line]
    assert len(stop) == 1 and stop[0].startswith("graphflow: stopped: "), err
    finished_before = len(_lines(app))
    assert finished_before < 12
    # the inputs that were running are listed `stopped` (on purpose), none `crashed`
    runs = _runs(app)
    stopped = sorted(t for t, status in runs.items() if status == "stopped")
    assert f"{len(stopped)} in flight marked stopped" in stop[0], (stop, runs)
    assert 1 <= len(stopped) <= 2, runs
    done = [t for t, status in runs.items() if status == "done"]
    assert len(done) >= finished_before and len(done) + len(stopped) == len(runs), runs
    done_before = set(done)

    # the printed command, run as printed, continues the batch
    command = stop[0].split("continue with: ", 1)[1].strip()
    assert "--batch-id cc" in command and "--concurrency 2" in command and "--plain" in command
    words = shlex.split(command)
    rest = subprocess.run(
        [sys.executable, "-m", "graphflow.cli", *words[words.index("batch") :]],
        cwd=app, env=_env(app), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert rest.returncode == 0, rest.stderr
    rows = _lines(app)
    assert [r["status"] for r in rows] == ["done"] * 12
    assert {r["thread"] for r in rows if r["reused"]} == done_before  # done: skipped
    assert set(_runs(app).values()) == {"done"}
    # completed model calls were kept: only the (at most 2) in flight at the stop ran again
    assert 12 <= _log(app).count("model") <= 14
    # each input's checker ran to completion once (a stopped one may have started twice)
    assert all(_log(app).count(f"check item {i}") == 1 for i in range(12))


def test_the_example_team_runs_over_a_products_file(tmp_path: Path) -> None:
    (tmp_path / "products.jsonl").write_text('"Huawei Pura X"\n"Pixel 9 Pro Fold"\n')
    env = _env(tmp_path)
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(key, None)
    done = subprocess.run(
        [sys.executable, "-m", "graphflow.cli", "batch",
         str(REPO / "examples" / "competitive_analysis.py") + ":pipeline", "products.jsonl",
         "--out", "results.jsonl", "--checkpointer", "sqlite:///runs.db", "--plain"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["done", "done"]
    assert "Pura X" in rows[0]["outputs"]["draft_article"]
