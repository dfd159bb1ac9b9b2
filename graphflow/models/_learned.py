"""What graphflow learned about an endpoint from its errors, per (client class, base URL, model).

`structured_output="auto"` remembers the method that worked, and the compatible ChatOpenAI
remembers that tool-only messages need string content, so the next call goes straight to what
works. Process-wide and thread-safe; `forget_learned()` clears it.
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_methods: dict[tuple[str, str, str], str] = {}
_string_content: set[tuple[str, str, str]] = set()


def base_url_of(model: Any) -> str | None:
    """The endpoint a LangChain chat model talks to, when it says."""
    for attr in ("openai_api_base", "base_url", "api_base", "endpoint"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    # ChatOpenAI without base_url: the SDK client read OPENAI_BASE_URL (or its default) itself
    client = getattr(model, "root_client", None)
    url = getattr(client, "base_url", None)
    return str(url).rstrip("/") if url else None


def model_name_of(model: Any) -> str:
    """The model name a LangChain chat model sends."""
    for attr in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def model_key(model: Any) -> tuple[str, str, str]:
    return (type(model).__name__, base_url_of(model) or "", model_name_of(model))


def learned_method(model: Any) -> str | None:
    with _lock:
        return _methods.get(model_key(model))


def remember_method(model: Any, method: str) -> None:
    with _lock:
        _methods[model_key(model)] = method


def needs_string_content(model: Any) -> bool:
    with _lock:
        return model_key(model) in _string_content


def remember_string_content(model: Any) -> None:
    with _lock:
        _string_content.add(model_key(model))


def forget_learned() -> None:
    with _lock:
        _methods.clear()
        _string_content.clear()
