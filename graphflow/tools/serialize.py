"""Turn whatever a tool returned into message content, predictably, and truncate long results.

* `str` stays as it is; LangChain content blocks (a list of `{"type": "text" | "image" ...}`)
  stay blocks.
* `bytes` become their UTF-8 text when they are text, else `base64:<data>` with a note.
* pydantic models, dataclasses, dicts, lists, tuples, sets, numbers, booleans and None become
  JSON (`ensure_ascii=False`, keys in insertion order; sets sorted; dates in ISO format;
  anything else by `str()`).
* Text longer than `max_chars` keeps its first `max_chars` characters and ends with a note
  saying how much was cut, so the model knows the result is incomplete. For content blocks the
  bound is on the whole result: blocks are kept in order while they fit (a block's size is its
  text, or the characters of its data — an image's base64), the block that crosses the bound
  keeps the text that fits, and the rest are left out, with the note.
* Lone surrogates — bytes that were not UTF-8, decoded with `errors="surrogateescape"` (file
  names, `os.listdir`, subprocess output) — become U+FFFD: no model request can carry them
  (the next call failed with a raw `UnicodeEncodeError`), and no checkpoint stores them.
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

from graphflow._internal.text import valid_text

__all__ = ("serialize_result", "truncate")


def serialize_result(value: Any, *, max_chars: int | None = None) -> str | list[Any]:
    """Message content for a tool's return value (see the module docstring)."""
    if isinstance(value, list) and value and all(_is_block(v) for v in value):
        return _bound_blocks([_valid_block(v) for v in value], max_chars)
    return truncate(_to_text(value), max_chars)


def _valid_block(block: Any) -> Any:
    if isinstance(block, str):
        return valid_text(block)
    text = block.get("text")
    if isinstance(text, str) and valid_text(text) is not text:
        return {**block, "text": valid_text(text)}
    return block


def truncate(text: str, max_chars: int | None) -> str:
    """`text`, cut to `max_chars` characters plus a note when it is longer.

    Lone surrogates are replaced (see the module docstring).
    """
    text = valid_text(text)
    if max_chars is None or len(text) <= max_chars:
        return text
    cut = len(text) - max_chars
    return (
        f"{text[:max_chars]}\n[... result truncated: {cut} of {len(text)} characters omitted; "
        "ask for a smaller part if you need the rest]"
    )


def _bound_blocks(blocks: list[Any], max_chars: int | None) -> list[Any]:
    """The blocks, cut so that together they hold at most `max_chars` characters (+ a note)."""
    sizes = [_block_size(b) for b in blocks]
    total = sum(sizes)
    if max_chars is None or total <= max_chars:
        return list(blocks)
    out: list[Any] = []
    left = max_chars
    for block, size in zip(blocks, sizes, strict=True):
        if size <= left:
            out.append(block)
            left -= size
            continue
        text = block if isinstance(block, str) else block.get("text")
        if isinstance(text, str) and left > 0:  # the crossing block keeps what fits
            out.append(text[:left] if isinstance(block, str) else {**block, "text": text[:left]})
            left = 0
        break
    whole = sum(1 for kept, block in zip(out, blocks, strict=False) if kept is block)
    note = f"[... result truncated: {total - (max_chars - left)} of {total} characters omitted"
    if len(blocks) > 1:
        note += f"; {len(blocks) - whole} of {len(blocks)} content blocks cut or left out"
    note += "; ask for a smaller part if you need the rest]"
    last = out[-1] if out else None
    if isinstance(last, str):
        out[-1] = f"{last}\n{note}"
    elif isinstance(last, dict) and isinstance(last.get("text"), str):
        out[-1] = {**last, "text": f"{last['text']}\n{note}"}
    else:
        out.append({"type": "text", "text": note})
    return out


def _block_size(block: Any) -> int:
    """Characters a block puts before the model: its text, or its data (base64, URL...)."""
    if isinstance(block, str):
        return len(block)
    return sum(len(v) for k, v in block.items() if k != "type" and isinstance(v, str | bytes))


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
