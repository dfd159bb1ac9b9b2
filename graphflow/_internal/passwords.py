"""Passwords in what graphflow shows: a store or endpoint URL, a conninfo string, a message.

`hide_passwords` masks them (`user:***@`, `password=***`) in error messages and store names,
which end up in logs and terminals. (A printed command leaves them out instead, so that it still
works with `PGPASSWORD`: `graphflow._internal.commands.without_password`.)
"""

from __future__ import annotations

import re

__all__ = ("hide_passwords",)

_URL_PASSWORD = re.compile(r"://([^:/@\s]+):[^@\s]*@")
# a secret in a URL's query (an endpoint's `?api_key=`, a store's `?password=`); values stop at
# a quote, so a quoted URL in a message keeps its closing quote
_QUERY_PASSWORD = re.compile(
    r"([?&](?:password|passwd|pwd|api[_-]?key|apikey|key|token|access[_-]?token|secret|"
    r"client[_-]?secret|sig|signature|subscription[_-]?key)=)[^&\s'\"#]*",
    re.IGNORECASE,
)
_CONNINFO_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&'\"]+)")


def hide_passwords(text: str) -> str:
    """`text` with the passwords and keys of URLs and conninfo strings shown as `***`.

    A URL's `user:pass@` and secret query values (`?password=`, `?api_key=`, `?token=`...), and
    a conninfo's `password=`.
    """
    text = _URL_PASSWORD.sub(r"://\1:***@", text)
    text = _QUERY_PASSWORD.sub(r"\1***", text)
    return _CONNINFO_PASSWORD.sub(r"\1***", text)
