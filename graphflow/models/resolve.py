"""Building chat models from `"openai:<model>"` strings, settings and environment variables.

Every option comes, first match wins, from: an argument of `openai_model(...)` (or the agent's
`model_settings`), then the environment, then the provider preset:

| option | environment | default |
|---|---|---|
| model name | `GRAPHFLOW_MODEL` (for `openai_model()` without a name) | required |
| provider | `GRAPHFLOW_PROVIDER` | detected from the base URL |
| base_url | `OPENAI_BASE_URL` (an explicit provider's own URL wins over it) | the preset's |
| api_key | the preset's key variable (`DEEPSEEK_API_KEY`...); `OPENAI_API_KEY` unless the provider was named | local servers: a dummy key |
| timeout (s) | `GRAPHFLOW_MODEL_TIMEOUT` | 120 |
| max_retries | `GRAPHFLOW_MODEL_RETRIES` | 2 (429, 5xx, timeouts, dropped connections; with backoff) |
| max_tokens | `GRAPHFLOW_MAX_TOKENS` | the server's |
| temperature, extra_body, default_headers | — | the server's |
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from langchain_core.language_models import BaseChatModel

from graphflow.exceptions import GraphflowConfigError
from graphflow.models._api_key import require_api_key
from graphflow.models.options import CLIENT_OPTIONS, DEFAULT_TIMEOUT, MODEL_OPTIONS
from graphflow.models.presets import ProviderPreset, detect_preset, get_preset, preset_names

if TYPE_CHECKING:
    from graphflow.models.chat_openai import CompatibleChatOpenAI

__all__ = (
    "check_chat_model_name",
    "check_model",
    "openai_model",
    "parse_model_string",
    "require_api_key",
    "resolve_model",
)

# model names that exist on OpenAI-compatible endpoints but cannot chat
_NOT_CHAT = re.compile(
    r"(^|[-_/])(text-)?embed|^gpt-3\.5-turbo-instruct|^(text-)?(davinci|babbage|curie|ada)\b|"
    r"^(tts|whisper|dall-e|gpt-image|omni-moderation|text-moderation)|rerank",
    re.IGNORECASE,
)
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0", "host.docker.internal")


def _who(agent: str | None) -> str:
    return f"Agent `{agent}`: " if agent else ""


def parse_model_string(value: str, *, agent: str | None = None) -> tuple[str, str]:
    """Split `"provider:model"` into its parts, checking both.

    `openai:` means "speaks the OpenAI API" (any endpoint, via `OPENAI_BASE_URL`); a preset name
    (`deepseek:deepseek-chat`, `ollama:qwen2.5`, `dashscope:qwen-plus`) also picks its base URL
    and key.

    Raises:
        GraphflowConfigError: no provider, an unknown provider, no model name, or a model that
            cannot chat (an embedding, completion, speech or image model).
    """
    provider, sep, name = value.partition(":")
    name = name.strip()
    if not sep or not provider:
        raise GraphflowConfigError(
            f"{_who(agent)}model {value!r}: use 'openai:<model name>' (any OpenAI-compatible "
            "endpoint via OPENAI_BASE_URL), '<provider>:<model name>' with a provider of "
            f"{', '.join(preset_names())}, or pass a LangChain chat model instance"
        )
    try:
        get_preset(provider)
    except GraphflowConfigError as exc:
        raise GraphflowConfigError(
            f"{_who(agent)}model {value!r}: {exc}; for other providers pass a LangChain chat "
            "model instance"
        ) from None
    if not name:
        raise GraphflowConfigError(
            f"{_who(agent)}model {value!r} names no model; write e.g. '{provider}:gpt-4o-mini' "
            "or use graphflow.models.openai_model(), which reads GRAPHFLOW_MODEL"
        )
    check_chat_model_name(name, agent=agent)
    return provider, name


def check_chat_model_name(name: str, *, agent: str | None = None) -> None:
    """Reject model names that are known not to be chat models."""
    if _NOT_CHAT.search(name):
        raise GraphflowConfigError(
            f"{_who(agent)}model {name!r} is not a chat model (an embedding, completion, speech, "
            "image or moderation model); agents need a chat model such as gpt-4o-mini, "
            "qwen-plus, deepseek-chat or an instruct model served by vLLM/Ollama/llama.cpp"
        )


def check_model(value: Any, *, agent: str | None = None) -> None:
    """Check an agent's `model` value when the spec is built.

    Raises:
        GraphflowConfigError: a malformed `"provider:model"` string, or an object that is not a
            LangChain chat model.
    """
    if isinstance(value, str):
        parse_model_string(value, agent=agent)
    elif not isinstance(value, BaseChatModel):
        hint = (
            " (a completion LLM: use its chat variant, e.g. ChatOpenAI instead of OpenAI)"
            if _is_completion_llm(value)
            else ""
        )
        raise GraphflowConfigError(
            f"{_who(agent)}model is a {type(value).__name__}, not a chat model{hint}; pass a "
            "LangChain BaseChatModel instance or an 'openai:<model name>' string"
        )


def _is_completion_llm(value: Any) -> bool:
    try:
        from langchain_core.language_models import BaseLLM
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, BaseLLM)


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _number(value: Any, what: str, *, kind: type, minimum: float, agent: str | None) -> Any:
    try:
        number = kind(value)
    except (TypeError, ValueError):
        number = None
    if number is None or number < minimum or isinstance(value, bool):
        bound = "a positive" if minimum > 0 else "a non-negative"
        raise GraphflowConfigError(
            f"{_who(agent)}{what} is {value!r}; expected {bound} "
            f"{'integer' if kind is int else 'number'}"
        )
    return number


def _option(
    given: Any, env: str, what: str, *, kind: type, minimum: float, agent: str | None
) -> Any:
    if given is not None:
        return _number(given, what, kind=kind, minimum=minimum, agent=agent)
    raw = _env(env)
    if raw is None:
        return None
    return _number(raw, f"{env}={raw!r}", kind=kind, minimum=minimum, agent=agent)


def _is_local(base_url: str) -> bool:
    host = (urlsplit(base_url if "//" in base_url else f"//{base_url}").hostname or "").lower()
    return host in _LOCAL_HOSTS or host.endswith(".local") or host.endswith(".internal")


def _api_key(
    given: str | None,
    preset: ProviderPreset,
    base_url: str | None,
    label: str,
    agent: str | None,
    *,
    named: bool,
) -> tuple[str, str | None]:
    """The key to send, and — when there is none — why (raised by the model's first call)."""
    # a provider named explicitly reads only its own key variable: an OpenAI key is never sent
    # to another company's endpoint unless the user pointed OPENAI_BASE_URL (or base_url) there
    generic = not named or preset.api_key_env == "OPENAI_API_KEY"
    key = (
        given
        or _env(preset.api_key_env)
        or (_env("OPENAI_API_KEY") if generic else None)
        or preset.default_api_key
    )
    if key:
        return key, None
    if base_url and _is_local(base_url):
        return "not-needed", None  # local servers ignore the key, the SDK insists on one
    where = f" (endpoint {base_url})" if base_url else ""
    env = (
        preset.api_key_env
        if preset.api_key_env == "OPENAI_API_KEY" or not generic
        else f"{preset.api_key_env} or OPENAI_API_KEY"
    )
    return _NO_KEY, (
        f"{_who(agent)}model {label!r} needs an API key{where}: set {env} (and OPENAI_BASE_URL "
        "for a non-OpenAI endpoint such as DashScope, DeepSeek, vLLM or Ollama), pass api_key=, "
        "or pass a chat model instance (graphflow.testing.ScriptedChatModel for tests)"
    )


_NO_KEY = "graphflow-no-api-key"  # the SDK client insists on a key; this one is never sent


def openai_model(
    model: str | None = None,
    *,
    provider: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    extra_body: Mapping[str, Any] | None = None,
    default_headers: Mapping[str, str] | None = None,
    agent: str | None = None,
    **kwargs: Any,
) -> CompatibleChatOpenAI:
    """A chat model for any OpenAI-compatible endpoint, configured from arguments and environment.

    Args:
        model: the model name (default: `GRAPHFLOW_MODEL`).
        provider: a preset name (`openai`, `dashscope`/`qwen`, `deepseek`, `vllm`, `ollama`,
            `llamacpp`); default `GRAPHFLOW_PROVIDER`, else detected from the base URL.
        base_url: the endpoint (default: `OPENAI_BASE_URL`, else the preset's).
        api_key: the key (default: the preset's variable, then `OPENAI_API_KEY`).
        timeout: seconds per attempt (default `GRAPHFLOW_MODEL_TIMEOUT`, else 120).
        max_retries: retries of 429/5xx/timeouts/dropped connections, with exponential backoff
            honouring `Retry-After` (default `GRAPHFLOW_MODEL_RETRIES`, else 2).
        max_tokens: reply length limit, sent in the field the provider reads
            (default `GRAPHFLOW_MAX_TOKENS`).
        temperature: sampling temperature.
        extra_body: extra JSON fields for the server (vLLM's `guided_json`, DashScope's
            `enable_thinking`...).
        default_headers: headers sent with every request.
        agent: the agent this model is for (named in error messages).
        **kwargs: any other `ChatOpenAI` field (`top_p`, `seed`, `model_kwargs`, ...) or
            `CompatibleChatOpenAI` field (`string_tool_content`, `max_tokens_field`).

    Raises:
        GraphflowConfigError: no model name, a non-chat model, an unknown provider, a bad
            number. A missing API key for a remote endpoint is raised (as this error) by the
            model's first call, so a team can be built, drawn and validated without one.
    """
    name = (model or _env("GRAPHFLOW_MODEL") or "").strip()
    if not name:
        raise GraphflowConfigError(
            f"{_who(agent)}no model name: pass openai_model('<model name>') or set GRAPHFLOW_MODEL"
        )
    check_chat_model_name(name, agent=agent)
    provider = provider or _env("GRAPHFLOW_PROVIDER")
    preset = get_preset(provider) if provider else None
    if base_url is None:
        # an explicit provider keeps its own endpoint even when OPENAI_BASE_URL points elsewhere
        base_url = (preset.base_url if preset and preset.base_url else None) or _env(
            "OPENAI_BASE_URL"
        )
        if base_url is None and preset is not None:
            base_url = preset.base_url
    named = preset is not None
    preset = preset or detect_preset(base_url)
    label = f"{provider or 'openai'}:{name}"
    key, missing = _api_key(api_key, preset, base_url, label, agent, named=named)
    options: dict[str, Any] = {
        "model": name,
        "base_url": base_url,
        "api_key": key,
        "timeout": _option(
            timeout, "GRAPHFLOW_MODEL_TIMEOUT", "timeout", kind=float, minimum=1e-9, agent=agent
        )
        or DEFAULT_TIMEOUT,
        "max_retries": _option(
            max_retries, "GRAPHFLOW_MODEL_RETRIES", "max_retries", kind=int, minimum=0, agent=agent
        ),
        "max_tokens": _option(
            max_tokens, "GRAPHFLOW_MAX_TOKENS", "max_tokens", kind=int, minimum=1, agent=agent
        ),
        "temperature": temperature,
        "extra_body": dict(extra_body) if extra_body else None,
        "default_headers": dict(default_headers) if default_headers else None,
        "provider": provider,
    }
    if options["max_retries"] is None:
        options["max_retries"] = 2
    if preset.name != "openai":
        # the Responses API exists only at OpenAI
        kwargs.setdefault("use_responses_api", False)
    options = {k: v for k, v in options.items() if v is not None}
    from graphflow.models.chat_openai import CompatibleChatOpenAI  # langchain-openai: import on use

    try:
        built = CompatibleChatOpenAI(**options, **kwargs)
    except (TypeError, ValueError) as exc:
        raise GraphflowConfigError(f"{_who(agent)}model {label!r}: {exc}") from exc
    # no key: building, drawing and validating a team work; the first call says what to set
    built._missing_key = missing
    return built


def _compatible(model: BaseChatModel) -> BaseChatModel:
    """A `BaseChatOpenAI` with the compatibility fixes (see `chat_openai.compatible`)."""
    if not _is_openai_model(model):
        return model  # (langchain-openai not imported means no model can be one)
    from graphflow.models.chat_openai import compatible  # langchain-openai: import on use

    return compatible(model)


def _is_openai_model(model: Any) -> bool:
    base = sys.modules.get("langchain_openai.chat_models.base")
    return base is not None and isinstance(model, base.BaseChatOpenAI)


def resolve_model(
    model: BaseChatModel | str, *, agent: str, settings: Mapping[str, Any] | None = None
) -> BaseChatModel:
    """The chat model an agent uses: instances pass through, strings are built.

    A `"provider:model"` string becomes a `CompatibleChatOpenAI` configured from `settings` (the
    agent's `model_settings`: any of `MODEL_OPTIONS` and `ChatOpenAI` fields; other keys are the
    provider's own parameters and go to `extra_body`), the environment and the preset.

    Raises:
        GraphflowConfigError: see `openai_model`; also client options (`base_url`, `api_key`,
            `max_retries`, `default_headers`, `provider`) in the settings of a model instance,
            which cannot apply them.
    """
    settings = dict(settings or {})
    if not isinstance(model, str):
        check_model(model, agent=agent)
        client_only = sorted(k for k in settings if k in CLIENT_OPTIONS)
        if client_only:
            raise GraphflowConfigError(
                f"Agent `{agent}`: model_settings {client_only} configure a client and apply "
                "only to 'openai:<model>' strings; pass them to the chat model's constructor"
            )
        return _compatible(model)
    provider, name = parse_model_string(model, agent=agent)
    named = {k: settings.pop(k) for k in list(settings) if k in MODEL_OPTIONS}
    from graphflow.models.chat_openai import field_names  # langchain-openai: import on use

    fields = field_names()
    extra = {k: settings.pop(k) for k in list(settings) if k in fields}
    if settings:
        # a provider's own parameters (vLLM's top_k...): the OpenAI SDK sends them as body fields
        # only from extra_body (as keyword arguments of create() they are a TypeError)
        named["extra_body"] = {**settings, **dict(named.get("extra_body") or {})}
    if provider != "openai":
        named.setdefault("provider", provider)
    return openai_model(name, agent=agent, **named, **extra)
