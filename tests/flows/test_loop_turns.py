"""Issue 9, point 3: a new input on a finished thread continues the conversation, but the keys a
loop's body wrote in an earlier turn are cleared when the loop starts again — turn 1's `APPROVE`
is never shown to turn 2's writer as feedback, and never ends turn 2's loop by itself."""

from __future__ import annotations

from graphflow import (
    FunctionAgent,
    LoopAgent,
    ReactAgent,
    SequentialAgent,
    is_instruction,
    output_contains,
)
from graphflow.testing import ScriptedChatModel


def _team(writer_model, reviewer_model) -> SequentialAgent:
    writer = ReactAgent(
        name="writer",
        model=writer_model,
        instruction="Write about {input}. Feedback: {review_feedback?}",
        output_key="draft",
    )
    reviewer = ReactAgent(
        name="reviewer",
        model=reviewer_model,
        instruction="Review {draft}. Answer APPROVE or give feedback.",
        output_key="review_feedback",
    )
    refine = LoopAgent(
        name="refine",
        sub_agents=[writer, reviewer],
        max_iterations=3,
        until=output_contains("review_feedback", "APPROVE"),
    )
    return SequentialAgent(name="team", sub_agents=[refine])


def _instruction(request) -> str:
    [text] = [m.text for m in request if is_instruction(m)]
    return text


def test_turn_two_writer_never_sees_turn_one_approve(store) -> None:
    writer = ScriptedChatModel(replies=["pump draft", "valve draft", "valve draft 2"])
    reviewer = ScriptedChatModel(replies=["APPROVE", "Add prices.", "APPROVE"])
    team = _team(writer, reviewer)
    first = team.invoke("pumps", thread_id="chat", checkpointer=store)
    assert first["review_feedback"] == "APPROVE" and first["agent_status"]["refine"] == "until"

    second = team.invoke("valves", thread_id="chat", checkpointer=store)
    turn_two_first_pass = _instruction(writer.requests[1])
    assert turn_two_first_pass == "Write about valves. Feedback: "
    assert "APPROVE" not in turn_two_first_pass
    # the loop ran its own passes: feedback of this turn reached the second pass
    assert _instruction(writer.requests[2]) == "Write about valves. Feedback: Add prices."
    assert second["draft"] == "valve draft 2" and second["review_feedback"] == "APPROVE"
    assert (writer.calls, reviewer.calls) == (3, 3)
    # the conversation continued: both turns' user messages are in the thread
    humans = [m.text for m in second["messages"] if m.type == "human" and not is_instruction(m)]
    assert humans == ["pumps", "valves"]


def test_a_function_in_the_body_reads_no_stale_key_either(store) -> None:
    seen: list[object] = []

    def plan(state):
        seen.append(state.get("review_feedback"))
        return f"plan for {state['input']}"

    reviewer = ScriptedChatModel(replies=["APPROVE", "More.", "APPROVE"])
    refine = LoopAgent(
        name="refine",
        sub_agents=[
            FunctionAgent(name="plan", fn=plan, output_key="draft"),
            ReactAgent(
                name="reviewer",
                model=reviewer,
                instruction="Review {draft}.",
                output_key="review_feedback",
            ),
        ],
        max_iterations=3,
        until=output_contains("review_feedback", "APPROVE"),
    )
    team = SequentialAgent(name="team", sub_agents=[refine])
    team.invoke("one", thread_id="t", checkpointer=store)
    state = team.invoke("two", thread_id="t", checkpointer=store)
    # turn 1: one pass; turn 2: starts clean, then sees its own feedback
    assert seen == [None, None, "More."]
    assert state["draft"] == "plan for two" and reviewer.calls == 3
