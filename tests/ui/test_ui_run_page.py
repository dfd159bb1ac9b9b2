"""The run page's timeline, agent panel and checkpoint diff: JSON API and Chromium."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import expect
from starlette.testclient import TestClient

from graphflow.ui import create_app
from graphflow.ui._timeline import events_timeline
from tests.context.context_helpers import RESULT_CHARS
from tests.ui import run_targets
from tests.ui.test_ui_browser import open_page  # (every request it makes is recorded)
from tests.ui.ui_support import Served

TIMEOUT = 60_000  # generous: only keeps a broken test from hanging
TARGET_KEY = "graphflow_target"


@pytest.fixture
def crew_store(tmp_path: Path) -> str:
    """A SQLite store holding one finished run of the crew team (`crew-1`)."""
    run_targets.STREAM_GATE.clear()
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    run_targets.crew().invoke(
        "go", thread_id="crew-1", checkpointer=url, config={"metadata": {TARGET_KEY: "crew"}}
    )
    return url


@pytest.fixture
def client(crew_store: str) -> Iterator[TestClient]:
    with TestClient(
        create_app(run_targets.targets(), crew_store), base_url="http://127.0.0.1"
    ) as c:
        yield c
    run_targets.STREAM_GATE.set()


@pytest.fixture
def crew_served(crew_store: str) -> Iterator[Served]:
    with Served(create_app(run_targets.targets(), crew_store)) as server:
        yield server
    run_targets.STREAM_GATE.set()


def rows(client: TestClient, thread: str) -> list[dict[str, Any]]:
    return client.get(f"/api/run/{thread}/timeline").json()["invocations"]


def detail(client: TestClient, thread: str, row: dict[str, Any]) -> dict[str, Any]:
    found = client.get(f"/api/run/{thread}/invocations/{quote(row['id'], safe='')}")
    assert found.status_code == 200, found.text
    return found.json()


# -- the JSON API -----------------------------------------------------------------------------------


def test_the_timeline_shows_each_loop_pass_and_each_branch(client):
    found = rows(client, "crew-1")
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for row in found:
        by_agent.setdefault(row["agent"], []).append(row)
    assert [r["path"] for r in found][0] == ["crew"]
    assert sorted(by_agent) == ["checker", "crew", "fan", "refine", "researcher", "setup", "writer"]
    writers = by_agent["writer"]
    assert [w["iteration"] for w in writers] == [0, 1]  # two passes of the loop
    (refine,) = by_agent["refine"]
    assert {w["parent"] for w in writers} == {refine["id"]} and refine["loop_passes"] == 2
    (checker,), (researcher,), (fan,) = by_agent["checker"], by_agent["researcher"], by_agent["fan"]
    assert (checker["branch"], researcher["branch"]) == ("checker", "researcher")
    assert checker["parent"] == researcher["parent"] == fan["id"]
    assert (checker["model_calls"], checker["tool_calls"]) == (3, 2)
    assert (researcher["model_calls"], researcher["tool_calls"]) == (4, 3)
    assert (fan["model_calls"], fan["tool_calls"]) == (7, 5)  # its branches', summed
    for row in found:
        assert row["status"] == "done" and row["start"] <= row["end"]
        parent = next((p for p in found if p["id"] == row["parent"]), None)
        if parent is not None:
            assert parent["start"] <= row["start"] and row["end"] <= parent["end"]
    assert writers[0]["end"] <= writers[1]["start"]  # passes one after the other


def test_an_invocation_shows_its_instruction_tool_calls_answer_and_writes(client):
    found = rows(client, "crew-1")
    checker = detail(client, "crew-1", next(r for r in found if r["agent"] == "checker"))
    assert checker["instruction"] == "Check the draft on cats: draft 1 about cats"
    bad, good = checker["tool_calls"]
    assert (bad["name"], bad["args"], bad["status"]) == ("lookup", {"code": "bad"}, "error")
    assert bad["error_type"] == "RESOURCE_NOT_FOUND" and "no such code: bad" in bad["error"]
    assert (good["result"], good["status"]) == ("code ok7 is fine", "success")
    assert checker["answer"] == "checked" and checker["writes"] == {"check": "checked"}
    handed = [m["content"] for m in checker["messages"] if m["role"] == "handed"]
    assert handed == ["go", "draft 0 about cats", "draft 1 about cats"]
    first, second = (
        detail(client, "crew-1", r) for r in found if r["agent"] == "writer"
    )  # each pass its own instruction and write
    assert first["instruction"] == second["instruction"] == "Write about cats."
    assert first["writes"]["draft"] == "draft 0 about cats"  # (and the loop's pass counter)
    assert second["writes"]["draft"] == "draft 1 about cats"
    setup = detail(client, "crew-1", next(r for r in found if r["agent"] == "setup"))
    assert setup["writes"] == {"topic": "cats"} and setup["instruction"] is None
    missing = client.get("/api/run/crew-1/invocations/nope")
    assert missing.status_code == 404 and "no invocation" in missing.json()["error"]


def test_an_invocation_shows_what_its_masking_policy_masked(client):
    found = rows(client, "crew-1")
    researcher = detail(client, "crew-1", next(r for r in found if r["agent"] == "researcher"))
    context = researcher["context"]
    masked = context["last_call"]["masked"]
    # its fourth call: the results of the first two of three rounds were masked (keep_last=1)
    assert context["last_call"]["call"] == 3
    assert [(m["tool"], m["chars"]) for m in masked] == [("web_search", RESULT_CHARS)] * 2
    assert context["stats"]["masking_fired"] == 2
    calls = [c["id"] for c in researcher["tool_calls"]]
    assert [m["tool_call_id"] for m in masked] == calls[:2]
    checker = detail(client, "crew-1", next(r for r in found if r["agent"] == "checker"))
    assert checker["context"] is None  # no context policy


def test_the_diff_of_two_checkpoints(client):
    history = client.get("/api/run/crew-1/history").json()["checkpoints"]
    before = next(c for c in history if c["next"] == ["fan"])
    after = history[0]
    diff = client.get(
        "/api/run/crew-1/diff",
        params={"a": before["checkpoint_id"], "b": after["checkpoint_id"]},
    ).json()
    assert [a["key"] for a in diff["added"]] == ["check", "research"]
    assert diff["added"][0]["value"] == "checked" and diff["removed"] == []
    changed = {c["key"]: c for c in diff["changed"]}
    assert set(changed) == {"agent_status", "messages"}
    status = changed["agent_status"]
    assert "fan" not in status["before"] and status["after"]["fan"] == "completed"
    assert [k["key"] for k in status["keys"]["added"]] == ["checker", "crew", "fan", "researcher"]
    assert status["keys"]["same"] == ["refine", "setup", "writer"]
    messages = changed["messages"]["messages"]
    assert [m["message"]["content"] for m in messages["added"]] == ["checked", "researched"]
    assert messages["removed"] == [] and messages["kept"] == 3
    assert "draft" in diff["same"] and "topic" in diff["same"]
    assert (
        client.get("/api/run/crew-1/diff", params={"a": before["checkpoint_id"]}).status_code == 400
    )


def test_a_paused_tool_call_is_shown_pending(store, targets):
    with TestClient(create_app(targets, store), base_url="http://127.0.0.1") as c:
        (payer,) = rows(c, "pay-1")
        assert (payer["agent"], payer["status"], payer["end"]) == ("payer", "interrupted", None)
        shown = detail(c, "pay-1", payer)
        (call,) = shown["tool_calls"]
        assert (call["name"], call["args"], call["status"]) == ("pay", {"amount": 5}, "pending")
        assert [m["role"] for m in shown["messages"]] == ["handed", "own"]


def test_events_give_the_same_passes_and_branches():
    events = [
        e.to_json()
        for e in run_targets.crew().stream(
            "go", thread_id="ev-1", checkpointer="memory:", events=True
        )
    ]
    found = events_timeline(events)
    assert [(r.agent, r.iteration) for r in found if r.agent == "writer"] == [
        ("writer", 0),
        ("writer", 1),
    ]
    branches = {r.agent: r.branch for r in found if r.agent in ("checker", "researcher")}
    assert branches == {"checker": "checker", "researcher": "researcher"}
    assert all(r.status == "done" and r.source == "events" for r in found)
    checker = next(r for r in found if r.agent == "checker")
    assert (checker.model_calls, checker.tool_calls) == (3, 2)
    root = found[0]
    assert root.path == ["crew"] and root.tokens["input"] > 0  # counted when not reported
    assert root.tokens["input"] == sum(r.tokens["input"] for r in found if len(r.path) == 3) + sum(
        r.tokens["input"] for r in found if r.agent == "refine"
    ) - sum(r.tokens["input"] for r in found if r.agent == "writer")


def test_a_run_going_on_is_read_from_its_events_with_its_tokens(client):
    made = client.post(
        "/api/runs", json={"target": "streamer", "input": "tell", "thread_id": "s-1"}
    )
    assert made.status_code == 201
    deadline = time.monotonic() + 60
    while True:  # the model sent its first two words and waits
        found = rows(client, "s-1")
        if found and found[0]["source"] == "events":
            shown = detail(client, "s-1", found[0])
            if shown["model_calls"] and shown["model_calls"][0]["text"] == "Once upon ":
                break
        assert time.monotonic() < deadline, found
        time.sleep(0.05)
    assert found[0]["status"] == "running" and shown["model_calls"][0]["done"] is False
    run_targets.STREAM_GATE.set()
    while True:
        run = client.get("/api/run/s-1").json()
        if run["status"] == "done" and not run["live"]:
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    (teller,) = rows(client, "s-1")
    assert teller["source"] == "store" and teller["model_calls"] == 1
    assert detail(client, "s-1", teller)["answer"] == "Once upon a time there was a cat"


# -- in Chromium ----------------------------------------------------------------------------------


def test_browser_timeline_shows_loop_passes_and_parallel_branches(browser, crew_served):
    page, urls = open_page(browser, crew_served, "/runs/crew-1")
    writers = page.locator('tr.invocation[data-of="writer"]')
    expect(writers).to_have_count(2, timeout=TIMEOUT)
    expect(writers.nth(0)).to_have_attribute("data-iteration", "0")
    expect(writers.nth(1)).to_have_attribute("data-iteration", "1")
    expect(writers.nth(1)).to_contain_text("pass 2")
    for branch in ("checker", "researcher"):
        row = page.locator(f'tr.invocation[data-of="{branch}"]')
        expect(row).to_have_attribute("data-branch", branch)
        expect(row).to_contain_text(f"branch {branch}")
    expect(page.locator('tr.invocation[data-of="checker"] .status')).to_have_text("done")
    page.close()
    assert urls and all(u.startswith(crew_served.url + "/") for u in urls), urls


def test_browser_clicking_an_agent_in_the_drawing_opens_its_panel(browser, crew_served):
    page, urls = open_page(browser, crew_served, "/runs/crew-1")
    node = page.locator('#drawing-svg g.agent-node[data-agent="checker"]')
    expect(node).to_have_count(1, timeout=TIMEOUT)
    node.click()
    expect(page.locator("#inv-instruction")).to_have_text(
        "Check the draft on cats: draft 1 about cats", timeout=TIMEOUT
    )
    calls = page.locator('#inv-tools .tool-call[data-tool="lookup"]')
    expect(calls).to_have_count(2)
    expect(calls.nth(0)).to_contain_text('lookup({"code":"bad"})')
    expect(calls.nth(0)).to_contain_text("[RESOURCE_NOT_FOUND] LookupError: no such code: bad")
    expect(calls.nth(1)).to_contain_text("code ok7 is fine")
    expect(page.locator("#inv-writes")).to_contain_text("check")
    page.locator('#drawing-svg g.agent-node[data-agent="writer"]').click()
    expect(page.locator("#inv-instruction")).to_have_text("Write about cats.", timeout=TIMEOUT)
    expect(page.locator("#inv-agent")).to_have_text("crew › refine › writer")
    page.close()
    assert all(u.startswith(crew_served.url + "/") for u in urls), urls


def test_browser_shows_what_the_masking_policy_masked(browser, crew_served):
    page, urls = open_page(browser, crew_served, "/runs/crew-1")
    page.locator('tr.invocation[data-of="researcher"]').click(timeout=TIMEOUT)
    masked = page.locator("#inv-context .masked-result")
    expect(masked).to_have_count(2, timeout=TIMEOUT)
    expect(masked.nth(0)).to_contain_text(f"web_search result obs_1 ({RESULT_CHARS} chars)")
    expect(page.locator("#inv-context")).to_contain_text("masking fired 2×")
    page.close()
    assert all(u.startswith(crew_served.url + "/") for u in urls), urls


def test_browser_diff_of_two_checkpoints_shows_the_changed_keys(browser, crew_served):
    page, urls = open_page(browser, crew_served, "/runs/crew-1")
    expect(page.locator("#diff-a option")).to_have_count(5, timeout=TIMEOUT)
    before = page.locator("#diff-a option", has_text="next: fan").get_attribute("value")
    page.select_option("#diff-a", before)
    page.click("#diff-go")
    changed = page.locator('#diff .diff-changed[data-key="agent_status"]')
    expect(changed).to_contain_text('+ fan: "completed"', timeout=TIMEOUT)
    expect(page.locator('#diff .diff-added[data-key="check"]')).to_contain_text("checked")
    messages = page.locator('#diff .diff-changed[data-key="messages"]')
    expect(messages).to_contain_text("3 messages kept")
    expect(messages.locator(".diff-added")).to_have_count(2)
    page.close()
    assert all(u.startswith(crew_served.url + "/") for u in urls), urls


def test_browser_tokens_appear_while_the_run_streams(browser, crew_served):
    request = urllib.request.Request(
        crew_served.url + "/api/runs",
        data=json.dumps({"target": "streamer", "input": "tell", "thread_id": "s-2"}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        assert answer.status == 201
    page, urls = open_page(browser, crew_served, "/runs/s-2")
    expect(page.locator("#status")).to_have_text("running", timeout=TIMEOUT)
    page.locator('tr.invocation[data-of="teller"]').click(timeout=TIMEOUT)
    stream = page.locator("#inv-stream")
    expect(stream).to_have_text("Once upon ", timeout=TIMEOUT)  # the model waits at the gate
    expect(page.locator("#status")).to_have_text("running")
    run_targets.STREAM_GATE.set()  # from here the page follows by itself
    expect(page.locator("#status")).to_have_text("done", timeout=TIMEOUT)
    expect(page.locator("#invocation")).to_contain_text(
        "Once upon a time there was a cat", timeout=TIMEOUT
    )
    page.close()
    assert all(u.startswith(crew_served.url + "/") for u in urls), urls


def test_browser_an_answer_with_markup_is_text_in_the_timeline_panel(browser, served):
    from tests.ui import ui_targets

    page, urls = open_page(browser, served, "/runs/evil-1")
    page.locator('tr.invocation[data-of="evil"]').click(timeout=TIMEOUT)
    expect(page.locator("#inv-answer")).to_have_text(ui_targets.EVIL, timeout=TIMEOUT)
    expect(page.locator("#drawing-svg g.agent-node")).to_have_count(1, timeout=TIMEOUT)
    assert page.evaluate("window.pwned") is None
    assert page.locator("#invocation script, #invocation img, #drawing-svg script").count() == 0
    page.close()
    assert all(u.startswith(served.url + "/") for u in urls), urls
