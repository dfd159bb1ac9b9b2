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
from graphflow.agents._runtime import install as _install_runtime
from graphflow.checkpoint import CheckpointInfo, CheckpointTypeError, RunInfo
from graphflow.exceptions import (
    AgentRunError,
    CallLimitExceeded,
    DataflowError,
    GraphflowConfigError,
    GraphflowError,
    InstructionTemplateError,
    ModelCallLimitExceeded,
    OutputValidationError,
    ParallelBranchError,
    RoutingError,
    ToolCallLimitExceeded,
    ToolError,
)
from graphflow.hooks import (
    AgentContext,
    AgentHook,
    HookResult,
    HumanApproval,
    LoggingHook,
    ModelCallLimit,
    ModelFallback,
    ModelHook,
    ModelRequest,
    ModelRetry,
    ToolCallLimit,
    ToolCallRequest,
    ToolHook,
)
from graphflow.messages import instruction_message, is_instruction
from graphflow.runtime import Runtime
from graphflow.strategies import (
    BuildContext,
    FlowGraphBuilder,
    FlowGraphBuildingStrategy,
    register_strategy,
)
from graphflow.tools import exit_loop

_install_runtime(Runtime())

__all__ = (
    "Agent",
    "AgentContext",
    "AgentHook",
    "AgentRunError",
    "BuildContext",
    "CallLimitExceeded",
    "CheckpointInfo",
    "CheckpointTypeError",
    "DataflowError",
    "FlowGraphBuilder",
    "FlowGraphBuildingStrategy",
    "FunctionAgent",
    "GraphflowConfigError",
    "GraphflowError",
    "HookResult",
    "HumanApproval",
    "InstructionTemplateError",
    "LlmRoutingAgent",
    "LoggingHook",
    "LoopAgent",
    "ModelCallLimit",
    "ModelCallLimitExceeded",
    "ModelFallback",
    "ModelHook",
    "ModelRequest",
    "ModelRetry",
    "OutputValidationError",
    "ParallelAgent",
    "ParallelBranchError",
    "ReactAgent",
    "RoutingError",
    "RunInfo",
    "SequentialAgent",
    "ToolCallLimit",
    "ToolCallLimitExceeded",
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
