"""Strategies that turn agent specs into LangGraph `StateGraph`s, one per agent kind.

This module is the one place the built-in kinds are registered. A strategy is also the one place
that describes its kind (drawing, details, event roles, run counts, result key): see
`graphflow.strategies.kind`.
"""

from graphflow import agents as _agents
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy
from graphflow.strategies.builder import FlowGraphBuilder
from graphflow.strategies.function import FunctionStrategy
from graphflow.strategies.kind import ChildRole, KindDescription, Ports, RunCounts
from graphflow.strategies.loop import LoopStrategy
from graphflow.strategies.parallel import ParallelStrategy
from graphflow.strategies.react import ReactStrategy
from graphflow.strategies.registry import (
    kind_name,
    output_key,
    register_strategy,
    strategy_for,
)
from graphflow.strategies.routing import RoutingStrategy
from graphflow.strategies.sequential import SequentialStrategy

__all__ = (
    "BuildContext",
    "ChildRole",
    "FlowGraphBuilder",
    "FlowGraphBuildingStrategy",
    "KindDescription",
    "Ports",
    "RunCounts",
    "kind_name",
    "output_key",
    "register_strategy",
    "strategy_for",
)

for _agent_type, _strategy in (
    (_agents.ReactAgent, ReactStrategy()),
    (_agents.SequentialAgent, SequentialStrategy()),
    (_agents.ParallelAgent, ParallelStrategy()),
    (_agents.LoopAgent, LoopStrategy()),
    (_agents.LlmRoutingAgent, RoutingStrategy()),
    (_agents.FunctionAgent, FunctionStrategy()),
):
    register_strategy(_agent_type, _strategy)
