"""An agent wrapped as a tool of another agent (the supervisor pattern)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from graphflow.instructions import render_value
from graphflow.messages import last_ai_message
from graphflow.runtime.graphs import SUBGRAPHS
from graphflow.runtime.inputs import normalize_input
from graphflow.state import MESSAGES
from graphflow.strategies import FlowGraphBuilder

if TYPE_CHECKING:
    from graphflow.agents.base import Agent

__all__ = ("AgentTool", "agent_as_tool")


class AgentTool(StructuredTool):
    """A tool that runs an agent; `graphflow_agent` lets drawings show the agent beside its caller."""

    graphflow_agent: Any = Field(default=None, exclude=True)


class _Request(BaseModel):
    request: str = Field(description="What the agent should do, in plain language.")


def agent_as_tool(agent: Agent, *, name: str | None, description: str | None) -> BaseTool:
    """`agent` as a tool whose `request` argument is the agent's input."""
    # Compiled without a checkpointer of its own: inside a graph it inherits the caller's and
    # runs in the tool task's checkpoint namespace, so a resumed run resumes it too.
    graph = (
        FlowGraphBuilder(subgraphs=SUBGRAPHS)
        .build(agent)
        .compile(checkpointer=None, name=agent.name)
    )

    def result_of(state: dict[str, Any]) -> str:
        if agent.output_key and state.get(agent.output_key) is not None:
            return render_value(state[agent.output_key])
        final = last_ai_message(state.get(MESSAGES, []))
        return final.text if final else ""

    # (`config: RunnableConfig` is how LangChain knows to pass the caller's config)
    def run(request: str, config: RunnableConfig) -> str:
        return result_of(graph.invoke(normalize_input(request), config))

    async def arun(request: str, config: RunnableConfig) -> str:
        return result_of(await graph.ainvoke(normalize_input(request), config))

    return AgentTool.from_function(
        func=run,
        coroutine=arun,
        name=name or agent.name,
        description=description or agent.description or f"Ask the {agent.name} agent.",
        args_schema=_Request,
        graphflow_agent=agent,
    )
