"""Observation masking in a 30-round scripted ReAct run: what the model is sent at each call."""

from __future__ import annotations

import json

import pytest
from context_helpers import RESULT_CHARS, big_result, placeholders, rounds_so_far, web_search
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore

from graphflow import ReactAgent
from graphflow.context import (
    ContextStats,
    DirectoryOffload,
    HybridContext,
    ObservationMasking,
    OffloadLocation,
)
from graphflow.exceptions import OffloadKeyError
from graphflow.testing import ScriptedChatModel, tool_call

KEEP = 10
RECALL_AT = {12: "obs_2", 20: "../../etc/passwd", 21: "obs_999"}


def _script(messages, n):
    """Round r (the r-th call) searches q<r>, except the recall rounds; call 30 answers."""
    r = rounds_so_far(messages)
    if r in RECALL_AT:
        return tool_call("recall_observation", {"id": RECALL_AT[r]})
    if r < 30:
        return tool_call("web_search", {"query": f"q{r}"})
    return "The Pura X has a 16:10 outer screen."


def _agent(model, policy):
    return ReactAgent(
        name="researcher",
        model=model,
        tools=[web_search],
        context=policy,
        max_iterations=40,
    )


def _expected_masked(call: int) -> list[int]:
    """Rounds whose results are masked at model call `call` (rounds 0..call-1 exist)."""
    short = {20, 21}  # the forged and unknown recalls return short errors, never masked
    return [r for r in range(call - KEEP) if r not in short]


def test_thirty_rounds_masked_call_by_call():
    model = ScriptedChatModel(fn=_script)
    agent = _agent(model, ObservationMasking(keep_last=KEEP))
    result = agent.invoke("Research the Pura X.", thread_id="t30")
    assert result["messages"][-1].content == "The Pura X has a 16:10 outer screen."
    assert model.calls == 31

    for call, request in enumerate(model.requests):
        assert rounds_so_far(request) == call
        masked = _expected_masked(call)
        shown = placeholders(request)
        assert len(shown) == len(masked), f"call {call}"
        expected = []
        for r in masked:
            if r == 12:
                head = f'[recall_observation result ({RESULT_CHARS:,} chars) omitted — recall_observation("obs_2")]'
            else:
                head = f'[web_search result ({RESULT_CHARS:,} chars) omitted — recall_observation("obs_{r + 1}")]'
            expected.append(head)
        assert [p.split("]")[0] + "]" for p in shown] == expected, f"call {call}"
        # the newest KEEP rounds are whole; reasoning and calls are never masked
        tools = [m for m in request if isinstance(m, ToolMessage)]
        for message in tools[max(0, call - KEEP) :]:
            assert "graphflow_masked" not in message.additional_kwargs
        assert ("recall_observation" in model.request_tools[call]) == bool(masked)

    first = placeholders(model.requests[11])[0]
    assert first == (
        f'[web_search result ({RESULT_CHARS:,} chars) omitted — recall_observation("obs_1")] '
        "Gist: Findings for q0: the Pura X has a 16:10 outer screen."
    )

    history = agent.get_state("t30").values["messages"]
    results = [m for m in history if isinstance(m, ToolMessage)]
    # recall returns the exact original
    assert results[12].content == big_result("q1") == results[1].content
    assert results[12].status == "success"
    # a forged id and an unknown id are rejected, the run goes on
    assert results[20].status == "error" and "not an observation id" in results[20].content
    assert results[21].status == "error" and "no observation 'obs_999'" in results[21].content
    # the checkpointed history keeps every original
    for r, message in enumerate(results):
        if r not in RECALL_AT:
            assert message.content == big_result(f"q{r}")
    stats = ContextStats.from_state(agent.get_state("t30"))
    assert stats.model_calls == 31
    assert stats.masking_fired == 31 - 11
    assert stats.masked_results == len(_expected_masked(30))
    assert stats.tokens_saved > 0 and stats.pair_repairs == 0


def test_a_recall_cannot_read_another_threads_observations():
    policy = ObservationMasking(keep_last=1, min_chars=10)  # one policy, one in-memory store

    def owner(messages, n):
        r = rounds_so_far(messages)
        return tool_call("web_search", {"query": f"secret{r}"}) if r < 3 else "done"

    def thief(messages, n):
        r = rounds_so_far(messages)
        return tool_call("recall_observation", {"id": "obs_1"}) if r < 1 else "done"

    _agent(ScriptedChatModel(fn=owner), policy).invoke("go", thread_id="owner")
    other = _agent(ScriptedChatModel(fn=thief), policy)
    other.invoke("go", thread_id="thief")
    [answer] = [
        m for m in other.get_state("thief").values["messages"] if isinstance(m, ToolMessage)
    ]
    assert answer.status == "error" and "no observation 'obs_1'" in answer.content
    assert "secret" not in answer.content


