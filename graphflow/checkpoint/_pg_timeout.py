"""How long graphflow waits for PostgreSQL (`GRAPHFLOW_PG_CONNECT_TIMEOUT`).

Its own module so that the lease store and the URL resolver share it without importing each
other (`graphflow.checkpoint.urls` re-exports it).
"""

from __future__ import annotations

import math
import os

from graphflow.exceptions import GraphflowConfigError

__all__ = ("PG_CONNECT_TIMEOUT_ENV", "pg_timeout")

PG_CONNECT_TIMEOUT_ENV = "GRAPHFLOW_PG_CONNECT_TIMEOUT"
"""Seconds to wait for PostgreSQL before a clear error (default 5; libpq's minimum is 2)."""


def pg_timeout() -> float:
    """Seconds to wait for PostgreSQL (`GRAPHFLOW_PG_CONNECT_TIMEOUT`, default 5, at least 2)."""
    raw = os.environ.get(PG_CONNECT_TIMEOUT_ENV, "5")
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise GraphflowConfigError(
            f"{PG_CONNECT_TIMEOUT_ENV}={raw!r} is not a number of seconds; set it to how long "
            "to wait for PostgreSQL, such as 5"
        )
    # libpq waits whole seconds, and at least 2 (a connect_timeout of 1 is taken as 2)
    return float(max(2, math.ceil(seconds)))
