"""graphflow: declarative multi-agent teams that compile to one LangGraph `StateGraph`."""

from graphflow.agents import (
    Agent,
    FunctionAgent,
    LlmRoutingAgent,
    LoopAgent,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
    output_contains,
)
from graphflow.exceptions import (
    AgentRunError,
    DataflowError,
    GraphflowConfigError,
    GraphflowError,
    InstructionTemplateError,
    OutputValidationError,
    ParallelBranchError,
    RoutingError,
    ToolError,
)
from graphflow.hooks import (
    AgentContext,
    AgentHook,
    HookResult,
    ModelHook,
    ModelRequest,
    ToolCallRequest,
    ToolHook,
)
from graphflow.messages import instruction_message, is_instruction
from graphflow.strategies import (
    BuildContext,
    FlowGraphBuilder,
    FlowGraphBuildingStrategy,
    register_strategy,
)
from graphflow.tools import exit_loop

__all__ = (
    "Agent",
    "AgentContext",
    "AgentHook",
    "AgentRunError",
    "BuildContext",
    "DataflowError",
    "FlowGraphBuilder",
    "FlowGraphBuildingStrategy",
    "FunctionAgent",
    "GraphflowConfigError",
    "GraphflowError",
    "HookResult",
    "InstructionTemplateError",
    "LlmRoutingAgent",
    "LoopAgent",
    "ModelHook",
    "ModelRequest",
    "OutputValidationError",
    "ParallelAgent",
    "ParallelBranchError",
    "ReactAgent",
    "RoutingError",
    "SequentialAgent",
    "ToolCallRequest",
    "ToolError",
    "ToolHook",
    "exit_loop",
    "instruction_message",
    "is_instruction",
    "output_contains",
    "register_strategy",
)

__version__ = "0.1.0"
