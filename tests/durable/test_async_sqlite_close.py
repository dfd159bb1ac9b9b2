"""A failed async run on SQLite leaves the file unlocked, so the resume can start at once.

A checkpoint write that a failing parallel step cuts off between its INSERT and its COMMIT left a
transaction open on the closed connection (its cursor lives on in the failure's traceback): the
resume in the same process then waited 10 s and failed with "database is locked", about one run
in ten. The race is timing-dependent, so the scenario runs many times.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from graphflow import ParallelBranchError
from tests.durable.parallel_trees import _tree

RUNS = 60


async def _fail_once(path: Path) -> None:
    fan, *_ = _tree()
    with pytest.raises(ParallelBranchError):
        await fan.ainvoke("go", thread_id="t", checkpointer=f"sqlite:///{path}")


def test_a_failed_parallel_step_leaves_no_lock_behind(tmp_path: Path) -> None:
    for n in range(RUNS):
        path = tmp_path / f"runs-{n}.db"
        asyncio.run(_fail_once(path))
        probe = sqlite3.connect(path, timeout=0.5, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")  # 'database is locked' when a write was left open
            probe.execute("ROLLBACK")
        finally:
            probe.close()
