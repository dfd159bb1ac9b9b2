"""Every public name of graphflow, imported for real, and the layers wired together.

`graphflow/__init__.py` loads this module on the first use of one of its names (so that
`graphflow --help` starts without LangGraph); `graphflow.agents.seam` loads it before the
first agent method runs. Importing it registers the built-in strategies (by importing
`graphflow.strategies`) and installs the run facade agents delegate to.
"""

# ruff: noqa: F401 - every name is imported to be re-exported by graphflow/__init__.py

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
from graphflow.agents.seam import install as _install_runtime
from graphflow.checkpoint import CheckpointInfo, RunInfo, allow_types
from graphflow.context import (
    ContextStats,
    HybridContext,
    LoopBreaker,
    ObservationMasking,
    Summarization,
    count_tokens,
)
from graphflow.exceptions import (
    AgentRunError,
    AgentSpecError,
    CallLimitExceeded,
    CheckpointStoreError,
    CheckpointTypeError,
    DataflowError,
    GraphflowConfigError,
    GraphflowError,
    InputError,
    InstructionTemplateError,
    InvalidToolParamError,
    LeaseLostError,
    MCPConnectionError,
    ModelAuthError,
    ModelCallError,
    ModelCallLimitExceeded,
    ModelConnectionError,
    ModelRateLimitError,
    ModelRequestError,
    ModelServerError,
    ModelTimeoutError,
    OffloadKeyError,
    OutputValidationError,
    ParallelBranchError,
    RendererMissingError,
    RoutingError,
    RunNotFoundError,
    RunStateError,
    StateValueError,
    ThreadBusyError,
    ToolCallLimitExceeded,
    ToolError,
    ToolPermissionError,
    ToolResourceNotFoundError,
    ToolTimeoutError,
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
from graphflow.models import openai_model
from graphflow.runtime import CompiledAgent
from graphflow.runtime import Runtime as _Runtime
from graphflow.spec import SpecError, load_spec
from graphflow.strategies import (
    BuildContext,
    FlowGraphBuilder,
    FlowGraphBuildingStrategy,
    register_strategy,
)
from graphflow.tools import ToolErrorType, ToolPolicy, ToolResult, exit_loop, tool_result

_install_runtime(_Runtime())
