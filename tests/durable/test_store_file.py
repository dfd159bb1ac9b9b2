"""A SQLite store file deleted under a running process is made again at the next call.

Before: a new agent on the same URL failed with `no such table: graphflow_leases` for the rest
of the process (the lease table was known to exist once), and the agent that had the file open
went on writing into the deleted file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from graphflow import FunctionAgent, RunNotFoundError, SequentialAgent
from graphflow.checkpoint.leases import lease_store


def _team() -> SequentialAgent:
    return SequentialAgent(
        name="team", sub_agents=[FunctionAgent(name="f", fn=lambda s: "F", output_key="out")]
    )


def _delete(db: Path) -> None:
    for path in db.parent.glob(db.name + "*"):  # the file, and its -wal and -shm
        path.unlink()


def _threads(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1").fetchall()
    return [r[0] for r in rows]


def test_a_deleted_store_file_is_made_again_for_new_and_running_agents(
    tmp_path: Path, run_mode: Any
) -> None:
    db = tmp_path / "runs.db"
    url = f"sqlite:///{db}"
    running = _team()
    assert run_mode.invoke(running, "before", thread_id="before", checkpointer=url)["out"] == "F"
    _delete(db)
    # a new agent on the same URL: a new file, with its tables (not `no such table`)
    fresh = _team()
    assert run_mode.invoke(fresh, "new", thread_id="new", checkpointer=url)["out"] == "F"
    # the agent that had the old file open writes into the new one, not the deleted one
    assert run_mode.invoke(running, "again", thread_id="again", checkpointer=url)["out"] == "F"
    assert _threads(db) == ["again", "new"]
    assert running.get_state("again", checkpointer=url).values["out"] == "F"
    assert [r.thread_id for r in fresh.runs(checkpointer=url)] == ["again", "new"]


def test_reads_of_a_store_file_deleted_under_the_process_find_no_run_and_make_no_file(
    tmp_path: Path, run_mode: Any
) -> None:
    """Before: `get_state`/`history` through the saver that had the file open made it again."""
    db = tmp_path / "runs.db"
    url = f"sqlite:///{db}"
    running = _team()
    assert run_mode.invoke(running, "before", thread_id="t", checkpointer=url)["out"] == "F"
    _delete(db)
    with pytest.raises(RunNotFoundError, match="'t'"):
        running.get_state("t", checkpointer=url)
    with pytest.raises(RunNotFoundError, match="'t'"):
        running.history("t", checkpointer=url)
    assert running.runs(checkpointer=url) == []  # not the deleted file's runs either
    with pytest.raises(RunNotFoundError, match="'t'"):
        run_mode.resume(running, "t", checkpointer=url)
    leases = lease_store(url, None)  # (a SQLite URL's leases: the saver is not asked)
    assert leases.holder("t") is None
    leases.renew("t", "someone")
    leases.release("t", "someone")
    assert list(tmp_path.iterdir()) == []
    # a write makes the file again, and the reads find what it wrote
    assert run_mode.invoke(running, "after", thread_id="t2", checkpointer=url)["out"] == "F"
    assert _threads(db) == ["t2"]
    assert running.get_state("t2", checkpointer=url).values["out"] == "F"
    assert [r.thread_id for r in running.runs(checkpointer=url)] == ["t2"]


def test_a_resume_on_a_store_that_does_not_exist_makes_no_file(
    tmp_path: Path, run_mode: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'none' / 'runs.db'}"
    with pytest.raises(RunNotFoundError, match="no run is stored under thread 'x'"):
        run_mode.resume(_team(), "x", checkpointer=url)
    assert list(tmp_path.iterdir()) == []
