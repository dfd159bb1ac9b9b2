"""Issue 9, point 5: model output that is not what was asked.

Malformed tool calls are answered (no request ever carries an unanswered tool call id); an empty
final answer is re-asked once, then recorded as `empty` with a warning; `output_schema` failures
raise `OutputValidationError` also at `max_iterations`; an `until` predicate that raises names
its loop (and the run resumes once it is fixed).
"""

from __future__ import annotations

import logging

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from graphflow import LoopAgent, ReactAgent, SequentialAgent, output_contains
from graphflow.exceptions import AgentRunError, OutputValidationError
from graphflow.testing import ScriptedChatModel, tool_call


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


def _invalid(call_id: str, args: str = '{"query": ') -> dict:
    return {
        "name": "search",
        "args": args,
        "id": call_id,
        "error": "Expecting value: line 1 column 11",
        "type": "invalid_tool_call",
    }


def unanswered_ids(request: list) -> list[str]:
    """Tool call ids an AI message in `request` asked for that no later tool message answers."""
    out: list[str] = []
    for i, message in enumerate(request):
        if not isinstance(message, AIMessage):
            continue
        asked = [c["id"] for c in message.tool_calls] + [
            c["id"] for c in message.invalid_tool_calls if c.get("id")
        ]
        answered = {m.tool_call_id for m in request[i + 1 :] if isinstance(m, ToolMessage)}
        out += [cid for cid in asked if cid not in answered]
    return out


def test_malformed_tool_calls_are_answered_so_the_model_can_correct_them(store) -> None:
    model = ScriptedChatModel(
        replies=[
            AIMessage(content="", invalid_tool_calls=[_invalid("bad_1")]),
            # one good and one malformed call in the same turn
            AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "search",
                        "args": {"query": "pumps"},
                        "id": "ok_1",
                        "type": "tool_call",
                    }
                ],
                invalid_tool_calls=[_invalid("bad_2", "{query: pumps")],
            ),
            tool_call("search", {"query": "valves"}),
            "Pumps and valves.",
        ]
    )
    agent = ReactAgent(name="researcher", model=model, tools=[search], output_key="facts")
    team = SequentialAgent(name="team", sub_agents=[agent])
    state = team.invoke("go", thread_id="t", checkpointer=store)
    assert state["facts"] == "Pumps and valves."
    assert model.calls == 4
    for request in model.requests:
        assert unanswered_ids(request) == [], [m.type for m in request]
    told = next(m for m in model.requests[1] if isinstance(m, ToolMessage))
    assert told.tool_call_id == "bad_1" and told.status == "error"
    assert "INVALID_PARAM" in told.text and "`search`" in told.text
    assert "valid JSON object" in told.text  # the fix, for the model
    answers = {m.tool_call_id: m for m in model.requests[2] if isinstance(m, ToolMessage)}
    assert answers["ok_1"].text == "results for pumps" and answers["bad_2"].status == "error"
    # and the checkpoint holds the same answered conversation
    stored = team.get_state("t").values
    assert stored["facts"] == "Pumps and valves."


def test_an_empty_answer_is_asked_again_once(store) -> None:
    model = ScriptedChatModel(replies=["", "The answer."])
    team = SequentialAgent(
        name="team", sub_agents=[ReactAgent(name="writer", model=model, output_key="draft")]
    )
    state = team.invoke("go", thread_id="t", checkpointer=store)
    assert state["draft"] == "The answer." and state["agent_status"]["writer"] == "completed"
    assert model.calls == 2
    assert "Your reply was empty" in model.requests[1][-1].text


@pytest.mark.parametrize("second", ["", "  \n\t "])
def test_an_empty_answer_twice_is_status_empty_with_a_warning(store, caplog, second) -> None:
    model = ScriptedChatModel(replies=["   ", second])
    team = SequentialAgent(
        name="team", sub_agents=[ReactAgent(name="writer", model=model, output_key="draft")]
    )
    with caplog.at_level(logging.WARNING, logger="graphflow"):
        state = team.invoke("go", thread_id="t", checkpointer=store)
    assert state["agent_status"]["writer"] == "empty"
    assert not (state["draft"] or "").strip()
    assert model.calls == 2  # asked again once, not forever
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("writer" in r.getMessage() and "empty" in r.getMessage() for r in warnings)


class Verdict(BaseModel):
    score: int
    reason: str


@pytest.mark.parametrize("max_iterations", [1, 2])
def test_an_invalid_structured_answer_at_max_iterations_raises(store, max_iterations) -> None:
    model = ScriptedChatModel(replies=["not json", '{"score": "high"}', '{"score": 1}'])
    agent = ReactAgent(
        name="judge",
        model=model,
        output_schema=Verdict,
        structured_output="prompt",
        max_iterations=max_iterations,
        output_key="verdict",
    )
    team = SequentialAgent(name="team", sub_agents=[agent])
    with pytest.raises(OutputValidationError) as caught:
        team.invoke("go", thread_id="t", checkpointer=store)
    message = str(caught.value)
    assert caught.value.agent == "judge" and "Agent `judge`" in message and "Verdict" in message
    if max_iterations == 1:
        assert "max_iterations=1" in message
    else:
        assert "after one retry" in message
    assert model.calls == max_iterations


def test_a_raising_until_predicate_names_the_loop_and_the_run_resumes(store) -> None:
    writer = ScriptedChatModel(replies=["draft 1", "draft 2"])
    reviewer = ScriptedChatModel(replies=["More.", "APPROVE"])

    def approved(state):
        return "APPROVE" in state["review"]  # wrong key: the reviewer writes review_feedback

    refine = LoopAgent(
        name="refine",
        sub_agents=[
            ReactAgent(name="writer", model=writer, output_key="draft"),
            ReactAgent(name="reviewer", model=reviewer, output_key="review_feedback"),
        ],
        max_iterations=3,
        until=approved,
    )
    team = SequentialAgent(name="team", sub_agents=[refine])
    with pytest.raises(AgentRunError) as caught:
        team.invoke("go", thread_id="t", checkpointer=store)
    message = str(caught.value)
    assert caught.value.agent == "refine"
    assert "LoopAgent `refine`" in message and "approved" in message and "KeyError" in message
    assert "resume" in message
    assert (writer.calls, reviewer.calls) == (1, 1)
    # fix the predicate; the resumed run goes on from the failed check
    refine.until = output_contains("review_feedback", "APPROVE")
    state = team.resume("t")
    assert state["review_feedback"] == "APPROVE" and state["draft"] == "draft 2"
    # neither the first pass's draft nor its review was asked for again
    assert (writer.calls, reviewer.calls) == (2, 2)
