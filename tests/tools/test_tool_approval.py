"""PERMISSION_DENIED with `requires_approval`: the pause and its three answers."""

from __future__ import annotations

from collections import Counter

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphflow import ReactAgent
from graphflow.exceptions import ToolError
from graphflow.testing import ScriptedChatModel, tool_call, tool_calls
from graphflow.tools import ToolPolicy, tool_result

allowed = {"yes": False}
runs: Counter[str] = Counter()


@tool
def delete(path: str) -> str:
    """Delete a file."""
    runs["delete"] += 1
    if not allowed["yes"]:
        raise PermissionError(f"{path} is read-only")
    return f"deleted {path}"


def _agent(tool=delete, call=None, *, name="janitor", answer="finished", **policy):
    """An agent whose model calls `tool` until it sees a result, then answers `answer`."""
    call = call or tool_call("delete", {"path": "/data/a.txt"})
    model = ScriptedChatModel(
        fn=lambda messages, n: answer if isinstance(messages[-1], ToolMessage) else call
    )
    agent = ReactAgent(
        name=name,
        model=model,
        tools=[tool],
        output_key="out",
        default_tool_policy=ToolPolicy(requires_approval=True, **policy),
    )
    return agent, model


def _pause(run_mode, thread):
    allowed["yes"] = False
    runs.clear()
    agent, model = _agent()
    first = run_mode.invoke(agent, "clean up", thread_id=thread)
    (pending,) = first["__interrupt__"]
    value = pending.value
    assert value["type"] == "tool_approval" and value["tool"] == "delete"
    assert value["args"] == {"path": "/data/a.txt"}
    assert value["error"]["type"] == "PERMISSION_DENIED"
    assert "read-only" in value["error"]["message"]
    assert value["decisions"] == ["retry", "skip", "abort"]
    assert runs["delete"] == 1 and model.calls == 1  # the model has not seen the error
    waiting = [m for m in first["messages"] if isinstance(m, ToolMessage)]
    assert len(waiting) == 1 and waiting[0].status == "error"
    return agent, model


def test_retry_runs_the_call_again_once_and_replaces_the_error(run_mode):
    agent, model = _pause(run_mode, "a-retry")
    allowed["yes"] = True  # the human fixed the permission
    result = run_mode.resume(agent, "a-retry", {"decision": "retry"})
    assert runs["delete"] == 2  # not re-run before the decision was applied
    tools = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [(m.content, m.status) for m in tools] == [("deleted /data/a.txt", "success")]
    assert model.requests[1][-1].content == "deleted /data/a.txt"
    assert result["out"] == "finished"


def test_retry_with_edited_args(run_mode):
    agent, _ = _pause(run_mode, "a-edit")
    allowed["yes"] = True
    result = run_mode.resume(agent, "a-edit", {"decision": "retry", "args": {"path": "/tmp/a.txt"}})
    assert [m.content for m in result["messages"] if isinstance(m, ToolMessage)] == [
        "deleted /tmp/a.txt"
    ]


def test_a_retry_that_fails_again_pauses_again(run_mode):
    agent, _ = _pause(run_mode, "a-again")
    second = run_mode.resume(agent, "a-again", "retry")
    assert runs["delete"] == 2 and "__interrupt__" in second
    done = run_mode.resume(agent, "a-again", {"decision": "skip", "message": "leave it"})
    assert runs["delete"] == 2 and done["out"] == "finished"


def test_skip_gives_the_model_the_humans_message(run_mode):
    agent, model = _pause(run_mode, "a-skip")
    result = run_mode.resume(agent, "a-skip", {"decision": "skip", "message": "keep that file"})
    assert runs["delete"] == 1
    seen = model.requests[1][-1]
    assert seen.status == "error" and "[PERMISSION_DENIED]" in seen.content
    assert seen.content.endswith("A human reviewer skipped this call: keep that file")
    assert tool_result(seen).error_type == "PERMISSION_DENIED"
    assert result["out"] == "finished"


def test_abort_stops_the_run_with_a_tool_error(run_mode):
    agent, model = _pause(run_mode, "a-abort")
    with pytest.raises(ToolError, match="aborted the run: wrong folder") as err:
        run_mode.resume(agent, "a-abort", {"decision": "abort", "reason": "wrong folder"})
    assert err.value.error_type == "PERMISSION_DENIED"
    assert runs["delete"] == 1 and model.calls == 1


def test_a_bad_answer_is_refused_before_it_is_stored(run_mode):
    agent, _ = _pause(run_mode, "a-bad")
    with pytest.raises(ValueError, match="cannot understand the resume value"):
        run_mode.resume(agent, "a-bad", {"decision": "maybe"})
    result = run_mode.resume(agent, "a-bad", "skip")
    assert result["out"] == "finished"


def test_resource_not_found_can_pause_for_a_human_too(run_mode):
    @tool
    def open_ticket(ticket: str) -> str:
        """Open a support ticket."""
        runs["open"] += 1
        if ticket != "T-2":
            raise LookupError(f"no ticket {ticket}")
        return f"ticket {ticket}: printer on fire"

    runs.clear()
    call = tool_call("open_ticket", {"ticket": "T-1"})
    agent, model = _agent(open_ticket, call, name="desk", answer="handled")
    first = run_mode.invoke(agent, "help", thread_id="nf-edit")
    (pending,) = first["__interrupt__"]
    assert pending.value["error"]["type"] == "RESOURCE_NOT_FOUND"
    assert "no ticket T-1" in pending.value["error"]["message"]
    result = run_mode.resume(agent, "nf-edit", {"decision": "retry", "args": {"ticket": "T-2"}})
    assert runs["open"] == 2 and model.calls == 2
    assert model.requests[1][-1].content == "ticket T-2: printer on fire"
    assert result["out"] == "handled"


def test_one_call_of_a_parallel_batch_waits_for_a_human_the_others_run_once(run_mode):
    runs.clear()
    locked = {"yes": True}

    @tool
    def read(n: int) -> str:
        """Read part n."""
        runs[n] += 1
        if n == 2 and locked["yes"]:
            raise PermissionError("part 2 is locked")
        return f"part {n}"

    turn = tool_calls(*[("read", {"n": i}) for i in (1, 2, 3)])
    agent, model = _agent(read, turn, name="reader", answer="done", parallel_safe=True)
    first = run_mode.invoke(agent, "go", thread_id="a-batch")
    (pending,) = first["__interrupt__"]
    assert pending.value["args"] == {"n": 2} and runs == {1: 1, 2: 1, 3: 1}
    locked["yes"] = False
    result = run_mode.resume(agent, "a-batch", "retry")
    assert runs == {1: 1, 2: 2, 3: 1}  # only the paused call ran again
    assert [m.content for m in model.requests[1] if isinstance(m, ToolMessage)] == [
        "part 1",
        "part 2",
        "part 3",
    ]
    assert model.calls == 2 and result["out"] == "done"
