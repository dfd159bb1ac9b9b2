"""A run another live process holds: shown as running there, and no action on it is taken here.

The holder is a real second process running the `held` team on the same SQLite store (it holds
the thread's lease until the test releases it), as `graphflow run` in a terminal would.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from graphflow.ui import create_app
from tests.support.processes import marked_pids, wait_gone
from tests.ui import ui_targets
from tests.ui.ui_support import TARGET_KEY, Served

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # a guard against a hang, never a timing assertion
TIMEOUT = 60_000

_WORKER = (
    "import sys\n"
    "from tests.ui import ui_targets\n"
    "ui_targets.held().invoke('go', thread_id=sys.argv[2], checkpointer=sys.argv[1],\n"
    f"    config={{'metadata': {{{TARGET_KEY!r}: 'held'}}}})\n"
)


class Holder:
    """The second process: `pid`, and `release()` to let its run finish."""

    def __init__(self, url: str, thread: str, here: Path) -> None:
        self.ready, self.go = here / "ready", here / "go"
        self.mark = f"ui-lease-{uuid.uuid4().hex[:8]}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHFLOW_")}
        env.update(
            PYTHONPATH=str(ROOT),
            GF_UI_READY=str(self.ready),
            GF_UI_GO=str(self.go),
            GF_TEST_MARK=self.mark,
        )
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER, url, thread], env=env)
        deadline = time.monotonic() + WAIT
        while not self.ready.exists():  # its first agent runs: it holds the lease
            assert self.proc.poll() is None, "the holder process ended early"
            assert time.monotonic() < deadline, "the holder never started its run"
            time.sleep(0.05)
        self.pid = self.proc.pid

    def release(self) -> None:
        self.go.write_text("1")
        assert self.proc.wait(timeout=WAIT) == 0

    def close(self) -> None:
        self.go.write_text("1")
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=WAIT)
        assert wait_gone(self.mark) == []


@pytest.fixture
def held(store: str, tmp_path: Path) -> Iterator[Holder]:
    holder = Holder(store, "held-1", tmp_path)
    try:
        yield holder
    finally:
        holder.close()


@pytest.fixture
def served_held(store: str, targets: dict[str, Any]) -> Iterator[Served]:
    with Served(create_app({**targets, "held": ui_targets.held()}, store)) as server:
        yield server


def call(url: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_a_run_of_another_process_is_shown_there_and_refused_here(held, served_held):
    base = served_held.url
    where = f"pid {held.pid} on host {socket.gethostname()}"
    assert marked_pids(held.mark) == [held.pid]
    status, page = call(f"{base}/api/runs")
    row = next(r for r in page["runs"] if r["thread_id"] == "held-1")
    assert row["status"] == "running" and row["agent"] == "holder"
    assert row["owner"] == {"host": socket.gethostname(), "pid": held.pid, "text": where}
    status, run = call(f"{base}/api/run/held-1")
    assert status == 200 and run["owner"]["pid"] == held.pid and run["live"] is False
    for path, body in (
        ("/api/run/held-1/resume", {}),
        ("/api/runs", {"target": "held", "input": "again", "thread_id": "held-1"}),
    ):
        status, refused = call(base + path, body)
        assert status == 409, refused
        assert (
            f"running in {where}" in refused["error"] and "one run per thread" in refused["error"]
        )
    status, refused = call(f"{base}/api/run/held-1/stop", {})
    assert status == 409 and f"kill {held.pid}" in refused["error"]
    held.release()  # the holder finishes its run: it is an ordinary finished run again
    status, run = call(f"{base}/api/run/held-1")
    assert run["status"] == "done" and run["owner"] is None
    assert {a["name"]: a["status"] for a in run["agents"]}["then"] == "done"


def test_the_pages_show_the_holder_and_offer_no_action(held, served_held, browser):
    where = f"pid {held.pid} on host {socket.gethostname()}"
    page = browser.new_page()
    page.goto(served_held.url + "/")
    row = page.locator('tr[data-thread="held-1"]')
    expect(row.locator(".status")).to_have_text("running", timeout=TIMEOUT)
    expect(row.locator(".owner")).to_have_text("in " + where)
    page.goto(served_held.url + "/runs/held-1")
    expect(page.locator("#owner")).to_contain_text(f"Running in {where}", timeout=TIMEOUT)
    for button in ("#resume", "#stop"):
        expect(page.locator(button)).to_be_visible()
        expect(page.locator(button)).to_be_disabled()
    held.release()  # the page follows the store: the run ends in the other process
    expect(page.locator("#status")).to_have_text("done", timeout=TIMEOUT)
    expect(page.locator("#owner")).to_have_text("")
    expect(page.locator("#stop")).to_be_hidden()
    page.close()
