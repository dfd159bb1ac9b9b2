"""The live view under a pseudo-terminal, and Ctrl-C: a clean stop that says how to resume."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path


def _spawn(app_dir: Path, env_for, *args: str, **env: str) -> tuple[subprocess.Popen, int]:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphflow.cli", *args],
        cwd=app_dir,
        env=env_for(app_dir, COLUMNS="120", LINES="40", TERM="xterm", **env),
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    return proc, leader


def _read(leader: int, until: float, *, stop: str | None = None) -> str:
    out = b""
    while time.monotonic() < until:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if stop and stop in out.decode("utf-8", "replace"):
                break
    return out.decode("utf-8", "replace")


def test_live_view_shows_agents_and_statuses(app_dir: Path, run_cli, env_for) -> None:
    proc, leader = _spawn(app_dir, env_for, "run", "cli_app.py:story", "tell", "--thread-id", "l1")
    try:
        screen = _read(leader, time.monotonic() + 60, stop="── final_text ──")
        assert proc.wait(timeout=60) == 0
        screen += _read(leader, time.monotonic() + 1)
    finally:
        os.close(leader)
    assert "thread l1" in screen
    for name in ("story", "writer", "polish"):
        assert name in screen
    assert "running" in screen and "waiting" in screen  # polish waits while writer runs
    assert "done" in screen and "completed" in screen
    assert "a short streamed answer" in screen  # the running agent's answer, streamed
    assert "\x1b[" in screen  # drawn with terminal control codes, not plain lines
    # the outputs, for reading: each key over its text as the agent wrote it
    assert "── text ──" in screen and "── final_text ──\r\npolished" in screen
    assert "agent_status" not in screen


def _plain_screen(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_live_view_shows_interrupted_and_failed_agents(app_dir: Path, env_for) -> None:
    proc, leader = _spawn(app_dir, env_for, "run", "cli_app.py:billing", "pay", "--thread-id", "l2")
    try:
        screen = _plain_screen(_read(leader, time.monotonic() + 60, stop="graphflow approve l2"))
        assert proc.wait(timeout=60) == 3
    finally:
        os.close(leader)
    assert re.search(r"payer +interrupted +waiting for an answer", screen), screen
    assert re.search(r"billing +interrupted", screen), screen  # and the agents around it

    proc, leader = _spawn(app_dir, env_for, "run", "cli_app.py:fragile", "x", "--thread-id", "l3")
    try:
        screen = _plain_screen(_read(leader, time.monotonic() + 60, stop="can continue"))
        assert proc.wait(timeout=60) == 1
    finally:
        os.close(leader)
    assert re.search(r"prep +done +completed", screen), screen
    assert re.search(r"store +failed +RuntimeError: the disk is full", screen), screen


def test_ctrl_c_stops_cleanly_and_the_run_resumes(app_dir: Path, run_cli, env_for) -> None:
    proc, leader = _spawn(
        app_dir, env_for, "run", "cli_app.py:app", "calm", "--thread-id", "c1", GF_TEST_SLOW="1"
    )
    try:
        for _ in range(600):
            if (app_dir / "slow_started").exists():
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        screen = _read(leader, time.monotonic() + 30, stop="Resume with")
        screen += _read(leader, time.monotonic() + 2)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    assert code == 130
    assert "graphflow: stopped thread c1 in app/mark. Resume with: graphflow resume c1" in screen
    final = _plain_screen(screen)
    assert re.search(r"mark +stopped", final) and re.search(r"app +stopped", final), final
    assert "Traceback" not in screen and "Exception ignored" not in screen
    # stopped on purpose, not crashed
    assert re.search(r"^c1 +app +stopped +mark", run_cli(app_dir, "runs").stdout, re.M)
    shown = run_cli(app_dir, "show", "c1").stdout
    assert "thread c1: stopped" in shown and re.search(r"^  mark +stopped", shown, re.M), shown
    # resume shows the same live view
    proc, leader = _spawn(app_dir, env_for, "resume", "c1")
    try:
        screen = _plain_screen(_read(leader, time.monotonic() + 60, stop="CALM!"))
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(leader)
    assert re.search(r"mark +done +completed", screen), screen
    assert "── final ──" in screen and "CALM!" in screen
