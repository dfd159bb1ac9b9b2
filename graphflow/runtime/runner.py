"""`Runtime`: what the methods of an `Agent` spec call to build, run, read and draw it.

`graphflow/__init__.py` installs one `Runtime` in `graphflow.agents.seam` (specs import
nothing above them). Its methods are typed, so go-to-definition from `Agent.invoke` lands here
and then on `CompiledAgent.invoke`: every run method of an agent is
`runtime().running(agent, checkpointer).<method>(...)`, every read
`runtime().reading(agent, checkpointer).<method>(...)` — the same `CompiledAgent`, except that a
read never remembers its store (see `graphflow.runtime.graphs` for the order stores are chosen
in).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphflow.runtime import graphs
from graphflow.runtime.as_tool import agent_as_tool
from graphflow.runtime.compiled import CompiledAgent, compile_agent
from graphflow.strategies import FlowGraphBuilder
from graphflow.visualize import draw, draw_to

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from langgraph.graph import StateGraph

    from graphflow.agents.base import Agent

__all__ = ("Runtime",)


def _acyclic(agent: Agent) -> None:
    """Raise the cycle error (`DataflowError` naming the path) for a tree that contains itself."""
    for _ in agent.walk():
        pass


class Runtime:
    """The runtime `Agent` methods delegate to (see `graphflow.agents.seam`)."""

    # -- building --------------------------------------------------------------------------------

    def to_graph(self, agent: Agent) -> StateGraph:
        """The uncompiled root graph."""
        return FlowGraphBuilder(subgraphs=graphs.SUBGRAPHS).build(agent)

    def compile(
        self,
        agent: Agent,
        checkpointer: Any = None,
        *,
        store: Any = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        debug: bool = False,
    ) -> CompiledAgent:
        """`agent` compiled on its store, opened now and remembered for later runs told none.

        A store that cannot work fails here, before anything runs.
        """
        compiled = compile_agent(
            agent,
            checkpointer,
            store=store,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            debug=debug,
        )
        compiled.graph  # noqa: B018 - open the store now
        return compiled

    def running(self, agent: Agent, checkpointer: Any = None) -> CompiledAgent:
        """The `CompiledAgent` a run method of `agent` runs on; remembers `checkpointer`."""
        return compile_agent(agent, checkpointer)

    def reading(self, agent: Agent, checkpointer: Any = None) -> CompiledAgent:
        """The `CompiledAgent` a read of `agent`'s runs uses; remembers nothing."""
        return compile_agent(agent, checkpointer, remember=False)

    # -- drawing and composing --------------------------------------------------------------------

    def draw(
        self,
        agent: Agent,
        format: str = "mermaid",
        *,
        xray: bool | int = False,
        dataflow: bool = False,
        thread_id: str | None = None,
        checkpointer: Any = None,
    ) -> str | bytes:
        """A drawing of the agent tree (with `thread_id`: coloured from that run)."""
        _acyclic(agent)
        if thread_id is not None:
            return self.reading(agent, checkpointer).draw(
                format, xray=xray, dataflow=dataflow, thread_id=thread_id
            )
        return draw(agent, format, xray=xray, dataflow=dataflow)

    def draw_to(
        self,
        agent: Agent,
        path: str | Path,
        *,
        format: str | None = None,
        xray: bool | int = False,
        dataflow: bool = False,
        thread_id: str | None = None,
        checkpointer: Any = None,
    ) -> Path:
        """Write a drawing of the agent tree to `path`."""
        _acyclic(agent)
        if thread_id is not None:
            return self.reading(agent, checkpointer).draw_to(
                path, format=format, xray=xray, dataflow=dataflow, thread_id=thread_id
            )
        return draw_to(agent, path, format=format, xray=xray, dataflow=dataflow)

    def as_tool(self, agent: Agent, name: str | None, description: str | None) -> BaseTool:
        """`agent` as a tool of another agent."""
        return agent_as_tool(agent, name=name, description=description)

    # -- specs ------------------------------------------------------------------------------------

    def to_spec(self, agent: Agent) -> dict[str, Any]:
        """The agent tree as a spec mapping (see `graphflow.spec`)."""
        from graphflow.spec import agent_to_spec

        return agent_to_spec(agent)

    def from_spec(self, kind: type[Agent], data: Mapping[str, Any]) -> Agent:
        """The agent tree a spec mapping describes (see `graphflow.spec`)."""
        from graphflow.spec import agent_from_spec

        return agent_from_spec(data, kind=kind)
