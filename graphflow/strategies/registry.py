"""The strategy registry: which `FlowGraphBuildingStrategy` builds which agent class.

Filled in one place — `graphflow/strategies/__init__.py` registers the built-in kinds — and by
users with `register_strategy` for their own kinds. Lookup walks the agent's class hierarchy, so
a subclass of a built-in agent is built like its base unless it has a strategy of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphflow.agents.base import Agent
from graphflow.exceptions import GraphflowConfigError
from graphflow.strategies.base import FlowGraphBuildingStrategy

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = (
    "kind_name",
    "output_key",
    "register_strategy",
    "registered",
    "registered_type",
    "strategy_for",
)

_REGISTRY: dict[type[Agent], FlowGraphBuildingStrategy] = {}


def register_strategy(agent_type: type[Agent], strategy: FlowGraphBuildingStrategy) -> None:
    """Use `strategy` to build every agent of `agent_type` (and its subclasses).

    This is how you add an agent kind without touching graphflow.
    """
    if not (isinstance(agent_type, type) and issubclass(agent_type, Agent)):
        raise GraphflowConfigError(f"register_strategy: {agent_type!r} is not an Agent subclass")
    if not isinstance(strategy, FlowGraphBuildingStrategy):
        raise GraphflowConfigError(
            f"register_strategy: {strategy!r} is not a FlowGraphBuildingStrategy instance"
        )
    _REGISTRY[agent_type] = strategy


def strategy_for(agent: Agent) -> FlowGraphBuildingStrategy:
    """The registered strategy for `agent`'s type (the nearest registered base class)."""
    return _registration(agent)[1]


def registered_type(agent: Agent) -> type[Agent]:
    """The class `agent`'s strategy is registered for (its own class or the nearest base)."""
    return _registration(agent)[0]


def kind_name(agent: Agent) -> str:
    """`agent`'s kind as drawings name it (`react`, `loop`, `mapreduce`), asked of its strategy."""
    agent_type, strategy = _registration(agent)
    return strategy.kind_name(agent_type)


def output_key(agent: Agent) -> str | None:
    """The key `agent` writes its own result to, asked of its strategy (`graphflow show`)."""
    return strategy_for(agent).output_key(agent)


def _registration(agent: Agent) -> tuple[type[Agent], FlowGraphBuildingStrategy]:
    for klass in type(agent).__mro__:
        strategy = _REGISTRY.get(klass)
        if strategy is not None:
            return klass, strategy
    raise GraphflowConfigError(
        f"no strategy builds {type(agent).__name__} (agent {agent.name!r}); register one with "
        f"graphflow.register_strategy({type(agent).__name__}, YourStrategy())"
    )


def registered() -> Mapping[type[Agent], FlowGraphBuildingStrategy]:
    """The current registrations (read-only view)."""
    from types import MappingProxyType

    return MappingProxyType(_REGISTRY)
