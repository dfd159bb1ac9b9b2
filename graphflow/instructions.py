"""Instruction templates: `{key}` placeholders filled from state, `{key?}` optional, `{{`/`}}` literal.

Templates are parsed when an agent is defined, so a malformed template fails at once, and the
placeholders are known before the tree is built, so an unknown key fails before any model call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from graphflow.exceptions import InstructionTemplateError

__all__ = ("Placeholder", "parse_template", "render_template", "render_value")

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, kw_only=True)
class Placeholder:
    """One `{key}` or `{key?}` in a template."""

    name: str
    """The state key whose value is substituted."""
    optional: bool
    """`{key?}`: render as empty text when the key is absent or None."""


def parse_template(template: str) -> tuple[str | Placeholder, ...]:
    """Split a template into literal text and placeholders.

    Raises:
        InstructionTemplateError: on an unmatched brace or a placeholder that is not a name.
    """
    parts: list[str | Placeholder] = []
    pos = 0
    for match in _TOKEN.finditer(template):
        parts.append(template[pos : match.start()])
        pos = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            parts.append(token[0])
            continue
        if token in ("{", "}"):
            raise InstructionTemplateError(
                f"unmatched {token!r} at position {match.start()} in instruction {template!r}; "
                "write {{ or }} for a literal brace"
            )
        body = match.group(1).strip()
        optional = body.endswith("?")
        name = body[:-1].strip() if optional else body
        if not _NAME.fullmatch(name):
            raise InstructionTemplateError(
                f"placeholder {token!r} in instruction {template!r} is not a state key name; "
                "use {key} or {key?} with a Python identifier, or {{ }} for literal braces"
            )
        parts.append(Placeholder(name=name, optional=optional))
    parts.append(template[pos:])
    return tuple(p for p in parts if p != "")


def render_value(value: Any) -> str:
    """Render a state value as instruction text: messages by their text, models as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseMessage):
        return value.text
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, list) and value and all(isinstance(v, BaseMessage) for v in value):
        return "\n".join(v.text for v in value)
    try:
        return json.dumps(value, ensure_ascii=False, default=_default)
    except TypeError:
        return str(value)


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, BaseMessage):
        return value.text
    raise TypeError


def render_template(
    parts: tuple[str | Placeholder, ...], state: Mapping[str, Any], *, agent: str
) -> str:
    """Fill a parsed template from state.

    Raises:
        KeyError: a required placeholder has no value in state (the build-time check makes this
            rare: it happens when a declared input key is not supplied).
    """
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        value = state.get(part.name)
        if value is None and not part.optional:
            raise KeyError(
                f"Agent `{agent}`: instruction needs {{{part.name}}} but state has no value for it; "
                f"pass it in the input (e.g. invoke({{'{part.name}': ...}})) or write it as "
                f"{{{part.name}?}} to make it optional"
            )
        out.append(render_value(value))
    return "".join(out)
