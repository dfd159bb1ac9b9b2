"""graphflow: declarative multi-agent teams that compile to one LangGraph `StateGraph`.

This module is the public surface. Its names are loaded on first use (PEP 562), from
`graphflow._public`, the one place that wires graphflow's layers together: `import graphflow`
alone (the `graphflow` command's start) imports neither LangGraph nor LangChain.
"""

# ruff: noqa: F405 - the names of __all__ come from graphflow._public, loaded on first use

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphflow._public import *  # noqa: F403

__all__ = (
    "Agent",
    "AgentContext",
    "AgentHook",
    "AgentRunError",
    "AgentSpecError",
    "BuildContext",
    "CallLimitExceeded",
    "CheckpointInfo",
    "CheckpointStoreError",
    "CheckpointTypeError",
    "CompiledAgent",
    "ContextStats",
    "DataflowError",
    "FlowGraphBuilder",
    "FlowGraphBuildingStrategy",
    "FunctionAgent",
    "GraphflowConfigError",
    "GraphflowError",
    "HookResult",
    "HumanApproval",
    "HybridContext",
    "InputError",
    "InstructionTemplateError",
    "InvalidToolParamError",
    "LeaseLostError",
    "LlmRoutingAgent",
    "LoggingHook",
    "LoopAgent",
    "LoopBreaker",
    "MCPConnectionError",
    "ModelAuthError",
    "ModelCallError",
    "ModelCallLimit",
    "ModelCallLimitExceeded",
    "ModelConnectionError",
    "ModelFallback",
    "ModelHook",
    "ModelRateLimitError",
    "ModelRequest",
    "ModelRequestError",
    "ModelRetry",
    "ModelServerError",
    "ModelTimeoutError",
    "ObservationMasking",
    "OffloadKeyError",
    "OutputValidationError",
    "ParallelAgent",
    "ParallelBranchError",
    "ReactAgent",
    "RendererMissingError",
    "RoutingError",
    "RunInfo",
    "RunNotFoundError",
    "RunStateError",
    "SequentialAgent",
    "SpecError",
    "StateValueError",
    "Summarization",
    "ThreadBusyError",
    "ToolCallLimit",
    "ToolCallLimitExceeded",
    "ToolCallRequest",
    "ToolError",
    "ToolErrorType",
    "ToolHook",
    "ToolPermissionError",
    "ToolPolicy",
    "ToolResourceNotFoundError",
    "ToolResult",
    "ToolTimeoutError",
    "allow_types",
    "count_tokens",
    "exit_loop",
    "instruction_message",
    "is_instruction",
    "load_spec",
    "openai_model",
    "output_contains",
    "register_strategy",
    "tool_result",
)

__version__ = "0.2.0"


def __getattr__(name: str) -> Any:
    if name in __all__:
        import importlib

        value = getattr(importlib.import_module("graphflow._public"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graphflow' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
