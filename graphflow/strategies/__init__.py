"""Strategies that turn agent specs into LangGraph `StateGraph`s, one per agent kind."""

from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy
from graphflow.strategies.builder import FlowGraphBuilder, register_strategy, strategy_for

__all__ = (
    "BuildContext",
    "FlowGraphBuilder",
    "FlowGraphBuildingStrategy",
    "register_strategy",
    "strategy_for",
)
