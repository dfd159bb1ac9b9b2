"""Passwords in what graphflow shows: a store or endpoint URL, a conninfo string, a message.

`hide_passwords` masks them (`user:***@`, `password=***`) in error messages and store names,
which end up in logs and terminals. (A printed command leaves them out instead, so that it still
works with `PGPASSWORD`: `graphflow._internal.commands.without_password`.)
"""

from __future__ import annotations

import re

__all__ = ("hide_passwords",)

_URL_PASSWORD = re.compile(r"://([^:/@\s]+):[^@\s]*@")
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&\s]*")
_CONNINFO_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)")


def hide_passwords(text: str) -> str:
    """`text` with URL (`user:pass@`, `?password=`) and conninfo passwords shown as `***`."""
    text = _URL_PASSWORD.sub(r"://\1:***@", text)
    text = _QUERY_PASSWORD.sub(r"\1***", text)
    return _CONNINFO_PASSWORD.sub(r"\1***", text)
