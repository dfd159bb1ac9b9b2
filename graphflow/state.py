"""The graph state of a graphflow tree: its channel names, reducers and schemas, in one place.

A tree compiles to one state schema (a `TypedDict` with LangGraph reducers) that holds every
output key written anywhere in the tree. Each agent's subgraph runs on that schema plus a few
private channels of its kind, reads what it needs, and hands back only what it writes — so
parallel branches never collide.

Every name graphflow gives a channel or a graph node is defined here. Public keys (`messages`,
`input`, `loop_iteration`, `agent_status`) are what users read and write; private channels start
with `gf_` and never reach a user or a parent graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph._internal._typing import MISSING
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph.message import add_messages

__all__ = (
    "AFTER_AGENT_NODE",
    "AGENT_STATUS",
    "BEFORE_AGENT_NODE",
    "CONTEXT",
    "EXIT_LOOP",
    "HELD_MESSAGES",
    "INPUT",
    "JUMP",
    "KEEP_SUBGRAPHS",
    "LOOP_ITERATION",
    "MERGE_NODE",
    "MESSAGES",
    "MODEL_CALLS",
    "MODEL_NODE",
    "MODEL_STEP",
    "NODE_NAMES",
    "PREPARE_NODE",
    "PRIVATE_PREFIX",
    "RESERVED_KEYS",
    "ROUTES",
    "ROUTES_JOIN_NODE",
    "ROUTE_ERRORS",
    "ROUTE_NODE",
    "RUN_NODE",
    "STOP",
    "TOOLS_NODE",
    "TOOL_CALL",
    "TOOL_HISTORY",
    "add_message_batches",
    "build_state_schema",
    "is_private",
    "last_write",
    "merge_dicts",
)

# -- public keys -------------------------------------------------------------------------------

MESSAGES = "messages"
"""The conversation visible to the agent running now."""
INPUT = "input"
"""The run's input text (a string input becomes this key and a user message)."""
LOOP_ITERATION = "loop_iteration"
"""0-based pass number of the innermost enclosing `LoopAgent`."""
AGENT_STATUS = "agent_status"
"""agent name -> how it last ended: completed, max_iterations, until, exit_loop, error, skipped,
empty; `running` while it runs."""

# -- private channels (never handed to a parent, never shown to users) -------------------------

PRIVATE_PREFIX = "gf_"
"""Prefix of every private channel and internal node name; user keys may not use it."""
EXIT_LOOP = "gf_exit_loop"
"""Set by the `exit_loop` tool: the innermost loop ends after this pass."""
ROUTES = "gf_routes"
"""A router's chosen routes: agent name -> rewritten query (or None)."""
ROUTE_ERRORS = "gf_route_errors"
"""Why a router's previous attempts were invalid (fed back to its model)."""
MODEL_CALLS = "gf_model_calls"
"""Model calls made by the running ReAct agent in this invocation."""
STOP = "gf_stop"
"""Why a ReAct agent stops without a final answer of its own: end, exit_loop, max_iterations."""
JUMP = "gf_jump"
"""A `before_agent` hook's jump (`end` skips the agent)."""
TOOL_CALL = "gf_tool_call"
"""The one tool call a tools task runs (the payload of its `Send`)."""
TOOL_HISTORY = "gf_tool_history"
"""What a tools task knows of its call's past (its batch, the tool's INVALID_PARAM streak, a
result waiting for a human), sent with the call."""
HELD_MESSAGES = "gf_branch_messages"
"""Branch name -> the messages it handed back, until the join releases them in declaration order."""
CONTEXT = "gf_context"
"""A ReAct agent's context-management bookkeeping (summaries, counters), kept in its own graph."""

KEEP_SUBGRAPHS = "__gf_keep_subgraphs"
"""A run's `configurable` flag: every sub-agent runs in its own subgraph, none in its parent's
node. Set for LangGraph's raw stream (`stream(stream_mode=...)`), whose namespaces users read
(`("refine:<id>", "writer:<id>")`). (`__` keeps it out of checkpoint metadata.)"""

RESERVED_KEYS = frozenset({MESSAGES, INPUT, LOOP_ITERATION, AGENT_STATUS})
"""Public keys graphflow owns; agents may not use them as output keys or names."""

# -- node names inside an agent's graph --------------------------------------------------------

PREPARE_NODE = "prepare"
"""A root agent's first step when it has an entry update and no hooks to write it."""
MODEL_NODE = "model"
"""A ReAct agent's model step."""
TOOLS_NODE = "tools"
"""A ReAct agent's tool step (one task per tool call)."""
MODEL_STEP = "graphflow_model_step"
"""Key of the `custom` stream chunk `{MODEL_STEP: "start" | "end", "ns": the task's checkpoint
namespace, "sent" | "message": ...}` a ReAct sub-agent running in its parent's node writes around
its model call (it has no `model` task there); typed event streams turn it into `ModelStarted` /
`ModelFinished`."""
RUN_NODE = "run"
"""A `FunctionAgent`'s step (when it has a graph of its own)."""
ROUTE_NODE = "gf_route"
"""An `LlmRoutingAgent`'s choice step."""
ROUTES_JOIN_NODE = "gf_done"
"""Where the routes a multi-route `LlmRoutingAgent` chose meet."""
MERGE_NODE = "gf_merge"
"""Where a `ParallelAgent`'s branches meet and their results are merged."""
BEFORE_AGENT_NODE = "before_agent.{}"
"""The node of a `before_agent` hook (formatted with the hook's name)."""
AFTER_AGENT_NODE = "after_agent.{}"
"""The node of an `after_agent` hook (formatted with the hook's name)."""