def test_small_results_and_messages_without_history_stay_whole():
    @tool
    def tiny(query: str) -> str:
        """Tiny answers."""
        return "ok"

    def script(messages, n):
        r = rounds_so_far(messages)
        return tool_call("tiny", {"query": str(r)}) if r < 5 else "done"

    model = ScriptedChatModel(fn=script)
    agent = ReactAgent(name="a", model=model, tools=[tiny], context=ObservationMasking(keep_last=1))
    agent.invoke("go", thread_id="t")
    assert all(not placeholders(r) for r in model.requests)
    assert all("recall_observation" not in t for t in model.request_tools)


def test_originals_go_to_the_runs_store():
    store = InMemoryStore()
    model = ScriptedChatModel(
        fn=lambda m, n: (
            tool_call("web_search", {"query": f"q{rounds_so_far(m)}"})
            if rounds_so_far(m) < 4
            else "done"
        )
    )
    agent = _agent(model, HybridContext(ObservationMasking(keep_last=2)))
    graph = agent.compile(store=store)
    graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "s1"}})
    items = store.search(("graphflow_context",), limit=100)
    assert sorted(i.key for i in items) == ["obs_1", "obs_2"]
    by_key = {i.key: i.value for i in items}
    assert by_key["obs_1"]["content"] == big_result("q0")
    assert by_key["obs_1"]["tool"] == "web_search" and by_key["obs_1"]["agent"] == "researcher"


def test_directory_offload_end_to_end(tmp_path):
    def script(messages, n):
        r = rounds_so_far(messages)
        if r == 4:
            return tool_call("recall_observation", {"id": "obs_2"})
        return tool_call("web_search", {"query": f"q{r}"}) if r < 5 else "done"

    model = ScriptedChatModel(fn=script)
    agent = _agent(model, ObservationMasking(keep_last=2, offload=tmp_path / "obs"))
    agent.invoke("go", thread_id="d1")
    files = sorted(p.name for p in (tmp_path / "obs").rglob("*.json"))
    assert files == ["obs_1.json", "obs_2.json", "obs_3.json"]
    [path] = [p for p in (tmp_path / "obs").rglob("obs_2.json")]
    assert json.loads(path.read_text())["content"] == big_result("q1")
    recalled = [m for m in agent.get_state("d1").values["messages"] if isinstance(m, ToolMessage)][
        4
    ]
    assert recalled.content == big_result("q1")


@pytest.mark.parametrize(
    "key",
    ["../../etc/passwd", "obs_1/../../x", "obs_0", "obs_-1", "OBS_1", "obs_1.json", "", None, 17],
)
def test_forged_keys_never_touch_the_directory(tmp_path, key):
    offload = DirectoryOffload(tmp_path / "root")
    where = OffloadLocation(thread_id="t", scope="")
    with pytest.raises(OffloadKeyError, match="not an observation id"):
        offload.get(where, key)
    with pytest.raises(OffloadKeyError):
        offload.put(where, key, {"content": "x"})
    assert not (tmp_path / "root").exists()


def test_thread_ids_cannot_escape_the_directory(tmp_path):
    offload = DirectoryOffload(tmp_path / "root")
    for thread in ("../../outside", "/etc", "a/../../b"):
        offload.put(OffloadLocation(thread_id=thread, scope="x|y"), "obs_1", {"content": thread})
    written = list((tmp_path / "root").rglob("*.json"))
    assert len(written) == 3
    assert all(p.resolve().is_relative_to((tmp_path / "root").resolve()) for p in written)
    assert list(tmp_path.iterdir()) == [tmp_path / "root"]


def test_invalid_settings_are_rejected():
    with pytest.raises(ValueError, match="keep_last=0"):
        ObservationMasking(keep_last=0)
    with pytest.raises(ValueError, match="min_chars"):
        ObservationMasking(min_chars=-1)


def test_a_policy_in_hooks_works_like_context():
    def script(messages, n):
        r = rounds_so_far(messages)
        if r == 3:
            return tool_call("recall_observation", {"id": "obs_1"})
        return tool_call("web_search", {"query": f"q{r}"}) if r < 4 else "done"

    model = ScriptedChatModel(fn=script)
    agent = ReactAgent(
        name="a", model=model, tools=[web_search], hooks=[ObservationMasking(keep_last=1)]
    )
    agent.invoke("go", thread_id="h")
    assert [len(placeholders(r)) for r in model.requests] == [0, 0, 1, 2, 3]
    recalled = [m for m in agent.get_state("h").values["messages"] if isinstance(m, ToolMessage)][3]
    assert recalled.content == big_result("q0")
