"""Observation masking in a 30-round scripted ReAct run: what the model is sent at each call."""

from __future__ import annotations

import itertools
import json

import pytest
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
    check_tool_pairs,
    count_tokens,
    token_counter,
)
from graphflow.exceptions import OffloadKeyError
from graphflow.testing import ScriptedChatModel
from tests.context.context_helpers import (
    RESULT_CHARS,
    big_result,
    placeholders,
    rounds_so_far,
    searching,
    web_search,
)

KEEP = 10
RECALL_AT = {12: "obs_2", 20: "../../etc/passwd", 21: "obs_999"}


# round r (the r-th call) searches q<r>, except the recall rounds; call 30 answers
_script = searching(30, recall_at=RECALL_AT, answer="The Pura X has a 16:10 outer screen.")


def _agent(model, policy):
    return ReactAgent(
        name="researcher",
        model=model,
        tools=[web_search],
        context=policy,
        max_iterations=40,
    )


SHORT = {20, 21}  # the forged and unknown recalls return short errors: never masked, never counted
RESULT_TOKENS = -(-RESULT_CHARS // 4)  # the scripted model is unknown: about 4 characters a token


def _expected_masked(call: int, keep_tokens: int | None) -> list[int]:
    """Rounds whose results are masked at model call `call` (rounds 0..call-1 exist).

    The newest KEEP rounds stay whole as far as their results fit in `keep_tokens`; the newest
    round always does.
    """
    kept: list[int] = []
    used = 0
    for r in reversed(range(max(0, call - KEEP), call)):
        size = 0 if r in SHORT else RESULT_TOKENS
        if kept and keep_tokens is not None and used + size > keep_tokens:
            break
        kept.append(r)
        used += size
    oldest_kept = min(kept, default=call)
    return [r for r in range(oldest_kept) if r not in SHORT]


@pytest.mark.parametrize("keep_tokens", [None, 2_000], ids=["ten-rounds", "token-budget"])
def test_thirty_rounds_masked_call_by_call(keep_tokens):
    model = ScriptedChatModel(fn=_script)
    agent = _agent(model, ObservationMasking(keep_last=KEEP, keep_tokens=keep_tokens))
    result = agent.invoke("Research the Pura X.", thread_id="t30")
    assert result["messages"][-1].content == "The Pura X has a 16:10 outer screen."
    assert model.calls == 31

    for call, request in enumerate(model.requests):
        assert rounds_so_far(request) == call
        masked = _expected_masked(call, keep_tokens)
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
        # the rounds after the masked ones are whole; reasoning and calls are never masked
        tools = [m for m in request if isinstance(m, ToolMessage)]
        for message in tools[max(masked, default=-1) + 1 :]:
            assert "graphflow_masked" not in message.additional_kwargs
        assert len([m for m in request if getattr(m, "tool_calls", None)]) == call
        assert ("recall_observation" in model.request_tools[call]) == bool(masked)
    # the budget keeps three 535-token results whole (a fourth would pass 2,000)
    first_masked = 11 if keep_tokens is None else 4
    assert [bool(placeholders(r)) for r in model.requests].index(True) == first_masked

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
    assert stats.masking_fired == 31 - first_masked
    assert stats.masked_results == len(_expected_masked(30, keep_tokens))
    assert stats.tokens_saved > 0 and stats.pair_repairs == 0


@pytest.mark.parametrize("kind", ["in-memory", "directory", "base-store"])
def test_a_recall_cannot_read_another_threads_observations(kind, tmp_path):
    offload = {"in-memory": None, "directory": tmp_path / "obs", "base-store": InMemoryStore()}
    # one policy, so one store, for both threads
    policy = ObservationMasking(keep_last=1, min_chars=10, offload=offload[kind])

    owner = searching(3, query="secret{}")
    thief = searching(1, recall_at={0: "obs_1"})
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

    model = ScriptedChatModel(fn=searching(5, tool="tiny"))
    agent = ReactAgent(name="a", model=model, tools=[tiny], context=ObservationMasking(keep_last=1))
    agent.invoke("go", thread_id="t")
    assert all(not placeholders(r) for r in model.requests)
    assert all("recall_observation" not in t for t in model.request_tools)


def test_originals_go_to_the_runs_store():
    store = InMemoryStore()
    model = ScriptedChatModel(fn=searching(4))
    agent = _agent(model, HybridContext(ObservationMasking(keep_last=2)))
    graph = agent.compile(store=store).graph
    graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "s1"}})
    items = store.search(("graphflow_context",), limit=100)
    assert sorted(i.key for i in items) == ["obs_1", "obs_2"]
    by_key = {i.key: i.value for i in items}
    assert by_key["obs_1"]["content"] == big_result("q0")
    assert by_key["obs_1"]["tool"] == "web_search" and by_key["obs_1"]["agent"] == "researcher"


