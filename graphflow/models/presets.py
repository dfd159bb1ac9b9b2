"""Provider presets: what graphflow knows about well-known OpenAI-compatible servers.

A preset says where a provider lives, which key it reads, which structured-output methods its
server accepts (the order `structured_output="auto"` tries them in) and which quirks its
messages need. The table is data, not code: look a preset up with `get_preset`, change it with
`register_preset(dataclasses.replace(get_preset("deepseek"), ...))`, or add your own.

A model picks its preset by name (`provider="deepseek"`, a `"deepseek:<model>"` string, or
`GRAPHFLOW_PROVIDER`), else from its base URL's host (`api.deepseek.com`, `:11434` for Ollama),
else the generic `openai-compatible` preset (or `openai` when no base URL is set).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from graphflow.exceptions import GraphflowConfigError

__all__ = (
    "GENERIC_PRESET",
    "ProviderPreset",
    "StructuredMethod",
    "detect_preset",
    "get_preset",
    "preset_names",
    "register_preset",
)

StructuredMethod = Literal["json_schema", "function_calling", "json_mode", "prompt"]
"""How a structured reply is asked for: `response_format` json_schema, a forced tool call,
`response_format` json_object plus the schema in the prompt, or the schema in the prompt only."""

_ALL_METHODS: tuple[StructuredMethod, ...] = (
    "json_schema",
    "function_calling",
    "json_mode",
    "prompt",
)


@dataclass(frozen=True, kw_only=True)
class ProviderPreset:
    """Settings and quirks of one OpenAI-compatible provider."""

    name: str
    """Identifier used in `provider=` and in `"<name>:<model>"` strings."""
    base_url: str | None
    """Default endpoint (`None`: the OpenAI SDK default); `OPENAI_BASE_URL` or `base_url=` win."""
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the key (`OPENAI_API_KEY` is always tried after it)."""
    default_api_key: str | None = None
    """Key used when none is set (local servers accept any key); None means a key is required."""
    structured_output: tuple[StructuredMethod, ...] = _ALL_METHODS
    """Methods `structured_output="auto"` tries, best first; a rejected one falls to the next."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """Request field that carries `max_tokens` (OpenAI: `max_completion_tokens`; most others read
    only `max_tokens` and silently ignore the other)."""
    string_tool_content: bool = False
    """Send `content: ""` instead of `null` for AI messages that only call tools."""
    hosts: tuple[str, ...] = ()
    """Base-URL hosts (`host` or `:port`) that identify this provider."""
    notes: str = ""
    """What a user should know (shown in the docs)."""

    def __post_init__(self) -> None:
        unknown = [m for m in self.structured_output if m not in _ALL_METHODS]
        if unknown or not self.structured_output:
            raise GraphflowConfigError(
                f"preset {self.name!r}: structured_output {self.structured_output!r} must list "
                f"one or more of {', '.join(_ALL_METHODS)}"
            )


GENERIC_PRESET = ProviderPreset(
    name="openai-compatible",
    base_url=None,
    notes="Any other server: every method is tried in order; quirks are learned from errors.",
)

_BUILT_IN = (
    ProviderPreset(
        name="openai",
        base_url=None,
        max_tokens_field="max_completion_tokens",
        hosts=("api.openai.com",),
        notes="Supports every method; json_schema is tried first.",
    ),
    ProviderPreset(
        name="dashscope",
        base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
        api_key_env="DASHSCOPE_API_KEY",
        structured_output=("function_calling", "json_mode", "prompt"),
        hosts=("dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com"),
        notes="Alibaba Cloud Model Studio (Qwen). International accounts use "
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1. json_object needs the word "
        "JSON in the prompt (graphflow's schema note has it).",
    ),
    ProviderPreset(
        name="deepseek",
        base_url="https://api.deepseek.com/v1",
        api_key_env="DEEPSEEK_API_KEY",
        structured_output=("function_calling", "json_mode", "prompt"),
        hosts=("api.deepseek.com",),
        notes="No json_schema response format; deepseek-reasoner has no tool calling "
        "(auto then falls back to json_mode).",
    ),
    ProviderPreset(
        name="vllm",
        base_url="http://localhost:8000/v1",
        default_api_key="EMPTY",
        structured_output=("json_schema", "json_mode", "function_calling", "prompt"),
        notes="json_schema uses guided decoding. Tool calling with tool_choice='auto' needs "
        "`vllm serve --enable-auto-tool-choice --tool-call-parser <parser>`.",
    ),
    ProviderPreset(
        name="ollama",
        base_url="http://localhost:11434/v1",
        default_api_key="ollama",
        structured_output=("json_schema", "json_mode", "prompt"),
        hosts=(":11434",),
        notes="Ignores tool_choice, so a forced tool call is not offered to auto.",
    ),
    ProviderPreset(
        name="llamacpp",
        base_url="http://localhost:8080/v1",
        default_api_key="sk-no-key-required",
        structured_output=("json_mode", "prompt", "function_calling"),
        string_tool_content=True,
        notes="llama.cpp's llama-server (default port 8080) and llama-cpp-python's "
        "llama_cpp.server (port 8000): response_format only knows text/json_object, tool-only "
        "messages need string content, streamed tool calls repeat their name (graphflow "
        "repairs it for every provider).",
    ),
)

_ALIASES = {"qwen": "dashscope", "llama.cpp": "llamacpp", "llama_cpp": "llamacpp"}
_lock = threading.Lock()
_presets: dict[str, ProviderPreset] = {p.name: p for p in (*_BUILT_IN, GENERIC_PRESET)}


def register_preset(preset: ProviderPreset, *, aliases: tuple[str, ...] = ()) -> None:
    """Add a preset, or replace the one with the same name (later models use it)."""
    with _lock:
        _presets[preset.name] = preset
        for alias in aliases:
            _ALIASES[alias] = preset.name


def preset_names() -> list[str]:
    """Names of the known presets (aliases not included)."""
    return sorted(_presets)


def get_preset(name: str) -> ProviderPreset:
    """The preset called `name` (or an alias such as `qwen`, `llama.cpp`)."""
    key = _ALIASES.get(name.lower(), name.lower())
    preset = _presets.get(key)
    if preset is None:
        raise GraphflowConfigError(
            f"unknown model provider {name!r}; known providers: {', '.join(preset_names())} "
            f"(aliases: {', '.join(sorted(_ALIASES))}). Register your own with "
            "graphflow.models.register_preset(ProviderPreset(...))"
        )
    return preset


def detect_preset(base_url: str | None) -> ProviderPreset:
    """The preset a base URL belongs to: by host, else `openai` (no URL) or the generic one."""
    if not base_url:
        return _presets["openai"]
    parts = urlsplit(base_url if "//" in base_url else f"//{base_url}")
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port else ""
    for preset in list(_presets.values()):
        for pattern in preset.hosts:
            if pattern.startswith(":") and pattern == port:
                return preset
            if not pattern.startswith(":") and (host == pattern or host.endswith("." + pattern)):
                return preset
    return _presets[GENERIC_PRESET.name]
