"""Spec values as plain JSON data (a copy the caller cannot change afterwards)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ("plain",)


def plain(raw: Any) -> Any:
    """A JSON copy of a mapping or list spec value; other values as they are."""
    return json.loads(json.dumps(raw)) if isinstance(raw, Mapping | list) else raw
