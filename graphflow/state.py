"""The graph state every graphflow tree shares: output-key channels plus a few reserved keys.

A tree compiles to one state schema (a `TypedDict` with LangGraph reducers) that holds every
output key written anywhere in the tree. Each agent's subgraph runs on that schema, reads what it
needs, and hands back only what it writes — so parallel branches never collide.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

__all__ = (
    "AGENT_STATUS",
    "CONTEXT",
    "INPUT",
    "LOOP_ITERATION",
    "MESSAGES",
    "RESERVED_KEYS",
    "build_state_schema",
    "merge_dicts",
)

MESSAGES = "messages"
"""The conversation visible to the agent running now."""
INPUT = "input"
"""The run's input text (a string input becomes this key and a user message)."""
LOOP_ITERATION = "loop_iteration"
"""0-based pass number of the innermost enclosing `LoopAgent`."""
AGENT_STATUS = "agent_status"
"""agent name -> how it last ended: completed, max_iterations, until, exit_loop, error, skipped."""

EXIT_LOOP = "gf_exit_loop"
ROUTES = "gf_routes"
MODEL_CALLS = "gf_model_calls"
STOP = "gf_stop"
JUMP = "gf_jump"
CONTEXT = "gf_context"
"""Agent-local bookkeeping of context policies (a dict merged key by key; never handed back)."""

RESERVED_KEYS = frozenset(
    {
        MESSAGES,
        INPUT,
        LOOP_ITERATION,
        AGENT_STATUS,
        EXIT_LOOP,
        ROUTES,
        MODEL_CALLS,
        STOP,
        JUMP,
        CONTEXT,
    }
)
"""Keys graphflow owns; agents may not use them as output keys or names."""


def merge_dicts(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, Any]:
    """Reducer: merge `new` into `old`; a value of None deletes the key."""
    merged = dict(old or {})
    for key, value in (new or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def last_write(old: Any, new: Any) -> Any:
    """Reducer: keep the last write, accepting several writes in one step."""
    return new


def build_state_schema(
    keys: Iterable[str], *, extra: Mapping[str, Any] | None = None, name: str = "GraphflowState"
) -> type:
    """A `TypedDict` with the reserved channels, one channel per key in `keys`, and `extra`."""
    fields: dict[str, Any] = {
        MESSAGES: Annotated[list[AnyMessage], add_messages],
        INPUT: Any,
        LOOP_ITERATION: int,
        AGENT_STATUS: Annotated[dict[str, str], merge_dicts],
        EXIT_LOOP: Annotated[bool, last_write],
        ROUTES: dict[str, Any],
    }
    for key in sorted(keys):
        fields.setdefault(key, Any)
    fields.update(extra or {})
    return TypedDict(name, fields, total=False)  # type: ignore[operator]
