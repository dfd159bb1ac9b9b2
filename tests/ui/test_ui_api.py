"""The UI's JSON API through Starlette's TestClient: listing, one run, actions, the token rule."""

from __future__ import annotations

import time
from typing import Any

import pytest
from starlette.testclient import TestClient

from graphflow.ui import create_app
from tests.ui import ui_targets


def wait_status(client: TestClient, thread: str, want: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        run = client.get(f"/api/run/{thread}").json()
        if run.get("status") == want and not run.get("live"):
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"{thread} stayed {run.get('status')}: {run}")
        time.sleep(0.05)


@pytest.fixture
def client(store: str, targets: dict[str, Any]) -> Any:
    with TestClient(create_app(targets, store), base_url="http://127.0.0.1") as c:
        yield c


def test_runs_list_pages_and_filters(client):
    data = client.get("/api/runs").json()
    rows = {r["thread_id"]: r for r in data["runs"]}
    assert set(rows) == {"pipe-1", "pay-1", "evil-1"}
    assert rows["pipe-1"]["status"] == "done" and rows["pipe-1"]["target"] == "pipe"
    assert rows["pay-1"]["status"] == "interrupted" and rows["pay-1"]["agent"] == "payer"
    assert [r["thread_id"] for r in data["runs"]] == ["evil-1", "pay-1", "pipe-1"]  # newest first
    assert data["total"] == 3 and data["store"].startswith("sqlite:///")
    only = client.get("/api/runs", params={"status": "interrupted"}).json()["runs"]
    assert [r["thread_id"] for r in only] == ["pay-1"]
    text = client.get("/api/runs", params={"q": "PIPE"}).json()["runs"]
    assert [r["thread_id"] for r in text] == ["pipe-1"]
    page = client.get("/api/runs", params={"offset": 1, "limit": 1}).json()
    assert [r["thread_id"] for r in page["runs"]] == ["pay-1"] and page["more"] is True
    last = client.get("/api/runs", params={"offset": 2, "limit": 1}).json()
    assert [r["thread_id"] for r in last["runs"]] == ["pipe-1"] and last["more"] is False


def test_one_run_agents_history_and_checkpoint(client):
    run = client.get("/api/run/pipe-1").json()
    agents = {a["name"]: a for a in run["agents"]}
    assert set(agents) == {"pipe", "first", "second"}
    assert {a["status"] for a in agents.values()} == {"done"}
    second = client.get("/api/run/pipe-1/agents/second").json()
    assert second["output_key"] == "b" and second["output"] == "A+B"
    history = client.get("/api/run/pipe-1/history").json()["checkpoints"]
    assert history[0]["step"] > history[-1]["step"]
    middle = next(c for c in history if c["next"] == ["second"])
    state = client.get(f"/api/run/pipe-1/checkpoints/{middle['checkpoint_id']}").json()
    assert state["values"]["a"] == "A" and "b" not in state["values"]
    svg = client.get("/api/run/pipe-1/drawing.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml") and b"<svg" in svg.content
    assert client.get("/api/run/nope").status_code == 404


def test_start_a_run_and_read_it(client):
    made = client.post("/api/runs", json={"target": "pipe", "input": "hi", "thread_id": "new-1"})
    assert made.status_code == 201 and made.json() == {"thread_id": "new-1"}
    run = wait_status(client, "new-1", "done")
    assert run["target"] == "pipe"
    listed = {r["thread_id"]: r for r in client.get("/api/runs").json()["runs"]}
    assert listed["new-1"]["target"] == "pipe"  # recorded like `graphflow run` records it
    again = client.post("/api/runs", json={"target": "nope", "input": "hi"})
    assert again.status_code == 404 and "unknown target" in again.json()["error"]


def test_approve_runs_the_tool_once_and_reject_does_not(client, store):
    run = client.get("/api/run/pay-1").json()
    (approval,) = run["approvals"]
    assert approval["value"]["tool"] == "pay" and approval["value"]["args"] == {"amount": 5}
    assert client.post("/api/run/pay-1/approve", json={"decision": "maybe"}).status_code == 400
    assert client.post("/api/run/pay-1/approve", json={"decision": "approve"}).status_code == 200
    wait_status(client, "pay-1", "done")
    assert ui_targets.PAID == [5]
    messages = client.get("/api/run/pay-1/agents/payer").json()["messages"]
    assert [m["type"] for m in messages] == ["ai", "tool", "ai"]
    assert messages[0]["tool_calls"] == [{"name": "pay", "args": {"amount": 5}}]
    assert messages[1]["content"] == "paid 5" and messages[1]["status"] == "success"
    assert messages[2]["content"] == "done: paid 5"
    refused = client.post("/api/run/pay-1/approve", json={"decision": "approve"})
    assert refused.status_code == 409 and ui_targets.PAID == [5]


