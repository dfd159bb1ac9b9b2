"""Declarative agent specs, one kind per module."""

from graphflow.agents.base import Agent, AgentInput
from graphflow.agents.function import FunctionAgent
from graphflow.agents.loop import LoopAgent, output_contains
from graphflow.agents.parallel import MergeStrategy, ParallelAgent
from graphflow.agents.react import ReactAgent
from graphflow.agents.routing import LlmRoutingAgent
from graphflow.agents.sequential import SequentialAgent

__all__ = (
    "Agent",
    "AgentInput",
    "FunctionAgent",
    "LlmRoutingAgent",
    "LoopAgent",
    "MergeStrategy",
    "ParallelAgent",
    "ReactAgent",
    "SequentialAgent",
    "output_contains",
)
