"""Context-window sizes of well-known models, and how to name the model behind a chat model.

The table is matched by the longest prefix of the model name (`gpt-4o-mini-2024-07-18` finds
`gpt-4o-mini`). A model it does not know gets `DEFAULT_CONTEXT_WINDOW`; give a policy
`context_window=` for local models (vLLM, Ollama) whose window is smaller, or add your models to
`CONTEXT_WINDOWS`.
"""

from __future__ import annotations

from typing import Any

from graphflow.exceptions import GraphflowConfigError
from graphflow.models.presets import get_preset

__all__ = ("CONTEXT_WINDOWS", "DEFAULT_CONTEXT_WINDOW", "context_window", "model_name")

DEFAULT_CONTEXT_WINDOW = 128_000
"""Tokens assumed for a model missing from `CONTEXT_WINDOWS`."""

CONTEXT_WINDOWS: dict[str, int] = {
    # OpenAI
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    # Anthropic
    "claude-3": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    # Google
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    # DeepSeek, Qwen (DashScope)
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
    "qwen-max": 32_768,
    "qwen-plus": 131_072,
}
"""Model name prefix -> context window in tokens. Add entries for your own models."""


def model_name(model: Any) -> str | None:
    """The model name behind a chat model instance, or a model string's name (`provider:` removed)."""
    if model is None:
        return None
    if isinstance(model, str):
        provider, sep, name = model.partition(":")
        if sep and _is_provider(provider):  # "dashscope:qwen-max" is the model qwen-max
            return name
        return model
    for attribute in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return None


def _is_provider(name: str) -> bool:
    try:
        get_preset(name)
    except GraphflowConfigError:
        return False
    return True


def context_window(model: Any, override: int | None = None) -> int:
    """The context window (tokens) of `model`: `override`, the table, or the default."""
    if override is not None:
        return override
    name = (model_name(model) or "").lower().rsplit("/", 1)[-1]
    best = ""
    for prefix in CONTEXT_WINDOWS:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return CONTEXT_WINDOWS[best] if best else DEFAULT_CONTEXT_WINDOW
