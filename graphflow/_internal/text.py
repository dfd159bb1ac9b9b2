"""Text that every encoder takes: lone surrogates (undecodable bytes) become U+FFFD.

Python keeps bytes that are not UTF-8 as lone surrogates when it decodes them with
`errors="surrogateescape"` (file names, `os.listdir`, subprocess output, command-line
arguments), and a JSON `\\ud800` escape from a server decodes to one too. No model request can
carry such text (the HTTP client's UTF-8 encoding fails with a raw `UnicodeEncodeError`), and a
checkpoint stores each as `?`. Text handed to a model, or received from one, goes through
`valid_text` first.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ("valid_text", "valid_values")

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (the same object when it has none)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def valid_values(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with `valid_text` applied to every string.

    The same object when nothing had to change.
    """
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        items = [(valid_values(k), valid_values(v)) for k, v in value.items()]
        pairs = zip(items, value.items(), strict=True)
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in pairs):
            return value
        return dict(items)
    if isinstance(value, list):
        out = [valid_values(v) for v in value]
        return out if any(a is not b for a, b in zip(out, value, strict=True)) else value
    return value
