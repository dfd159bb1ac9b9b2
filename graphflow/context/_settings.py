"""Checks of a context policy's settings, made when the policy is constructed (not mid-run)."""

from __future__ import annotations

import math
from typing import Any

from graphflow.exceptions import GraphflowConfigError


def whole(
    owner: str, name: str, value: Any, *, minimum: int, optional: bool = False, hint: str = ""
) -> int | None:
    """`value` if it is an int of at least `minimum` (or None when `optional`)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        none = " or None" if optional else ""
        raise GraphflowConfigError(
            f"{owner}: {name}={value!r}; use a whole number >= {minimum}{none}"
            + (f" ({hint})" if hint else "")
        )
    return value


def fraction(owner: str, name: str, value: Any) -> float:
    """`value` if it is a number in (0, 1]."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 < value <= 1
    ):
        raise GraphflowConfigError(
            f"{owner}: {name}={value!r}; use a fraction in (0, 1] (0.8: at 80% of the window)"
        )
    return float(value)


def instance(owner: str, name: str, value: Any, kind: type, *, off: bool = False) -> None:
    """Refuse `value` unless it is None, a `kind` (or False, when `off` is allowed)."""
    if value is None or isinstance(value, kind) or (off and value is False):
        return
    choices = f"a {kind.__name__}, None for the default" + (" or False for none" if off else "")
    raise GraphflowConfigError(f"{owner}: {name} is a {type(value).__name__}; use {choices}")