NODE_NAMES = frozenset({PREPARE_NODE, MODEL_NODE, TOOLS_NODE, RUN_NODE})
"""Node names graphflow uses inside agent graphs. A state key may not share a name with a node
(LangGraph forbids it), so output and input keys may not use these either (the others start
with `gf_` or hold a dot, which keys may not)."""


def is_private(key: str) -> bool:
    """Whether `key` is one of graphflow's private channels."""
    return key.startswith(PRIVATE_PREFIX)


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


def _last_of(value: Any, writes: Sequence[Any]) -> Any:
    return writes[-1] if writes else value


class _WrittenOnce(DeltaChannel):  # type: ignore[type-arg]
    """A last-value channel stored as its writes, not copied into every checkpoint.

    The run's `input` is written once per turn and read by many steps; as a plain last-value
    channel each root checkpoint held it whole (a 1 MB input through three agents stored it
    five times more). LangGraph's `DeltaChannel` keeps it in the write that set it; a checkpoint
    holds a snapshot only now and then. Unlike a `DeltaChannel`, it stays empty until written
    (`{input?}` still sees no input), and reads legacy checkpoints that hold the value itself.
    """

    def from_checkpoint(self, checkpoint: Any) -> _WrittenOnce:  # noqa: D102
        new = self.__class__(self.reducer, self.typ, snapshot_frequency=self.snapshot_frequency)
        new.key = self.key
        if isinstance(checkpoint, _DeltaSnapshot):
            new.value = checkpoint.value
        elif checkpoint is not None and checkpoint is not MISSING:
            new.value = checkpoint  # (stored before: the value itself)
        return new

    def update(self, values: Sequence[Any]) -> bool:  # noqa: D102
        if not values:
            return False
        self.value = values[-1]
        return True


def add_message_batches(messages: list[AnyMessage], writes: Sequence[Any]) -> list[AnyMessage]:
    """`add_messages` over a batch of writes, in order (the reducer a `DeltaChannel` takes)."""
    for write in writes:
        messages = add_messages(messages, write)  # type: ignore[assignment,arg-type]
    return messages


_BASE_FIELDS: dict[str, Any] = {
    # the conversation is stored as the messages each step added, not as a new copy of the
    # whole list at every checkpoint (LangGraph's DeltaChannel): a long ReAct run's checkpoints
    # stay small, and a 1 MB input is stored once, not once per step
    MESSAGES: Annotated[list[AnyMessage], DeltaChannel(add_message_batches)],
    LOOP_ITERATION: int,
    AGENT_STATUS: Annotated[dict[str, str], merge_dicts],
    EXIT_LOOP: Annotated[bool, last_write],
}

_schemas: dict[tuple[frozenset[str], tuple[tuple[str, Any], ...], frozenset[str]], type] = {}


def build_state_schema(
    keys: Iterable[str],
    *,
    extra: Mapping[str, Any] | None = None,
    name: str = "GraphflowState",
    omit: Iterable[str] = (),
) -> type:
    """A `TypedDict` with the base channels, one channel per key in `keys`, and `extra`.

    The base channels are `messages`, `agent_status`, `loop_iteration` and the `exit_loop`
    flag; `input` is a channel only where it is among `keys` (a sub-agent that never reads it
    does not store a copy of it in every checkpoint). `omit` leaves out base channels a graph
    never reads or writes (`loop_iteration`, `exit_loop` in a leaf agent without hooks): every
    channel is set up again on each invocation of a sub-agent's graph.

    Schemas are cached: a tree of a hundred agents builds each distinct schema once.
    """
    omitted = frozenset(omit)
    if omitted & {MESSAGES, AGENT_STATUS}:
        raise ValueError("the messages and agent_status channels cannot be omitted")
    cache_key = (
        frozenset(keys),
        tuple(sorted((extra or {}).items(), key=lambda kv: kv[0])),
        omitted,
    )
    try:
        return _schemas[cache_key]
    except (KeyError, TypeError):
        pass
    fields = {k: v for k, v in _BASE_FIELDS.items() if k not in omitted}
    if INPUT in cache_key[0]:
        fields[INPUT] = Annotated[Any, _WrittenOnce(_last_of)]
    for key in sorted(cache_key[0]):
        fields.setdefault(key, Any)
    fields.update(extra or {})
    schema = TypedDict(name, fields, total=False)  # type: ignore[misc,operator]
    try:
        _schemas[cache_key] = schema
    except TypeError:  # an unhashable annotation in `extra`: build it every time
        pass
    return schema
