"""Strategy for `ReactAgent`: model ⇄ tools in the agent's own subgraph, hooks around each call.

    [prepare (root only) | before_agent hooks] → model ⇄ tools (one task per call) → [after hooks]

Every model call is one run of the `model` node and every tool call its own task, so each is a
durable step and a resumed run never repeats a completed call. Starting the agent costs no step:
its instruction message is sent with its input by the parent's node (or written by its last
`before_agent` hook); a final answer is written by the model step itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.graph import StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from typing_extensions import override

from graphflow.agents.react import ReactAgent
from graphflow.exceptions import DataflowError
from graphflow.instructions import render_template
from graphflow.messages import instruction_message
from graphflow.state import (
    AGENT_STATUS,
    CONTEXT,
    EXIT_LOOP,
    LOOP_ITERATION,
    MESSAGES,
    MODEL_CALLS,
    MODEL_NODE,
    STOP,
    TOOLS_NODE,
    build_state_schema,
    merge_dicts,
)
from graphflow.strategies._agent_hooks import HookChain, guarded
from graphflow.strategies._node import router
from graphflow.strategies._react_inline import InlineModelStep, runs_inline
from graphflow.strategies._react_model import ModelStep, route_after_model
from graphflow.strategies._react_tools import ToolStep
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy, final_answer
from graphflow.strategies.kind import Ports, card_label, model_name
from graphflow.tools.exit_loop import is_exit_loop

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from graphflow.visualize.context import DrawContext

__all__ = ("ReactStrategy",)


class ReactStrategy(FlowGraphBuildingStrategy):
    """Builds a ReAct agent's subgraph."""

    @override
    def reads(self, agent: Any) -> set[str] | None:
        # the instruction is rendered by the entry update (outside, or in a hook node, and any
        # hook makes the agent read everything); the model and tools steps read no state keys
        return set()

    @override
    def check_dataflow(
        self, agent: Any, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        if not ctx.in_loop and any(is_exit_loop(t) for t in agent.tool_objects()):
            raise DataflowError(
                f"Agent `{agent.name}` has the exit_loop tool but no LoopAgent encloses it; "
                "remove the tool or put the agent in a LoopAgent body"
            )
        return super().check_dataflow(agent, available, ctx)

    @override
    def tools(self, agent: Any) -> list[BaseTool]:
        return list(agent.tool_objects())

    @override
    def details(self, agent: Any) -> dict[str, Any]:
        details: dict[str, Any] = {
            "model": model_name(agent.model),
            "tools": [t.name for t in agent.tool_objects()],
        }
        if agent.system_prompt:
            details["system_prompt"] = agent.system_prompt
        details["max_iterations"] = agent.max_iterations
        if agent.output_schema is not None:
            details["output_schema"] = agent.output_schema.__name__
        return details

    @override
    def draw(self, agent: Any, ctx: DrawContext) -> Ports:
        tools = ctx.details.get("tools") or []
        card = ctx.card(
            card_label(agent, ctx.kind + (f" · tools: {', '.join(tools)}" if tools else ""))
        )
        return Ports(entry=card, exit=card)

    @override
    def inline_step(self, agent: Any, ctx: BuildContext) -> tuple[Any, Any] | None:
        if ctx.is_root or not runs_inline(agent):
            return None
        step = InlineModelStep(agent)
        return step.run, step.arun

    @override
    def runs_inline(self, agent: Any) -> bool:
        return runs_inline(agent)

    @override
    def hand_back(self, agent: Any, new_messages: list[BaseMessage]) -> list[BaseMessage]:
        if agent.return_reasoning_contents:
            return super().hand_back(agent, new_messages)
        return final_answer(agent.name, new_messages)

    @override
    def entry_update(
        self, agent: Any, state: Mapping[str, Any], ctx: BuildContext
    ) -> dict[str, Any]:
        messages: list[Any] = []
        if agent.include_contents == "none":
            messages.append(RemoveMessage(id=REMOVE_ALL_MESSAGES))
        if agent.instruction:
            text = render_template(agent.template, state, agent=agent.name)
            messages.append(instruction_message(text, agent=agent.name))
        if not ctx.is_root:
            return {MESSAGES: messages}  # a sub-agent's graph starts empty: nothing to reset
        return {
            MESSAGES: messages,
            MODEL_CALLS: 0,
            STOP: None,
            AGENT_STATUS: {agent.name: "running"},
        }

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        assert isinstance(agent, ReactAgent)
        private: dict[str, Any] = {MODEL_CALLS: int, STOP: str | None}
        if agent.call_hooks():
            # context bookkeeping is written by model hooks (a context policy is one): without
            # any, the channel would be one more to set up on every invocation, never written
            private[CONTEXT] = Annotated[dict[str, Any], merge_dicts]
        graph: StateGraph = StateGraph(
            build_state_schema(ctx.keys, extra={**ctx.extra, **private}, omit=_unused(agent, ctx))
        )
        hooks = HookChain(agent)
        tools = ToolStep(agent)
        model = ModelStep(agent, tools.tools)
        done = hooks.after_entry

        def after_model(state: Mapping[str, Any]) -> Any:
            return route_after_model(state, done=done, sends=tools.sends)

        graph.add_node(MODEL_NODE, guarded(agent, MODEL_NODE, model.run, model.arun))
        graph.add_node(TOOLS_NODE, guarded(agent, TOOLS_NODE, tools.run, tools.arun))
        hooks.install(graph, MODEL_NODE, None, ctx, entry_update=self.starts(agent, ctx))
        graph.add_conditional_edges(MODEL_NODE, router(after_model), [TOOLS_NODE, MODEL_NODE, done])
        graph.add_edge(TOOLS_NODE, MODEL_NODE)
        return graph


def _unused(agent: ReactAgent, ctx: BuildContext) -> frozenset[str]:
    """Base channels a sub-agent's graph never reads or writes.

    Without hooks nothing in it reads the loop pass (the parent's node renders the instruction)
    and nothing sets the exit flag but the `exit_loop` tool.
    """
    if ctx.is_root or agent.hooks or agent.call_hooks():
        return frozenset()
    unused = {EXIT_LOOP} if not any(is_exit_loop(t) for t in agent.tool_objects()) else set()
    if LOOP_ITERATION not in agent.input_keys:
        unused.add(LOOP_ITERATION)
    return frozenset(unused)
