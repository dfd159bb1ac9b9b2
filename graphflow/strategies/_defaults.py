"""Registers the built-in strategies (imported lazily to keep agents free of strategy imports)."""

from __future__ import annotations


def register_builtins() -> None:
    from graphflow.agents import (
        FunctionAgent,
        LlmRoutingAgent,
        LoopAgent,
        ParallelAgent,
        ReactAgent,
        SequentialAgent,
    )
    from graphflow.strategies import builder
    from graphflow.strategies.function import FunctionStrategy
    from graphflow.strategies.loop import LoopStrategy
    from graphflow.strategies.parallel import ParallelStrategy
    from graphflow.strategies.react import ReactStrategy
    from graphflow.strategies.routing import RoutingStrategy
    from graphflow.strategies.sequential import SequentialStrategy

    builtins: dict[type, builder.FlowGraphBuildingStrategy] = {
        ReactAgent: ReactStrategy(),
        SequentialAgent: SequentialStrategy(),
        ParallelAgent: ParallelStrategy(),
        LoopAgent: LoopStrategy(),
        LlmRoutingAgent: RoutingStrategy(),
        FunctionAgent: FunctionStrategy(),
    }
    for agent_type, strategy in builtins.items():
        builder._REGISTRY.setdefault(agent_type, strategy)  # type: ignore[arg-type]
