"""Chat models from names: `"openai:<model>"` reaches any OpenAI-compatible endpoint."""

from __future__ import annotations

import os
from typing import Any

from langchain_core.language_models import BaseChatModel

from graphflow.exceptions import GraphflowConfigError

__all__ = ("check_model_name", "resolve_model")


def check_model_name(value: str) -> str:
    """`value` if it is a model name graphflow can build; else a `ValueError` saying why."""
    provider, sep, name = value.partition(":")
    if not sep:
        raise ValueError(
            f"model {value!r}: use 'openai:<model name>' (any OpenAI-compatible endpoint via "
            "OPENAI_BASE_URL) or pass a LangChain chat model instance"
        )
    if provider != "openai":
        raise ValueError(
            f"model {value!r}: unknown provider {provider!r}; only 'openai:' strings are built "
            "in — pass a LangChain chat model instance for other providers"
        )
    if not name.strip():
        raise ValueError(f"model {value!r} names no model; write e.g. 'openai:gpt-4o-mini'")
    return value


def resolve_model(model: BaseChatModel | str, *, agent: str, **options: Any) -> BaseChatModel:
    """Build a chat model from an `openai:<name>` string; pass instances through."""
    if not isinstance(model, str):
        return model
    if not os.environ.get("OPENAI_API_KEY"):
        raise GraphflowConfigError(
            f"Agent `{agent}`: model {model!r} needs OPENAI_API_KEY (and OPENAI_BASE_URL for a "
            "non-OpenAI endpoint such as DashScope, DeepSeek, vLLM or Ollama); set them, or pass "
            "a chat model instance (graphflow.testing.ScriptedChatModel for tests)"
        )
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model.split(":", 1)[1], base_url=os.environ.get("OPENAI_BASE_URL"), **options
    )
