"""Typed run events: what `agent.stream(input, events=True)` yields, from every nesting level.

Each event is a frozen dataclass that says *which agent* it is about — `agent_path` from the root
(`("competitive_analysis", "refine", "writer")`), the parallel or multi-route `branch` it runs in,
the loop pass `iteration` — plus the `thread_id`, a `timestamp` (seconds since the epoch) and a
`seq` number that increases by one per event of a thread (a resumed stream in the same process
continues the numbering). Events are translated from LangGraph's own stream (`tasks`,
`messages` and `custom` modes with `subgraphs=True`); there is no second event bus.

A stream says, in order: `RunStarted`, then per agent `AgentStarted` → (`ModelStarted` →
(`ModelToken`* → `ModelReplyDiscarded`)* → `ModelToken`* → `ModelFinished` | `ToolCallStarted` →
`ToolCallFinished` | `HookFired` | `CustomEvent` | nested agents)* → `AgentFinished` or
`AgentFailed`; it ends with exactly one of `RunFinished` (the run is done), `Interrupted` (it
waits for an answer: `agent.resume(thread_id, value)`), or `AgentFailed` for the root agent,
after which the error is raised. A model call whose streamed reply fails part-way (a stream the
server cut short, then retried) is followed by `ModelReplyDiscarded`: the tokens of that
`message_id` are no part of any answer, and a retry streams the reply again from the start.

JSON form (stable; `event.to_json()` / `event_from_json(data)` round-trip it)::

    {"type": "ModelToken", "seq": 17, "timestamp": 1767225600.25, "thread_id": "run-1",
     "agent_path": ["competitive_analysis", "refine", "writer"], "branch": null,
     "iteration": 1, "text": "Verdict", "message_id": "lc_run--0199..."}

Every field of the class appears under its own name; tuples are lists; a LangChain message is
`{"$message": <langchain message dict>}`; a `Usage` is `{"$usage": {"input_tokens": ..,
"output_tokens": .., "estimated": ..}}`; a pydantic object is its JSON dump; any other value that
JSON cannot hold is its `repr` string (such a value does not round-trip).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = (
    "AgentFailed",
    "AgentFinished",
    "AgentStarted",
    "CustomEvent",
    "Event",
    "EventFilter",
    "HookFired",
    "Interrupted",
    "ModelFinished",
    "ModelReplyDiscarded",
    "ModelStarted",
    "ModelToken",
    "RunFinished",
    "RunStarted",
    "ToolCallFinished",
    "ToolCallStarted",
    "Usage",
    "event_from_json",
    "event_types",
    "where",
)


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Token usage of one model call, an agent (its calls and its sub-agents') or a run."""

    input_tokens: int = 0
    """Tokens sent to the model."""
    output_tokens: int = 0
    """Tokens the model produced."""
    estimated: bool = False
    """True when some count came from tiktoken because the model reported no `usage_metadata`."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            estimated=self.estimated or other.estimated,
        )


@dataclass(frozen=True, kw_only=True)
class Event:
    """What every event carries."""

    type: ClassVar[str] = "Event"
    seq: int
    """Position in the thread's event sequence (starts at 0, increases by one per event)."""
    timestamp: float
    """When the event was made, in seconds since the epoch."""
    thread_id: str
    """The run's thread (resume it with `agent.resume(thread_id)`)."""
    agent_path: tuple[str, ...]
    """Agent names from the root to the agent the event is about."""
    branch: str | None = None
    """The parallel (or multi-route) branch it runs in: that branch's agent name."""
    iteration: int | None = None
    """The 0-based pass of the innermost enclosing `LoopAgent`, None outside loops."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.type = cls.__name__
        _TYPES[cls.__name__] = cls

    @property
    def agent(self) -> str:
        """The name of the agent the event is about (the last element of `agent_path`)."""
        return self.agent_path[-1] if self.agent_path else ""

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (see the module docstring)."""
        data: dict[str, Any] = {"type": self.type}
        for f in dataclasses.fields(self):
            data[f.name] = _encode(getattr(self, f.name))
        return data

    def to_json_line(self) -> str:
        """`to_json()` as one line of JSON."""
        return json.dumps(self.to_json(), ensure_ascii=False)


_TYPES: dict[str, type[Event]] = {}


@dataclass(frozen=True, kw_only=True)
class RunStarted(Event):
    """A stream of the run started (a new run, or a resumed one)."""

    input: Any = None
    """What the run was started with (None when it continues)."""
    resumed: bool = False
    """Whether the stream continues a stored run."""


@dataclass(frozen=True, kw_only=True)
class AgentStarted(Event):
    """An agent started (again, when a run is resumed inside it)."""

    kind: str = ""
    """The agent's class name (`ReactAgent`, `LoopAgent`, ...)."""


