"""Turn whatever a tool returned into message content, predictably, and truncate long results.

* `str` stays as it is; LangChain content blocks (a list of `{"type": "text" | "image" ...}`)
  stay blocks.
* `bytes` become their UTF-8 text when they are text, else `base64:<data>` with a note.
* pydantic models, dataclasses, dicts, lists, tuples, sets, numbers, booleans and None become
  JSON (`ensure_ascii=False`, keys in insertion order; sets sorted; dates in ISO format;
  anything else by `str()`).
* Text longer than `max_chars` keeps its first `max_chars` characters and ends with a note
  saying how much was cut, so the model knows the result is incomplete.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import json
from collections.abc import Mapping
from enum import Enum
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel

__all__ = ("serialize_result", "truncate")


def serialize_result(value: Any, *, max_chars: int | None = None) -> str | list[Any]:
    """Message content for a tool's return value (see the module docstring)."""
    if isinstance(value, list) and value and all(_is_block(v) for v in value):
        return [
            {**v, "text": truncate(v["text"], max_chars)}
            if isinstance(v, dict) and isinstance(v.get("text"), str)
            else v
            for v in value
        ]
    return truncate(_to_text(value), max_chars)


def truncate(text: str, max_chars: int | None) -> str:
    """`text`, cut to `max_chars` characters plus a note when it is longer."""
    if max_chars is None or len(text) <= max_chars:
        return text
    cut = len(text) - max_chars
    return (
        f"{text[:max_chars]}\n[... result truncated: {cut} of {len(text)} characters omitted; "
        "ask for a smaller part if you need the rest]"
    )


def _is_block(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, dict) and isinstance(value.get("type"), str)
    )


def _to_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return (
                f"[binary data, {len(raw)} bytes, base64-encoded]\n"
                f"base64:{base64.b64encode(raw).decode('ascii')}"
            )
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, ensure_ascii=False, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        try:
            return sorted(value)
        except TypeError:
            return sorted(value, key=repr)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, bytes):
        return _to_text(value)
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)
