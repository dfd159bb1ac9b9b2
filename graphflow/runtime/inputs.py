"""What a user passes to `invoke`/`stream`, checked and turned into the graph's input."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.types import Command

from graphflow.exceptions import InputError
from graphflow.state import INPUT, MESSAGES, is_private

__all__ = ("check_thread_id", "normalize_input")


MAX_THREAD_ID = 256
"""Longest thread id, in characters (PostgreSQL indexes it with the checkpoint namespace: a
long one failed there, and worked on SQLite)."""


def check_thread_id(thread_id: Any) -> None:
    """Refuse a thread id that cannot name a run, on every store, in every printed command.

    It is a non-empty string of at most `MAX_THREAD_ID` characters, valid Unicode (no lone
    surrogate: SQLite and PostgreSQL cannot store one), without control characters (a newline or
    an escape sequence in a listing, a hint or a shell command).
    """
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise InputError(
            f"thread_id {thread_id!r} cannot name a run; pass a non-empty string "
            "(or none at all for a new thread with a generated id)"
        )
    problem = None
    if len(thread_id) > MAX_THREAD_ID:
        problem = f"is {len(thread_id)} characters long (at most {MAX_THREAD_ID})"
    elif not thread_id.isprintable():
        at, char = next((i, c) for i, c in enumerate(thread_id) if not c.isprintable())
        if 0xD800 <= ord(char) <= 0xDFFF:
            problem = f"is not valid Unicode (a lone surrogate at character {at}: bytes that are not UTF-8)"
        elif unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            problem = f"holds a control character ({char!r} at character {at})"
    if problem is not None:
        raise InputError(
            f"thread_id {thread_id[:60]!r}{'…' if len(thread_id) > 60 else ''} {problem}; a "
            "thread id is stored with every checkpoint and printed in listings and commands: "
            "pass a short printable name"
        )


def normalize_input(input: Any, *, known: Iterable[str] = ()) -> Any:
    """Turn what a user passes to `invoke` into a state update.

    Args:
        input: a string (it becomes the `input` key and a user message), a message, a list of
            messages, a dict of state keys, a LangGraph `Command`, or None to continue.
        known: the keys the graph has; a dict with other keys is refused (LangGraph would drop
            them without a word).

    Raises:
        InputError: the input is empty or of a kind, or has keys, no agent can start from.
    """
    if input is None or isinstance(input, Command):
        return input
    if isinstance(input, str):
        if not input.strip():
            raise InputError(
                f"the input string {input!r} is empty; pass what the agents should work on (an "
                "empty input on purpose: {'input': ''})"
            )
        return {INPUT: input, MESSAGES: [HumanMessage(content=input)]}
    if isinstance(input, BaseMessage):
        return {INPUT: input.text, MESSAGES: [input]}
    if isinstance(input, dict):
        if not input:
            raise InputError(
                "the input dict is empty; pass a string, or a dict such as {'input': '...'}"
            )
        known_keys = set(known)
        unknown = sorted(k for k in input if k not in known_keys or is_private(str(k)))
        if known_keys and unknown:
            allowed = sorted(k for k in known_keys if not is_private(k))
            raise InputError(
                f"input key(s) {unknown} are not state keys of this agent tree; known keys: "
                f"{', '.join(allowed)}. Declare extra inputs with input_keys=[...] on the agent "
                "that reads them"
            )
        data = dict(input)
        if isinstance(data.get(INPUT), str) and MESSAGES not in data:
            data[MESSAGES] = [HumanMessage(content=data[INPUT])]
        return data
    if isinstance(input, Sequence) and not isinstance(input, bytes | bytearray):
        if not input:
            raise InputError("the input list is empty; pass at least one message, or a string")
        if all(isinstance(m, BaseMessage) for m in input):
            messages = list(input)
            humans = [m for m in messages if isinstance(m, HumanMessage)]
            return {INPUT: humans[-1].text if humans else "", MESSAGES: messages}
    raise InputError(
        f"cannot run an agent on {type(input).__name__}; pass a string, a message, a list of "
        "messages or a dict of state keys"
    )