@dataclass(frozen=True, kw_only=True)
class AgentFinished(Event):
    """An agent finished: what it wrote, why it stopped, what it used."""

    output_key: str | None = None
    """The key its result went to (a parallel agent's merge key)."""
    value: Any = None
    """The value written to `output_key` (None without one)."""
    reason: str = "completed"
    """Its `agent_status`: completed, until, exit_loop, max_iterations, skipped, empty, ..."""
    usage: Usage = field(default_factory=Usage)
    """Tokens of the model calls of this invocation (one loop pass), its sub-agents' included."""
    duration_s: float = 0.0
    """Wall time of this invocation, from its start to its finish in this stream."""


@dataclass(frozen=True, kw_only=True)
class AgentFailed(Event):
    """An agent failed; the run keeps its checkpoints and can be resumed."""

    error: str = ""
    """The error's message."""
    error_type: str = ""
    """The error's class name."""


@dataclass(frozen=True, kw_only=True)
class ModelStarted(Event):
    """A model call of a ReAct agent started."""


@dataclass(frozen=True, kw_only=True)
class ModelToken(Event):
    """A piece of streamed model output."""

    text: str = ""
    """The text of the chunk."""
    message_id: str = ""
    """The reply it belongs to (one per attempt of a model call): after a
    `ModelReplyDiscarded` with this id, drop the text of every token that carries it."""


@dataclass(frozen=True, kw_only=True)
class ModelReplyDiscarded(Event):
    """A model call failed after part of its reply was streamed: that part is void.

    The `ModelToken`s with this `message_id` belong to no answer — show the reply again from
    the next token. A retry (a bad reply the model retries, `ModelRetry`, a retry policy)
    streams its reply from the start under a new `message_id`, then `ModelFinished` follows;
    without one, `AgentFailed` does.
    """

    message_id: str = ""
    """The discarded reply's id (its tokens' `message_id`)."""
    error: str = ""
    """Why the call failed (cut to 500 characters)."""
    error_type: str = ""
    """The error's class name (`BadModelReply` for a stream cut short)."""


@dataclass(frozen=True, kw_only=True)
class ModelFinished(Event):
    """A model call finished."""

    message: Any = None
    """The `AIMessage` it produced (None when a hook short-circuited the call)."""
    usage: Usage = field(default_factory=Usage)
    """Its token usage (`usage_metadata`, else counted with tiktoken)."""


@dataclass(frozen=True, kw_only=True)
class ToolCallStarted(Event):
    """A tool call started."""

    name: str = ""
    """The tool's name."""
    args: Mapping[str, Any] = field(default_factory=dict)
    """The arguments the model gave."""
    call_id: str = ""
    """The tool call's id."""


@dataclass(frozen=True, kw_only=True)
class ToolCallFinished(Event):
    """A tool call finished, with a result or an error."""

    name: str = ""
    """The tool's name."""
    call_id: str = ""
    """The tool call's id."""
    result: Any = None
    """The tool result's content (None when it failed)."""
    error: str | None = None
    """Why it failed (the error result the model was given, or the exception)."""


@dataclass(frozen=True, kw_only=True)
class HookFired(Event):
    """A hook ran: an agent hook (its own graph node), a model hook, or a tool hook."""

    hook: str = ""
    """The hook's name (its class name)."""
    phase: str = ""
    """`before_agent`, `after_agent`, `before_model`, `after_model`, `wrap_model_call` or
    `wrap_tool_call`."""


@dataclass(frozen=True, kw_only=True)
class Interrupted(Event):
    """The run paused for an answer (a `HumanApproval`, a hook's `interrupt`)."""

    pending: tuple[Mapping[str, Any], ...] = ()
    """The pending interrupts: `{"id": ..., "value": ...}` each."""


@dataclass(frozen=True, kw_only=True)
class CustomEvent(Event):
    """Data a node wrote with LangGraph's `get_stream_writer()`."""

    data: Any = None
    """What was written."""


@dataclass(frozen=True, kw_only=True)
class RunFinished(Event):
    """The run finished."""

    state: Mapping[str, Any] = field(default_factory=dict)
    """The final state (private channels left out)."""
    usage: Usage = field(default_factory=Usage)
    """Tokens of every model call in this stream."""
    usage_by_agent: Mapping[str, Usage] = field(default_factory=dict)
    """`"root/child/..."` agent path -> its usage over all its invocations in this stream
    (every loop pass; sub-agents included)."""
    durations: Mapping[str, float] = field(default_factory=dict)
    """`"root/child/..."` agent path -> wall seconds of all its invocations in this stream."""


def event_types() -> dict[str, type[Event]]:
    """Event class name -> class, for every event type."""
    return dict(_TYPES)


