"""The seam between agent specs and the machinery that builds, runs and draws them.

Agent specs (this package) are declarative. Building a graph (`graphflow.strategies`), running it
(checkpointers, leases, errors, events: `graphflow.runtime`) and drawing it
(`graphflow.visualize`) live in layers *above* the specs, which import them. So that
`agent.invoke(...)` needs no import edge back up, those layers install one `AgentRuntime` here
when graphflow is wired (in `graphflow/_public.py`, the one place that knows every layer, loaded
by the first public name used or the first agent call), and
the agent methods delegate to it.
"""

from __future__ import annotations

from typing import Any, Protocol

from graphflow.exceptions import GraphflowError

__all__ = ("AgentRuntime", "install", "runtime")


class AgentRuntime(Protocol):
    """What an `Agent` delegates its building, running and drawing methods to.

    Each method takes the agent first, then the arguments of the `Agent` method of the same name.
    """

    def to_graph(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def compile(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def invoke(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    async def ainvoke(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def stream(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def astream(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def resume(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    async def aresume(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def get_state(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def runs(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def history(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def draw(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def draw_to(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def as_tool(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def to_spec(self, agent: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102
    def from_spec(self, kind: Any, *args: Any, **kwargs: Any) -> Any: ...  # noqa: D102


_installed: AgentRuntime | None = None


def install(implementation: AgentRuntime) -> None:
    """Install the runtime agent methods delegate to (done once, by `graphflow/__init__.py`)."""
    global _installed
    _installed = implementation


def runtime() -> AgentRuntime:
    """The installed runtime."""
    if _installed is None:
        # `graphflow/__init__` loads its names lazily: wire the layers on the first agent call
        import importlib

        importlib.import_module("graphflow._public")
    if _installed is None:  # pragma: no cover - graphflow._public always installs it
        raise GraphflowError(
            "graphflow's runtime is not installed; import graphflow (not only graphflow.agents)"
        )
    return _installed
