"""Chat models for graphflow agents: OpenAI-compatible endpoints that work out of the box.

* `openai_model(...)` / `resolve_model(...)` — build a `CompatibleChatOpenAI` from an
  `"openai:<model>"` (or `"<provider>:<model>"`) string, arguments, `model_settings` and
  environment variables (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `GRAPHFLOW_MODEL`,
  `GRAPHFLOW_MAX_TOKENS`, `GRAPHFLOW_MODEL_TIMEOUT`, `GRAPHFLOW_MODEL_RETRIES`,
  `GRAPHFLOW_PROVIDER`).
* `ProviderPreset`, `get_preset`, `register_preset` — the provider table (OpenAI,
  DashScope/Qwen, DeepSeek, vLLM, Ollama, llama.cpp).
* `invoke_structured` / `invoke_chat` — structured output by `json_schema`, `function_calling`,
  `json_mode` or `prompt`, with `auto` falling back on rejections and remembering what works.
* `explain_model_error` / `model_call_errors` — provider errors as `ModelCallError`s.
* `compatible(model)` — any LangChain `BaseChatOpenAI` with the same fixes and reply checks
  (agents apply it to the models they are given).

See docs/openai-compatible.md.
"""

from typing import TYPE_CHECKING, Any

from graphflow.models._learned import forget_learned
from graphflow.models.errors import (
    agent_path_of,
    explain_model_error,
    is_format_rejection,
    model_call_errors,
)
from graphflow.models.options import CLIENT_OPTIONS, DEFAULT_TIMEOUT, MODEL_OPTIONS
from graphflow.models.presets import (
    GENERIC_PRESET,
    ProviderPreset,
    StructuredMethod,
    detect_preset,
    get_preset,
    preset_names,
    register_preset,
)
from graphflow.models.resolve import (
    check_chat_model_name,
    check_model,
    openai_model,
    parse_model_string,
    require_api_key,
    resolve_model,
)
from graphflow.models.structured import (
    STRUCTURED_OUTPUT_METHODS,
    StructuredOutput,
    ainvoke_chat,
    ainvoke_structured,
    invoke_chat,
    invoke_structured,
    parse_structured,
    schema_note,
    structured_methods,
)

__all__ = (
    "CLIENT_OPTIONS",
    "DEFAULT_TIMEOUT",
    "GENERIC_PRESET",
    "MODEL_OPTIONS",
    "STRUCTURED_OUTPUT_METHODS",
    "CompatibleChatOpenAI",
    "CompatibleMixin",
    "ProviderPreset",
    "StructuredMethod",
    "StructuredOutput",
    "agent_path_of",
    "ainvoke_chat",
    "ainvoke_structured",
    "check_chat_model_name",
    "check_model",
    "compatible",
    "detect_preset",
    "explain_model_error",
    "forget_learned",
    "get_preset",
    "invoke_chat",
    "invoke_structured",
    "is_format_rejection",
    "model_call_errors",
    "openai_model",
    "parse_model_string",
    "parse_structured",
    "preset_names",
    "register_preset",
    "repair_tool_names",
    "require_api_key",
    "resolve_model",
    "schema_note",
    "structured_methods",
)

if TYPE_CHECKING:
    from graphflow.models.chat_openai import (
        CompatibleChatOpenAI,
        CompatibleMixin,
        compatible,
        repair_tool_names,
    )


def __getattr__(name: str) -> Any:
    # langchain-openai (and the openai SDK) load only when a model is built: `import graphflow`
    # stays fast for teams on other chat models
    if name in ("CompatibleChatOpenAI", "CompatibleMixin", "compatible", "repair_tool_names"):
        from graphflow.models import chat_openai

        return getattr(chat_openai, name)
    raise AttributeError(f"module 'graphflow.models' has no attribute {name!r}")
