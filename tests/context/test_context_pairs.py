"""Pair safety: no request ever holds a tool result without its call or a call without its result."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from graphflow import ReactAgent
from graphflow.context import (
    ContextStats,
    HybridContext,
    ObservationMasking,
    Summarization,
    _view,
    check_tool_pairs,
    repair_tool_pairs,
)
from graphflow.context.pairs import MISSING_RESULT
from graphflow.messages import MASK_MARK, SUMMARY_MARK
from graphflow.testing import ScriptedChatModel, tool_calls
from tests.context.context_helpers import FIVE_SECTION_SUMMARY, big_result, next_round

_ids = itertools.count()

# a turn: ("human",), ("final",) or ("tools", number of parallel calls)
turn = st.one_of(
    st.just(("human",)), st.just(("final",)), st.tuples(st.just("tools"), st.integers(1, 3))
)


def build(turns: list[tuple]) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage("sys", id="s"), HumanMessage("task", id="task")]
    for t in turns:
        n = next(_ids)
        if t[0] == "human":
            messages.append(HumanMessage(f"more {n}", id=f"h{n}"))
        elif t[0] == "final":
            messages.append(AIMessage(f"answer {n}", id=f"a{n}"))
        else:
            calls = [
                {
                    "name": "search",
                    "args": {"q": f"{n}-{k}"},
                    "id": f"c{n}-{k}",
                    "type": "tool_call",
                }
                for k in range(t[1])
            ]
            messages.append(AIMessage("", tool_calls=calls, id=f"a{n}"))
            for call in calls:
                messages.append(
                    ToolMessage(
                        "r" * 600, tool_call_id=call["id"], name="search", id=f"t{call['id']}"
                    )
                )
    return messages


budget = st.one_of(st.none(), st.integers(0, 1_500))


@given(st.lists(turn, max_size=25), st.integers(1, 6), st.integers(1, 6), budget)
def test_every_cut_keeps_pairs_together(turns, keep_mask, keep_summary, keep_tokens):
    history = build(turns)
    assert check_tool_pairs(history) == []
    ordinals = _view.tool_ordinals(history)
    view, _ = _view.mask(
        history,
        keep_last=keep_mask,
        min_chars=1,
        gist_chars=10,
        ordinals=ordinals,
        keep_tokens=keep_tokens,
        cost=lambda text: len(text) // 4,  # a 600-character result costs 150
    )
    assert check_tool_pairs(view) == []
    # masked results all come before the whole ones, the newest round is whole, and what is
    # whole fits the budget unless it is the newest round alone
    flags = [MASK_MARK in m.additional_kwargs for m in view if isinstance(m, ToolMessage)]
    assert flags == sorted(flags, reverse=True)
    starts = _view.round_starts(view)
    if starts:
        assert not any(MASK_MARK in m.additional_kwargs for m in view[starts[-1] :])
    whole_rounds = [s for s in starts if MASK_MARK not in view[s + 1].additional_kwargs]
    assert len(whole_rounds) <= max(keep_mask, 1)
    if keep_tokens is not None and len(whole_rounds) > 1:
        whole = [m for m in view[whole_rounds[0] :] if isinstance(m, ToolMessage)]
        assert sum(len(str(m.content)) // 4 for m in whole) <= keep_tokens
    for _ in range(3):  # successive summaries, each folding in the previous one
        cut = _view.choose_cut(view, keep_summary)
        if cut is None:
            break
        start, end = cut
        assert isinstance(view[end], AIMessage) and view[end].tool_calls  # a round starts there
        replaces = SUMMARY_MARK in view[start - 1].additional_kwargs
        summary = {"text": "s", "through": view[end - 1].id, "rounds": 1}
        view = [
            *view[: start - 1 if replaces else start],
            _view.summary_message(summary),
            *view[end:],
        ]
        assert check_tool_pairs(view) == []
        # the same view is rebuilt from the history and the stored summary on the next call
        rebuilt, applied = _view.apply_summary(history, summary)
        assert applied and check_tool_pairs(rebuilt) == []


@given(st.lists(turn, max_size=25), st.data())
def test_repair_fixes_any_slice_or_deletion(turns, data):
    history = build(turns)
    repaired, repairs = repair_tool_pairs(history)
    assert repairs == 0 and repaired == history  # a valid list is left alone
    start = data.draw(st.integers(0, len(history)))
    end = data.draw(st.integers(start, len(history)))
    dropped = data.draw(st.sets(st.integers(0, len(history) - 1), max_size=5))
    broken = [m for i, m in enumerate(history[start:end], start) if i not in dropped]
    repaired, repairs = repair_tool_pairs(broken)
    assert check_tool_pairs(repaired) == []
    assert repairs == len(check_tool_pairs(broken)) or repairs >= 1 or not check_tool_pairs(broken)
    # nothing but tool results is dropped; stand-ins say what they are
    assert [m for m in broken if not isinstance(m, ToolMessage)] == [
        m for m in repaired if not isinstance(m, ToolMessage)
    ]
    for m in repaired:
        if isinstance(m, ToolMessage) and m not in broken:
            assert m.content == MISSING_RESULT and m.status == "error"


def test_check_names_each_problem():
    call = {"name": "search", "args": {}, "id": "c1", "type": "tool_call"}
    problems = check_tool_pairs(
        [
            ToolMessage("orphan", tool_call_id="c0"),
            AIMessage("", tool_calls=[call, {**call, "id": "c2"}]),
            ToolMessage("r", tool_call_id="c1"),
            ToolMessage("again", tool_call_id="c1"),
            HumanMessage("next"),
        ]
    )
    assert [(p.kind, p.tool_call_id) for p in problems] == [
        ("orphan_result", "c0"),
        ("duplicate_result", "c1"),
        ("missing_result", "c2"),
    ]


@tool
def search(q: str) -> str:
    """Search."""
    return big_result(q, 900)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(1, 3), min_size=8, max_size=16),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(400, 900),
    st.sampled_from([None, 0, 300, 2_000]),
)
def test_every_request_of_a_real_run_is_pair_safe(
    widths, keep_mask, keep_summary, window, keep_tokens
):
    def script(messages, n):
        r = next_round(messages, "q")
        if r < len(widths):
            return tool_calls(*[("search", {"q": f"{r}-{k}"}) for k in range(widths[r])])
        return "done"

    model = ScriptedChatModel(fn=script)
    summarizer = ScriptedChatModel(fn=lambda m, n: FIVE_SECTION_SUMMARY)
    policy = HybridContext(
        ObservationMasking(keep_last=keep_mask, keep_tokens=keep_tokens, min_chars=100),
        Summarization(summarizer, keep_last=keep_summary),
        context_window=window,
    )
    agent = ReactAgent(name="a", model=model, tools=[search], context=policy, max_iterations=40)
    thread = f"p{next(_ids)}"
    agent.invoke("go", thread_id=thread)
    assert model.calls == len(widths) + 1
    for request in model.requests:
        assert check_tool_pairs(request) == []
        assert all(m.content != MISSING_RESULT for m in request if isinstance(m, ToolMessage))
    stats = ContextStats.from_state(agent.get_state(thread))
    assert stats.pair_repairs == 0
    assert stats.summaries >= 1  # the small window forces summaries, cut wherever hypothesis says
