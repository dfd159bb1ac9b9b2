"""The runs page's API: figures per run (started, duration, model calls, tokens), paging over a
long list read a page at a time, and approving a paused tool call with edited arguments."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from starlette.testclient import TestClient

from graphflow.ui import _runs, create_app
from tests.ui import ui_targets
from tests.ui.test_ui_api import wait_status
from tests.ui.ui_support import seed


@pytest.fixture
def client(store: str, targets: dict[str, Any]) -> Any:
    with TestClient(create_app(targets, store), base_url="http://127.0.0.1") as c:
        yield c


def rows(client: TestClient, **params: Any) -> dict[str, dict[str, Any]]:
    return {r["thread_id"]: r for r in client.get("/api/runs", params=params).json()["runs"]}


def test_rows_carry_started_duration_model_calls_and_tokens(client):
    listed = rows(client)
    pay = listed["pay-1"]  # paused at its tool call: one model call (10 tokens), no tool call
    assert (pay["model_calls"], pay["tool_calls"], pay["tokens"]) == (1, 0, 10)
    assert pay["status"] == "interrupted" and pay["owner"] is None
    started = datetime.fromisoformat(pay["started_at"])
    updated = datetime.fromisoformat(pay["updated_at"])
    assert started <= updated
    assert pay["duration_s"] == pytest.approx((updated - started).total_seconds(), abs=0.002)
    pipe = listed["pipe-1"]  # functions only: no model call, no token reported
    assert (pipe["model_calls"], pipe["tokens"]) == (0, None)
    assert client.post("/api/run/pay-1/approve", json={"decision": "approve"}).status_code == 200
    wait_status(client, "pay-1", "done")
    done = rows(client)["pay-1"]  # the answer after the tool: a second call, 7 more tokens
    assert (done["model_calls"], done["tool_calls"], done["tokens"]) == (2, 1, 17)
    assert done["started_at"] == pay["started_at"] and done["duration_s"] >= pay["duration_s"]


def test_pages_follow_the_thread_list_and_a_filter_reads_a_bounded_number(
    client, store, monkeypatch
):
    for i in range(6):
        seed(store, "pipe", f"more-{i}")
    first = client.get("/api/runs", params={"limit": 4}).json()
    assert [r["thread_id"] for r in first["runs"]] == [f"more-{i}" for i in (5, 4, 3, 2)]
    assert first["next_offset"] == 4 and first["total"] == 9 and first["read"] == 4
    second = client.get("/api/runs", params={"limit": 4, "offset": 4}).json()
    assert [r["thread_id"] for r in second["runs"]] == ["more-1", "more-0", "evil-1", "pay-1"]
    last = client.get("/api/runs", params={"limit": 4, "offset": 8}).json()
    assert [r["thread_id"] for r in last["runs"]] == ["pipe-1"] and last["next_offset"] is None
    monkeypatch.setattr(_runs, "SCAN", 5)  # a filter stops after reading SCAN threads
    scan = client.get("/api/runs", params={"status": "interrupted", "limit": 2}).json()
    assert scan["runs"] == [] and scan["read"] == 5 and scan["next_offset"] == 5
    on = client.get("/api/runs", params={"status": "interrupted", "offset": 5, "limit": 2})
    assert [r["thread_id"] for r in on.json()["runs"]] == ["pay-1"]
    target = client.get("/api/runs", params={"q": "PAYER"}).json()["runs"]  # the target's name
    assert [r["thread_id"] for r in target] == ["pay-1"]


def test_an_edited_tool_call_runs_once_with_the_new_arguments(client):
    (approval,) = client.get("/api/run/pay-1").json()["approvals"]
    bad = client.post("/api/run/pay-1/approve", json={"decision": "edit", "args": [9]})
    assert bad.status_code == 400 and "new arguments as a dict" in bad.json()["error"]
    other = client.post("/api/run/pay-1/approve", json={"decision": "approve", "id": "nope"})
    assert other.status_code == 409 and "no pending approval 'nope'" in other.json()["error"]
    assert ui_targets.PAID == []  # refused answers are not stored: the run still waits
    made = client.post(
        "/api/run/pay-1/approve",
        json={"decision": "edit", "args": {"amount": 9}, "id": approval["id"]},
    )
    assert made.status_code == 200, made.text
    wait_status(client, "pay-1", "done")
    assert ui_targets.PAID == [9]
    messages = client.get("/api/run/pay-1/agents/payer").json()["messages"]
    assert [m["content"] for m in messages[1:]] == ["paid 9", "done: paid 9"]


def test_a_rejected_call_does_not_run(client):
    made = client.post("/api/run/pay-1/approve", json={"decision": "reject", "reason": "no"})
    assert made.status_code == 200
    wait_status(client, "pay-1", "done")
    assert ui_targets.PAID == []
    tool = client.get("/api/run/pay-1/agents/payer").json()["messages"][1]
    assert tool["status"] == "error" and "rejected by a human reviewer: no" in tool["content"]
