"""What a failed run raises: graphflow errors that say what happened, where, and how to go on.

LangGraph's own errors (a recursion limit, an invalid update) and a checkpoint store's (SQLite,
PostgreSQL) become graphflow errors naming the thread and the store. Every error leaving a run
that has a checkpointer carries `thread_id` and, for errors raised by user code (a tool, a
function, a model client), a note with the commands to inspect and resume the run — the run's
checkpoints are kept, nothing is lost.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import Any

from langgraph.errors import GraphRecursionError, InvalidUpdateError

from graphflow._internal.commands import resume_hint
from graphflow.exceptions import AgentRunError, CheckpointStoreError, GraphflowError

__all__ = ("translating",)


def _commands(thread_id: str) -> str:
    return (
        f"inspect it with agent.get_state({thread_id!r}), continue it with {resume_hint(thread_id)}"
    )


def _resume_hint(thread_id: str) -> str:
    return f"the run's checkpoints are kept: {_commands(thread_id)}"


_STORE_CODE = ("langgraph.checkpoint", "graphflow.checkpoint")


def _store_error(exc: BaseException) -> bool:
    """Whether `exc` is the checkpoint store failing (not user code's own database error).

    A database error counts only when a checkpoint saver's code is on its traceback: a
    `FunctionAgent` writing to its own SQLite file raises `sqlite3.Error` too.
    """
    module = type(exc).__module__
    if not (isinstance(exc, sqlite3.Error) or module.startswith(("psycopg", "aiosqlite"))):
        return False
    tb = exc.__traceback__
    while tb is not None:
        if str(tb.tb_frame.f_globals.get("__name__", "")).startswith(_STORE_CODE):
            return True
        tb = tb.tb_next
    return False


@contextlib.contextmanager
def translating(thread_id: str, store: str | None) -> Iterator[None]:
    """Turn what escapes a run into graphflow errors (see the module docstring)."""
    try:
        yield
    except GraphflowError as exc:
        if store is not None and getattr(exc, "thread_id", None) is None:
            with contextlib.suppress(AttributeError):
                exc.thread_id = thread_id  # type: ignore[attr-defined]
        raise
    except GraphRecursionError as exc:
        raise AgentRunError(
            f"the run on thread {thread_id!r} took more LangGraph steps than its recursion_limit "
            "allows — an agent is going round without end (a router choosing itself, a custom "
            "strategy's loop); bound it (max_iterations), or raise config={'recursion_limit': "
            "N}" + (f"; {_resume_hint(thread_id)}" if store else "")
        ) from exc
    except InvalidUpdateError as exc:
        raise AgentRunError(
            f"the run on thread {thread_id!r} wrote state it may not: {exc}. Two agents that run "
            "in the same step wrote one key, or a node returned something that is not a state "
            "update" + (f"; {_resume_hint(thread_id)}" if store else "")
        ) from exc
    except Exception as exc:
        if _store_error(exc):
            reason = " ".join(str(exc).split())  # one line (libpq's messages have several)
            raise CheckpointStoreError(
                f"the checkpoint store {store} failed during the run on thread {thread_id!r}: "
                f"{type(exc).__name__}: {reason.rstrip('.')}. The checkpoints written before are "
                f"kept; once the store works again, {_commands(thread_id)}",
                store=store,
                resumable=True,
            ) from exc
        if store is not None:
            _note(exc, f"graphflow: {_resume_hint(thread_id)}")
        raise


def _note(exc: BaseException, note: str) -> None:
    notes: list[Any] = getattr(exc, "__notes__", [])
    if note not in notes:
        exc.add_note(note)