def test_fork_edits_a_middle_checkpoint_into_a_new_thread(client):
    history = client.get("/api/run/pipe-1/history").json()["checkpoints"]
    middle = next(c for c in history if c["next"] == ["second"])
    made = client.post(
        "/api/run/pipe-1/fork",
        json={
            "checkpoint_id": middle["checkpoint_id"],
            "values": {"a": "EDITED"},
            "thread_id": "f1",
        },
    )
    assert made.status_code == 201, made.text
    wait_status(client, "f1", "done")
    assert client.get("/api/run/f1/agents/second").json()["output"] == "EDITED+B"
    assert client.get("/api/run/pipe-1/agents/second").json()["output"] == "A+B"
    assert client.get("/api/run/pipe-1/history").json()["checkpoints"] == history
    taken = client.post(
        "/api/run/pipe-1/fork", json={"checkpoint_id": middle["checkpoint_id"], "thread_id": "f1"}
    )
    assert taken.status_code == 409


def test_writes_need_json_and_same_origin(client):
    assert client.post("/api/runs", content="target=pipe").status_code == 415
    cross = client.post(
        "/api/runs", json={"target": "pipe", "input": "x"}, headers={"Origin": "http://evil.test"}
    )
    assert cross.status_code == 403


def test_other_hosts_are_refused_without_a_token(store, targets):
    with TestClient(create_app(targets, store), base_url="http://evil.test") as c:
        assert c.get("/api/runs").status_code == 400


def test_token_is_needed_on_every_request(store, targets):
    app = create_app(targets, store, token="s3cret")
    with TestClient(app, base_url="http://0.0.0.0:8765") as c:
        assert c.get("/api/runs").status_code == 401
        assert c.get("/").status_code == 401
        assert c.get("/static/app.js").status_code == 401
        assert c.get("/api/runs", params={"token": "wrong"}).status_code == 401
        assert c.get("/api/runs", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        page = c.get("/", params={"token": "s3cret"})
        assert page.status_code == 200  # sets the cookie the page's own requests carry
        assert c.get("/api/runs").status_code == 200


def test_no_secret_reaches_the_page(targets, tmp_path):
    url = "postgresql://user:hunter2@127.0.0.1:1/db"
    with TestClient(create_app(targets, url), base_url="http://127.0.0.1") as c:
        app_state = c.app.state.service  # type: ignore[attr-defined]
        assert "hunter2" not in app_state.store


def test_stop_a_run_then_resume_it(client):
    ui_targets.GATE.clear()
    made = client.post("/api/runs", json={"target": "gated", "input": "go", "thread_id": "g1"})
    assert made.status_code == 201
    deadline = time.monotonic() + 60
    while True:  # until `waiter` runs (blocked on the gate)
        agents = {a["name"]: a["status"] for a in client.get("/api/run/g1").json()["agents"]}
        if agents.get("waiter") == "running":
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert client.post("/api/run/g1/stop", json={}).status_code == 200
    stopped = client.get("/api/run/g1").json()
    assert stopped["live"] is False and stopped["status"] in ("failed", "crashed")
    assert stopped["agent"] == "waiter"
    assert client.post("/api/run/g1/stop", json={}).status_code == 409
    ui_targets.GATE.set()
    assert client.post("/api/run/g1/resume", json={}).status_code == 200
    done = wait_status(client, "g1", "done")
    assert {a["name"]: a["status"] for a in done["agents"]}["after"] == "done"
    assert client.get("/api/run/g1/agents/after").json()["output"] == "after opened"


def test_a_run_of_a_target_not_loaded_is_listed_as_such(store, targets):
    del targets["evil"]
    with TestClient(create_app(targets, store), base_url="http://127.0.0.1") as c:
        rows = {r["thread_id"]: r for r in c.get("/api/runs").json()["runs"]}
        assert rows["evil-1"]["target"] is None and rows["evil-1"]["status"] == "unreadable"
        assert "not loaded" in rows["evil-1"]["error"]
        assert rows["pipe-1"]["status"] == "done"
        assert c.get("/api/run/evil-1").status_code == 404