def event_from_json(data: Mapping[str, Any] | str) -> Event:
    """The event whose `to_json()` (or `to_json_line()`) is `data`.

    Keys the event type does not have are ignored (lines written by a newer graphflow).

    Raises:
        InputError: `data` is not a JSON object, names no known event type, lacks a field the
            type needs, or holds a value of the wrong kind (the message says which).
    """
    from graphflow.exceptions import InputError

    if isinstance(data, str | bytes | bytearray):
        try:
            raw: Any = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"not a JSON event line: {exc}") from None
    else:
        raw = data
    if not isinstance(raw, Mapping):
        raise InputError(
            f"an event is a JSON object with a 'type' and its fields, found a "
            f"{type(raw).__name__}; pass one line of `to_json_line()` or one `to_json()` dict"
        )
    cls = _TYPES.get(str(raw.get("type")))
    if cls is None:
        raise InputError(
            f"unknown event type {raw.get('type')!r}; known: {', '.join(sorted(_TYPES))}"
        )
    kwargs: dict[str, Any] = {}
    missing: list[str] = []
    for f in dataclasses.fields(cls):
        if f.name not in raw:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                missing.append(f.name)
            continue
        try:
            value = _decode(raw[f.name])
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
            raise InputError(
                f"{cls.__name__} field {f.name!r}: cannot decode {raw[f.name]!r:.80}: {exc}"
            ) from None
        if str(f.type).startswith("tuple") and isinstance(value, list):
            value = tuple(value)
        kwargs[f.name] = value
    if missing:
        raise InputError(f"{cls.__name__} event lacks {', '.join(missing)}")
    for name, kinds, expected in _BASE_FIELDS:
        if name in kwargs and not _is(kwargs[name], kinds):
            raise InputError(
                f"{cls.__name__} field {name!r} is {kwargs[name]!r:.80}; expected {expected}"
            )
    path = kwargs.get("agent_path", ())
    if not all(isinstance(p, str) for p in path):
        raise InputError(f"{cls.__name__} field 'agent_path' holds a non-text name: {path!r:.80}")
    return cls(**kwargs)


# the fields every event has, checked on decoding: name, accepted types, what to say
_BASE_FIELDS: tuple[tuple[str, tuple[type, ...], str], ...] = (
    ("seq", (int,), "an integer"),
    ("timestamp", (int, float), "a number"),
    ("thread_id", (str,), "text"),
    ("agent_path", (tuple,), "a list of agent names"),
    ("branch", (str, type(None)), "text or null"),
    ("iteration", (int, type(None)), "an integer or null"),
)


def _is(value: Any, kinds: tuple[type, ...]) -> bool:
    return isinstance(value, kinds) and not isinstance(value, bool)


@dataclass(frozen=True, kw_only=True)
class EventFilter:
    """Which events a stream yields: by type and by agent path prefix."""

    types: tuple[type[Event], ...] = ()
    """Yield only these event types (all when empty)."""
    path: tuple[str, ...] = ()
    """Yield only events about this agent and its descendants (`("root", "refine")`)."""

    def __call__(self, event: Event) -> bool:
        """Whether the stream yields `event`."""
        if self.types and not isinstance(event, self.types):
            return False
        return event.agent_path[: len(self.path)] == self.path


def where(
    types: type[Event] | Iterable[type[Event]] = (), path: str | Sequence[str] = ()
) -> EventFilter:
    """An `events=` filter: `where(ModelToken, path="root/refine")`."""
    wanted = (types,) if isinstance(types, type) else tuple(types)
    parts = tuple(p for p in path.split("/") if p) if isinstance(path, str) else tuple(path)
    return EventFilter(types=wanted, path=parts)


def as_predicate(events: Any) -> Callable[[Event], bool]:
    """The predicate for an `events=` argument: True, a type, types, or a callable."""
    if events is True:
        return lambda event: True
    if isinstance(events, type) and issubclass(events, Event):
        return lambda event: isinstance(event, events)
    if callable(events):
        return events  # type: ignore[no-any-return]
    if isinstance(events, Iterable) and not isinstance(events, str | bytes):
        wanted = tuple(events)
        if wanted and all(isinstance(t, type) and issubclass(t, Event) for t in wanted):
            return lambda event: isinstance(event, wanted)
    from graphflow.exceptions import InputError

    raise InputError(
        f"events={events!r}: pass True, an event class, a tuple of event classes, "
        "graphflow.events.where(types, path=...) or a predicate on events"
    )


# -- JSON encoding ---------------------------------------------------------------------------


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Usage):
        return {
            "$usage": {
                "input_tokens": value.input_tokens,
                "output_tokens": value.output_tokens,
                "estimated": value.estimated,
            }
        }
    from langchain_core.messages import BaseMessage, message_to_dict

    if isinstance(value, BaseMessage):
        return {"$message": message_to_dict(value)}
    if isinstance(value, Mapping):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_encode(v) for v in value]
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return repr(value)


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1 and "$usage" in value:
        return Usage(**value["$usage"])
    if len(value) == 1 and "$message" in value:
        from langchain_core.messages import messages_from_dict

        return messages_from_dict([value["$message"]])[0]
    return {k: _decode(v) for k, v in value.items()}
