"""The loop breaker: the same call and result three times → recorded, and the model is told."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from graphflow import ReactAgent
from graphflow.context import ContextStats, HybridContext, LoopBreaker
from graphflow.testing import ScriptedChatModel, tool_call

NOTE = "graphflow_context_note"


@tool
def status(job: str) -> str:
    """Job status."""
    return f"{job}: pending"


def _notes(request):
    return [m for m in request if NOTE in m.additional_kwargs]


@pytest.mark.parametrize("policy", [LoopBreaker(), HybridContext()])
def test_three_identical_calls_are_flagged_once_and_told_plainly(policy):
    model = ScriptedChatModel(
        replies=[tool_call("status", {"job": "42"}) for _ in range(5)] + ["I'll stop polling."]
    )
    agent = ReactAgent(name="poller", model=model, tools=[status], context=policy)
    agent.invoke("Wait for job 42.", thread_id="t")
    noted = [bool(_notes(r)) for r in model.requests]
    assert noted == [False, False, False, True, True, True]
    [note] = _notes(model.requests[3])
    assert isinstance(note, HumanMessage) and note is model.requests[3][-1]
    assert note.content.startswith("[graphflow] Loop detected: your last 3 calls to `status`")
    assert '{"job": "42"}' in note.content and "final answer" in note.content
    assert "last 5 calls" in _notes(model.requests[5])[0].content
    context = agent.get_state("t").values["gf_context"]
    assert ContextStats.from_state(agent.get_state("t")).loops_detected == 1
    assert context["loops"] == [
        {
            "tool": "status",
            "args": {"job": "42"},
            "call_id": context["loops"][0]["call_id"],
            "repeats": 3,
        }
    ]
    # the note is only in what was sent, never in the history
    assert not any(NOTE in m.additional_kwargs for m in agent.get_state("t").values["messages"])


def test_different_arguments_or_results_are_not_a_loop():
    count = {"n": 0}

    @tool
    def progress(job: str) -> str:
        """Job progress."""
        count["n"] += 1
        return f"{job}: {count['n'] * 10}%"

    model = ScriptedChatModel(
        replies=[
            tool_call("progress", {"job": "1"}),
            tool_call("progress", {"job": "1"}),
            tool_call("progress", {"job": "1"}),  # same call, new result each time
            tool_call("status", {"job": "1"}),
            tool_call("status", {"job": "2"}),
            tool_call("status", {"job": "3"}),  # same tool, other arguments
            "done",
        ]
    )
    agent = ReactAgent(name="a", model=model, tools=[progress, status], context=LoopBreaker())
    agent.invoke("go", thread_id="t")
    assert not any(_notes(r) for r in model.requests)
    assert ContextStats.from_state(agent.get_state("t")).loops_detected == 0


def test_repeats_setting():
    with pytest.raises(ValueError, match="repeats=1"):
        LoopBreaker(repeats=1)
    model = ScriptedChatModel(replies=[tool_call("status", {"job": "x"})] * 2 + ["ok"])
    agent = ReactAgent(name="a", model=model, tools=[status], context=LoopBreaker(repeats=2))
    agent.invoke("go", thread_id="t")
    assert [bool(_notes(r)) for r in model.requests] == [False, False, True]