def test_directory_offload_end_to_end(tmp_path):
    model = ScriptedChatModel(fn=searching(5, recall_at={4: "obs_2"}))
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
    with pytest.raises(ValueError, match="keep_tokens=-1"):
        ObservationMasking(keep_tokens=-1)


def test_a_policy_in_hooks_works_like_context():
    model = ScriptedChatModel(fn=searching(4, recall_at={3: "obs_1"}))
    agent = ReactAgent(
        name="a", model=model, tools=[web_search], hooks=[ObservationMasking(keep_last=1)]
    )
    agent.invoke("go", thread_id="h")
    assert [len(placeholders(r)) for r in model.requests] == [0, 0, 1, 2, 3]
    recalled = [m for m in agent.get_state("h").values["messages"] if isinstance(m, ToolMessage)][3]
    assert recalled.content == big_result("q0")


def test_the_token_budget_masks_large_results_early_and_keeps_small_ones_ten_rounds():
    sizes = {12: 12_000}  # round 12 fetches a 3,000-token page; the others 175-token notes

    @tool
    def fetch(query: str) -> str:
        """Fetch a page."""
        return big_result(query, sizes.get(int(query[1:]), 700))

    model = ScriptedChatModel(fn=searching(16, tool="fetch"))
    agent = ReactAgent(
        name="a", model=model, tools=[fetch], context=HybridContext(), max_iterations=30
    )

    agent.invoke("go", thread_id="t")

    def whole_rounds(request):
        results = [m for m in request if isinstance(m, ToolMessage)]
        return [r for r, m in enumerate(results) if "graphflow_masked" not in m.additional_kwargs]

    # small results: the seed's ten rounds (10 x 175 tokens fit in 2,000)
    assert whole_rounds(model.requests[12]) == list(range(2, 12))
    # the page is the newest round: whole although it alone passes the budget; older ones masked
    assert whole_rounds(model.requests[13]) == [12]
    # once read, the page is masked with everything before it
    assert whole_rounds(model.requests[14]) == [13]
    assert whole_rounds(model.requests[16]) == [13, 14, 15]
    # the boundary only moves forward: a result once masked is never sent whole again
    for earlier, later in itertools.pairwise(model.requests):
        assert set(whole_rounds(later)) - set(whole_rounds(earlier)) <= {rounds_so_far(earlier)}
    for request in model.requests:
        assert check_tool_pairs(request) == []
    [page] = [m for m in agent.get_state("t").values["messages"] if isinstance(m, ToolMessage)][
        12:13
    ]
    assert page.content == big_result("q12", 12_000)  # the history keeps it whole


def test_flat_after_the_kept_rounds_only_calls_and_placeholders_grow():
    model = ScriptedChatModel(fn=searching(30))
    agent = _agent(model, HybridContext())
    agent.invoke("go", thread_id="flat")
    counter = token_counter(model)

    def masked(request):
        return {m.tool_call_id: m for m in request if "graphflow_masked" in m.additional_kwargs}

    def whole(request):
        return sum(
            counter.count_text(str(m.content))
            for m in request
            if isinstance(m, ToolMessage) and "graphflow_masked" not in m.additional_kwargs
        )

    # the budget keeps three 535-token results whole (a fourth would pass 2,000), from then on
    assert [whole(r) for r in model.requests[3:]] == [3 * RESULT_TOKENS] * 28
    for call in range(KEEP, 30):
        request, after = model.requests[call], model.requests[call + 1]
        [new_call] = [m for m in after[len(request) :] if getattr(m, "tool_calls", None)]
        [newly_masked] = [m for i, m in masked(after).items() if i not in masked(request)]
        added = counter.count_message(new_call) + counter.count_message(newly_masked)
        grown = count_tokens(after, model) - count_tokens(request, model)
        # one more call and one more placeholder, nothing else (call ids differ in length)
        assert added - 1 <= grown <= added + 1, call
