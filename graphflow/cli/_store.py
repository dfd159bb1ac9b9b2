"""The run store of a command: opened only when it exists, and what it recorded about a thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphflow._internal.commands import run_command, store_words, without_password
from graphflow.cli._errors import CliError
from graphflow.cli._targets import TARGET_KEY

__all__ = ("check_store", "open_store", "read_store", "stored_target", "target_of")


def check_store(url: str) -> None:
    """A SQLite store that does not exist yet has no runs: say so, and create nothing."""
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :]).expanduser()
        if str(path) != ":memory:" and not path.is_file():
            raise CliError(
                f"no run store at {path} ({without_password(url)}): nothing has run with it yet"
            )


def open_store(url: str) -> Any:
    """The checkpointer of `url`, which must exist already."""
    from graphflow.checkpoint import resolve_checkpointer

    check_store(url)
    return resolve_checkpointer(url)


def read_store(url: str) -> Any:
    """What reads the runs of `url`: a SQLite file's rows without LangGraph
    (`checkpoint.rows`), else its checkpointer. The store must exist already."""
    import sqlite3

    from graphflow.checkpoint.rows import open_rows

    check_store(url)
    try:
        rows = open_rows(url)
    except sqlite3.DatabaseError:  # not an SQLite file: the saver says so, in one line
        rows = None
    return rows if rows is not None else open_store(url)


def target_of(saver: Any, thread_id: str) -> str | None:
    """The target recorded by the newest root checkpoint that has one.

    A run continued from Python (`agent.resume`) writes checkpoints without it, so the newest
    checkpoint alone is not enough.
    """
    for found in saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}):
        target = (found.metadata or {}).get(TARGET_KEY)
        if target:
            return str(target)
    return None


def stored_target(url: str, thread_id: str, command: str) -> str:
    """The target recorded for `thread_id` in the store at `url`; a `CliError` if none."""
    saver = open_store(url)
    found = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    shown = without_password(url)
    if found is None:
        listing = run_command("runs", *store_words(url))
        raise CliError(f"no run is stored under thread {thread_id!r} in {shown}; see {listing}")
    target = target_of(saver, thread_id)
    if not target:
        example = run_command(command, "TARGET", thread_id, *store_words(url))
        raise CliError(
            f"thread {thread_id!r} in {shown} was not started by graphflow run; name its "
            f"target: {example}"
        )
    return target
