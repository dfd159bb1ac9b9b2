"""Hook-declared keys cross agent boundaries; a silent exit_loop keeps the last output."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage

from graphflow import (
    AgentHook,
    DataflowError,
    LoopAgent,
    ReactAgent,
    SequentialAgent,
    exit_loop,
)
from graphflow.testing import ScriptedChatModel, tool_call


class Ticket(AgentHook):
    writes = ("ticket",)

    def before_agent(self, state: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"ticket": f"T-{ctx.agent}"}


def test_a_nested_agents_hook_key_reaches_the_parent_and_later_instructions() -> None:
    first = ReactAgent(
        name="first",
        model=ScriptedChatModel(replies=["ok"]),
        hooks=[Ticket()],
        instruction="Work on {ticket}.",  # a before_agent hook's key is available to its agent
        output_key="first_out",
    )
    later_model = ScriptedChatModel(replies=["done"])
    later = ReactAgent(
        name="later", model=later_model, instruction="Close {ticket}.", output_key="later_out"
    )
    result = SequentialAgent(name="flow", sub_agents=[first, later]).invoke("go")
    assert result["ticket"] == "T-first"
    assert later_model.requests[0][-1].content == "Close T-first."


def test_without_declared_writes_the_key_is_unknown_at_build_time() -> None:
    class Quiet(AgentHook):
        def before_agent(self, state: dict[str, Any], ctx: Any) -> dict[str, Any]:
            return {}

    model = ScriptedChatModel(replies=["x"])
    first = ReactAgent(name="first", model=model, hooks=[Quiet()], output_key="a")
    later = ReactAgent(name="later", model=model, instruction="Close {ticket}.")
    with pytest.raises(DataflowError, match="ticket"):
        SequentialAgent(name="flow", sub_agents=[first, later]).compile()
    assert model.calls == 0


def test_bad_hook_write_key_is_a_build_error() -> None:
    class Bad(AgentHook):
        writes = ("messages",)

    agent = ReactAgent(name="a", model=ScriptedChatModel(replies=["x"]), hooks=[Bad()])
    with pytest.raises(DataflowError, match="writes='messages'"):
        agent.compile()


def test_silent_exit_loop_keeps_the_previous_output_and_hands_back_nothing_empty() -> None:
    # pass 0: a real answer; pass 1: only the exit_loop call, with no text
    model = ScriptedChatModel(replies=["draft one", tool_call("exit_loop", {}), "unused"])
    worker = ReactAgent(name="worker", model=model, tools=[exit_loop], output_key="draft")
    loop = LoopAgent(name="loop", sub_agents=[worker], max_iterations=5)
    result = loop.invoke("go")
    assert result["agent_status"]["loop"] == "exit_loop"
    assert result["draft"] == "draft one"
    finals = [m for m in result["messages"] if isinstance(m, AIMessage)]
    assert [m.text for m in finals] == ["draft one"]
    assert all(not m.tool_calls for m in finals)


@pytest.mark.parametrize("field", ["output_key", "input_keys"])
def test_gf_prefixed_keys_are_reserved(field: str) -> None:
    # graphflow's private channels are never handed to sub-agents, so a user key may not use them
    from graphflow.exceptions import AgentSpecError

    value: Any = "gf_notes" if field == "output_key" else ["gf_notes"]
    with pytest.raises(AgentSpecError, match="names starting with 'gf_' are reserved"):
        ReactAgent(name="a", model=ScriptedChatModel(replies=["x"]), **{field: value})
