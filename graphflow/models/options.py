"""The option names and defaults shared by the model builders."""

from __future__ import annotations

__all__ = ("CLIENT_OPTIONS", "DEFAULT_TIMEOUT", "MODEL_OPTIONS")

DEFAULT_TIMEOUT = 120.0
"""Seconds a model call may take before it fails with `ModelTimeoutError` (after retries)."""

MODEL_OPTIONS = (
    "provider",
    "base_url",
    "api_key",
    "timeout",
    "max_retries",
    "max_tokens",
    "temperature",
    "extra_body",
    "default_headers",
)
"""Options `openai_model` takes by name; an agent's `model_settings` may hold any of them."""

CLIENT_OPTIONS = ("provider", "base_url", "api_key", "max_retries", "default_headers")
"""Options that configure the client, not a request: applied when an `"openai:"` model is built,
dropped when they arrive as call-time settings, and an error in the settings of a model instance."""
