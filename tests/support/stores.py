"""Run stores for tests parametrized over memory / SQLite / PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def store_url(kind: str, tmp_path: Path) -> str:
    """The URL of a `kind` store (`memory`, `sqlite`, `postgres`); skips without PostgreSQL."""
    if kind == "memory":
        return "memory:"
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.db'}"
    url = os.environ.get("GRAPHFLOW_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("GRAPHFLOW_TEST_POSTGRES_URL is not set")
    return url
