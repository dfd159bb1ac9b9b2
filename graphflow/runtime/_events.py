"""LangGraph's stream → graphflow's typed events (`graphflow.events`).

The run is streamed with `stream_mode=["tasks", "messages", "custom"]` and `subgraphs=True`.
`tasks` says when each node task starts and ends (with its input and result), `messages` carries
the model tokens, `custom` what nodes wrote with `get_stream_writer()`. (`updates` would only say
when a task ended.) Every chunk comes with its checkpoint namespace, e.g.
`("refine:<task id>", "writer:<task id>")`: the segment `name:<task id>` belongs to the task
`<task id>` named `name` one level up, so the translator learns each namespace's agent when that
agent's task starts in its parent's namespace.

Which nodes mean what is graphflow's core knowledge and lives here only: a task named after a
child agent runs that agent (a subgraph, or inline for a hook-less `FunctionAgent`); inside a
ReAct agent `model` is a model call and `tools` one tool call (payload `gf_tool_call`) — a
tool-less, hook-less ReAct sub-agent makes its first call in its parent's node and says so with
`custom` chunks (`graphflow.state.MODEL_STEP`);
`before_agent.<Hook>` / `after_agent.<Hook>` are agent hooks; a model hook says it ran with a
`custom` chunk (`graphflow._internal.hook_calls.HOOK_FIRED`), a streamed model reply that failed
part-way one from `graphflow.runtime._attempts` (its tokens are void: a retry streams the reply
again).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage

from graphflow import events as ev
from graphflow._internal.hook_calls import HOOK_FIRED
from graphflow.agents.base import Agent
from graphflow.context.tokens import count_tokens
from graphflow.runtime._attempts import MODEL_DISCARDED, with_watcher
from graphflow.state import (
    AGENT_STATUS,
    MESSAGES,
    MODEL_NODE,
    MODEL_STEP,
    TOOL_CALL,
    TOOLS_NODE,
    is_private,
)
from graphflow.strategies.registry import strategy_for

__all__ = (
    "STREAM_MODES",
    "EventTranslator",
    "astream_events",
    "next_seq",
    "stream_events",
    "translate",
    "translate_async",
)

STREAM_MODES = ["tasks", "messages", "custom"]
_HOOK_PHASES = ("before_agent.", "after_agent.")

# the last seq handed out per thread in this process, so a resumed stream continues the sequence
_last_seq: dict[str, int] = {}
_seq_lock = threading.Lock()


def next_seq(thread_id: str) -> int:
    """The first seq of a new stream on `thread_id`."""
    with _seq_lock:
        return _last_seq.get(thread_id, -1) + 1


def _record_seq(thread_id: str, seq: int) -> None:
    with _seq_lock:
        if seq > _last_seq.get(thread_id, -1):
            _last_seq[thread_id] = seq


@dataclass
class _Frame:
    """An agent running in one checkpoint namespace."""

    agent: Agent
    path: tuple[str, ...]
    branch: str | None
    iteration: int | None
    parent: _Frame | None = None
    started: float = field(default_factory=time.monotonic)
    usage: ev.Usage = field(default_factory=ev.Usage)
    """Tokens of this invocation (its sub-agents' included); a loop pass starts a new frame."""


@dataclass
class _Task:
    kind: str  # agent | model | tool | hook
    frame: _Frame
    detail: Any = None
    ns: tuple[str, ...] = ()


def _last_ai(messages: Any) -> AIMessage | None:
    for message in reversed(list(messages or ())):
        if isinstance(message, AIMessage):
            return message
    return None


def _usage(message: AIMessage | None, sent: Any, model: Any) -> ev.Usage:
    """The model's own `usage_metadata`, else counted offline for `model` (see context.tokens)."""
    if message is None:
        return ev.Usage()
    meta = getattr(message, "usage_metadata", None)
    if meta:
        return ev.Usage(
            input_tokens=int(meta.get("input_tokens", 0) or 0),
            output_tokens=int(meta.get("output_tokens", 0) or 0),
        )
    return ev.Usage(
        input_tokens=count_tokens(list(sent or ()), model, use_usage_metadata=False),
        output_tokens=count_tokens(message, model),
        estimated=True,
    )


def _error_text(error: Any) -> tuple[str, str]:
    if isinstance(error, BaseException):
        return str(error), type(error).__name__
    return str(error), "Error"


class EventTranslator:
    """Turns one stream's LangGraph chunks into typed events (one instance per stream)."""

    def __init__(self, root: Agent, thread_id: str, *, seq_start: int | None = None) -> None:
        self.root = root
        self.thread_id = thread_id
        self._seq = next_seq(thread_id) if seq_start is None else seq_start
        self._frames: dict[tuple[str, ...], _Frame] = {(): _Frame(root, (root.name,), None, None)}
        self._tasks: dict[str, _Task] = {}
        self._usage: dict[tuple[str, ...], ev.Usage] = {}
        self._durations: dict[tuple[str, ...], float] = {}
        self._streamed: set[str] = set()
        self._discarded: set[str] = set()
        """Ids of streamed replies that failed part-way (their later tokens are dropped too)."""
        self._steps: dict[str, Any] = {}
        """What each inline model call was sent, by its task's checkpoint namespace."""
        self._token_frames: dict[str, _Frame] = {}
        """The agent each streamed reply's tokens were shown for, by message id (a discarded
        reply of a call made in its parent's node is announced in the parent's namespace)."""
        self._interrupted: _Frame | None = None

    # -- making events -------------------------------------------------------------------------

    def _make(self, cls: type[ev.Event], frame: _Frame, **fields: Any) -> ev.Event:
        event = cls(
            seq=self._seq,
            timestamp=time.time(),
            thread_id=self.thread_id,
            agent_path=frame.path,
            branch=frame.branch,
            iteration=frame.iteration,
            **fields,
        )
        _record_seq(self.thread_id, self._seq)
        self._seq += 1
        return event

    def _frame(self, ns: tuple[str, ...]) -> _Frame:
        # the innermost known namespace (a tool that runs a graph of its own has one we don't know)
        for cut in range(len(ns), -1, -1):
            frame = self._frames.get(ns[:cut])
            if frame is not None:
                return frame
        return self._frames[()]

    def _custom_frame(self, ns: tuple[str, ...]) -> _Frame:
        # an agent that may run inline (a FunctionAgent without hooks) is a node of its parent:
        # what it writes arrives in the parent's namespace while it is the one such agent there
        inline = [
            t.frame
            for t in self._tasks.values()
            if t.kind == "agent"
            and t.ns == ns
            and strategy_for(t.frame.agent).runs_inline(t.frame.agent)
        ]
        return inline[0] if len(inline) == 1 else self._frame(ns)

    # -- the stream ----------------------------------------------------------------------------

    def start(self, input: Any, *, resumed: bool) -> list[ev.Event]:
        """`RunStarted` and the root's `AgentStarted`."""
        root = self._frames[()]
        shown = input if isinstance(input, str | dict) or input is None else repr(input)
        if isinstance(shown, dict):
            shown = {k: v for k, v in shown.items() if k != MESSAGES and not is_private(str(k))}
        return [
            self._make(ev.RunStarted, root, input=shown, resumed=resumed),
            self._make(ev.AgentStarted, root, kind=type(self.root).__name__),
        ]

    def feed(self, ns: tuple[str, ...], mode: str, chunk: Any) -> list[ev.Event]:
        """The events for one `(namespace, mode, chunk)` of LangGraph's stream."""
        if mode == "tasks":
            if "input" in chunk:
                return self._task_started(ns, chunk)
            return self._task_finished(chunk)
        if mode == "messages":
            return self._message(ns, *chunk)
        if mode == "custom":
            if isinstance(chunk, Mapping) and MODEL_STEP in chunk:
                return self._model_step(ns, chunk)
            if isinstance(chunk, Mapping) and HOOK_FIRED in chunk:
                hook, phase = str(chunk[HOOK_FIRED]), str(chunk.get("phase", ""))
                return [self._make(ev.HookFired, self._frame(ns), hook=hook, phase=phase)]
            if isinstance(chunk, Mapping) and MODEL_DISCARDED in chunk:
                return self._discard(ns, chunk)
            return [self._make(ev.CustomEvent, self._custom_frame(ns), data=chunk)]
        return []

    def finish(self, values: Mapping[str, Any], interrupts: Any) -> list[ev.Event]:
        """The closing events: `Interrupted`, or the root's `AgentFinished` and `RunFinished`."""
        root = self._frames[()]
        pending = tuple(
            {"id": getattr(i, "id", None), "value": getattr(i, "value", i)}
            for i in interrupts or ()
        )
        if pending:
            return [self._make(ev.Interrupted, self._interrupted or root, pending=pending)]
        state = {k: v for k, v in values.items() if not is_private(k)}
        out = [self._agent_finished(root, state)]
        total = self._usage.get(root.path, ev.Usage())
        out.append(
            self._make(
                ev.RunFinished,
                root,
                state=state,
                usage=total,
                usage_by_agent={"/".join(p): u for p, u in self._usage.items()},
                durations={"/".join(p): d for p, d in self._durations.items()},
            )
        )
        return out

    def fail(self, error: BaseException) -> list[ev.Event]:
        """The root's `AgentFailed` for an error that ended the stream."""
        message, kind = _error_text(error)
        return [self._make(ev.AgentFailed, self._frames[()], error=message, error_type=kind)]

    # -- tasks ---------------------------------------------------------------------------------

    def _task_started(self, ns: tuple[str, ...], chunk: Mapping[str, Any]) -> list[ev.Event]:
        frame = self._frame(ns)
        name, task_id = str(chunk["name"]), str(chunk["id"])
        payload = chunk.get("input")
        strategy = strategy_for(frame.agent)
        child = next((a for a in strategy.children(frame.agent) if a.name == name), None)
        if child is not None:
            role = strategy.child_role(
                frame.agent, child, payload if isinstance(payload, Mapping) else None
            )
            branch = frame.branch if role.branch is None else role.branch
            iteration = frame.iteration if role.iteration is None else role.iteration
            sub = _Frame(child, (*frame.path, name), branch, iteration, parent=frame)
            self._frames[(*ns, f"{name}:{task_id}")] = sub
            self._tasks[task_id] = _Task("agent", sub, ns=ns)
            return [self._make(ev.AgentStarted, sub, kind=type(child).__name__)]
        if name == MODEL_NODE:
            sent = payload.get(MESSAGES) if isinstance(payload, Mapping) else None
            self._tasks[task_id] = _Task("model", frame, sent)
            return [self._make(ev.ModelStarted, frame)]
        if name == TOOLS_NODE and isinstance(payload, Mapping) and TOOL_CALL in payload:
            call = payload[TOOL_CALL] or {}
            self._tasks[task_id] = _Task("tool", frame, call)
            return [
                self._make(
                    ev.ToolCallStarted,
                    frame,
                    name=str(call.get("name", "")),
                    args=dict(call.get("args") or {}),
                    call_id=str(call.get("id", "")),
                )
            ]
        for phase in _HOOK_PHASES:
            if name.startswith(phase):
                self._tasks[task_id] = _Task("hook", frame, (name[len(phase) :], phase[:-1]))
        return []

    def _task_finished(self, chunk: Mapping[str, Any]) -> list[ev.Event]:
        task = self._tasks.pop(str(chunk["id"]), None)
        if task is None:
            return []
        error = chunk.get("error")
        result = chunk.get("result")
        result = result if isinstance(result, Mapping) else {}
        if chunk.get("interrupts"):
            if self._interrupted is None or len(task.frame.path) > len(self._interrupted.path):
                self._interrupted = task.frame
            if task.kind != "hook":
                return []
        if task.kind == "agent":
            if error is not None:
                message, kind = _error_text(error)
                return [self._make(ev.AgentFailed, task.frame, error=message, error_type=kind)]
            return [self._agent_finished(task.frame, result)]
        if task.kind == "model":
            if error is not None:
                return []
            reply = _last_ai(result.get(MESSAGES))
            usage = _usage(reply, task.detail, getattr(task.frame.agent, "model", None))
            self._add_usage(task.frame, usage)
            return [self._make(ev.ModelFinished, task.frame, message=reply, usage=usage)]
        if task.kind == "tool":
            return [self._tool_finished(task, result, error)]
        hook, phase = task.detail
        if error is not None:
            return []
        return [self._make(ev.HookFired, task.frame, hook=hook, phase=phase)]

    def _model_step(self, ns: tuple[str, ...], chunk: Mapping[str, Any]) -> list[ev.Event]:
        """A model call made in the node of a sub-agent running in its parent (no `model` task):
        the same events a `model` task gives (see `graphflow.strategies._react_inline`)."""
        where = str(chunk.get("ns") or "")
        frame = self._task_frame(where) or self._frame(ns)
        if chunk[MODEL_STEP] == "start":
            self._steps[where] = chunk.get("sent")
            return [self._make(ev.ModelStarted, frame)]
        reply = chunk.get("message")
        reply = reply if isinstance(reply, AIMessage) else None
        out = []
        if reply is not None and reply.id not in self._streamed and reply.text:
            out.append(  # it did not stream
                self._make(ev.ModelToken, frame, text=reply.text, message_id=reply.id or "")
            )
        usage = _usage(reply, self._steps.pop(where, None), getattr(frame.agent, "model", None))
        self._add_usage(frame, usage)
        out.append(self._make(ev.ModelFinished, frame, message=reply, usage=usage))
        return out

    def _task_frame(self, checkpoint_ns: str) -> _Frame | None:
        """The agent a task runs, by the task's own checkpoint namespace (None: not an agent's)."""
        return self._frames.get(tuple(checkpoint_ns.split("|"))) if checkpoint_ns else None

    def _agent_finished(self, frame: _Frame, result: Mapping[str, Any]) -> ev.Event:
        key = strategy_for(frame.agent).output_key(frame.agent)
        status = (result.get(AGENT_STATUS) or {}).get(frame.agent.name, "completed")
        duration = time.monotonic() - frame.started
        self._durations[frame.path] = self._durations.get(frame.path, 0.0) + duration
        return self._make(
            ev.AgentFinished,
            frame,
            output_key=key,
            value=result.get(key) if key else None,
            reason=str(status if status != "running" else "completed"),
            usage=frame.usage,
            duration_s=duration,
        )

    def _tool_finished(self, task: _Task, result: Mapping[str, Any], error: Any) -> ev.Event:
        call = task.detail or {}
        out: Any = None
        failure: str | None = None
        if error is not None:
            failure = _error_text(error)[0]
        else:
            reply = next(
                (m for m in result.get(MESSAGES) or () if isinstance(m, ToolMessage)), None
            )
            if reply is not None:
                if getattr(reply, "status", "success") == "error":
                    failure = reply.text
                else:
                    out = reply.content
        return self._make(
            ev.ToolCallFinished,
            task.frame,
            name=str(call.get("name", "")),
            call_id=str(call.get("id", "")),
            result=out,
            error=failure,
        )

    def _add_usage(self, frame: _Frame, usage: ev.Usage) -> None:
        # to this invocation and the enclosing ones, and to the stream's totals per agent path
        at: _Frame | None = frame
        while at is not None:
            at.usage = at.usage + usage
            self._usage[at.path] = self._usage.get(at.path, ev.Usage()) + usage
            at = at.parent

    # -- messages ------------------------------------------------------------------------------

    def _message(
        self, ns: tuple[str, ...], message: BaseMessage, meta: Mapping[str, Any]
    ) -> list[ev.Event]:
        if isinstance(message, AIMessageChunk):
            if message.id:
                if message.id in self._discarded:
                    return []
                self._streamed.add(message.id)
            text = message.text
            if not text:
                return []
            # a sub-agent's model call made in its parent's node streams from the node's task
            task_ns = str(meta.get("langgraph_checkpoint_ns") or "")
            frame = self._task_frame(task_ns) or self._frame(ns)
            if message.id:
                self._token_frames[message.id] = frame
            return [self._make(ev.ModelToken, frame, text=text, message_id=message.id or "")]
        if (
            isinstance(message, AIMessage)
            and meta.get("langgraph_node") == MODEL_NODE
            and message.id not in self._streamed
            and message.text
        ):
            # a model that does not stream: its whole answer is one token event
            return [
                self._make(
                    ev.ModelToken, self._frame(ns), text=message.text, message_id=message.id or ""
                )
            ]
        return []

    def _discard(self, ns: tuple[str, ...], chunk: Mapping[str, Any]) -> list[ev.Event]:
        message_id = str(chunk[MODEL_DISCARDED])
        if message_id in self._discarded:
            return []
        self._discarded.add(message_id)
        return [
            self._make(
                ev.ModelReplyDiscarded,
                self._token_frames.get(message_id) or self._frame(ns),
                message_id=message_id,
                error=str(chunk.get("error", "")),
                error_type=str(chunk.get("error_type", "")),
            )
        ]


def translate(
    translator: EventTranslator,
    stream: Iterator[Any],
    *,
    input: Any,
    resumed: bool,
    final: Callable[[], tuple[Mapping[str, Any], Any]],
    keep: Callable[[ev.Event], bool],
) -> Iterator[ev.Event]:
    """Typed events for a sync LangGraph stream; `final()` gives (values, interrupts) at the end."""
    yield from (e for e in translator.start(input, resumed=resumed) if keep(e))
    try:
        for ns, mode, chunk in stream:
            yield from (e for e in translator.feed(ns, mode, chunk) if keep(e))
    except Exception as exc:
        yield from (e for e in translator.fail(exc) if keep(e))
        raise
    values, interrupts = final()
    yield from (e for e in translator.finish(values, interrupts) if keep(e))


async def translate_async(
    translator: EventTranslator,
    stream: AsyncIterator[Any],
    *,
    input: Any,
    resumed: bool,
    final: Callable[[], Any],
    keep: Callable[[ev.Event], bool],
) -> AsyncIterator[ev.Event]:
    """Async `translate`; `final()` is awaited."""
    for event in translator.start(input, resumed=resumed):
        if keep(event):
            yield event
    try:
        async for ns, mode, chunk in stream:
            for event in translator.feed(ns, mode, chunk):
                if keep(event):
                    yield event
    except Exception as exc:
        for event in translator.fail(exc):
            if keep(event):
                yield event
        raise
    values, interrupts = await final()
    for event in translator.finish(values, interrupts):
        if keep(event):
            yield event


def _prepared(
    agent: Agent, data: Any, cfg: Any, durability: Any, events: Any
) -> tuple[EventTranslator, dict[str, Any], dict[str, Any], Any]:
    """The translator, `translate`'s options, LangGraph's stream options and the run's config
    (with the watcher of failed model attempts), for one run."""
    from langgraph.types import Command

    translator = EventTranslator(agent, str(cfg["configurable"]["thread_id"]))
    options = {
        "input": {"resume": data.resume} if isinstance(data, Command) else data,
        "resumed": data is None or isinstance(data, Command),
        "keep": ev.as_predicate(events),
    }
    streaming = {"stream_mode": STREAM_MODES, "subgraphs": True, "durability": durability}
    return translator, options, streaming, with_watcher(cfg)


def stream_events(
    agent: Agent, graph: Any, data: Any, cfg: Any, *, durability: Any, events: Any
) -> Iterator[ev.Event]:
    """Typed events of a sync run of the compiled root `graph` (see `Runtime.stream`)."""
    translator, options, streaming, watched = _prepared(agent, data, cfg, durability, events)

    def final() -> tuple[Mapping[str, Any], Any]:
        if not graph.checkpointer:
            return {}, ()
        snapshot = graph.get_state(cfg)
        return dict(snapshot.values or {}), snapshot.interrupts

    stream = graph.stream(data, watched, **streaming)
    return translate(translator, stream, final=final, **options)


def astream_events(
    agent: Agent, graph: Any, data: Any, cfg: Any, *, durability: Any, events: Any
) -> AsyncIterator[ev.Event]:
    """Typed events of an async run (see `Runtime.astream`)."""
    translator, options, streaming, watched = _prepared(agent, data, cfg, durability, events)

    async def final() -> tuple[Mapping[str, Any], Any]:
        if not graph.checkpointer:
            return {}, ()
        snapshot = await graph.aget_state(cfg)
        return dict(snapshot.values or {}), snapshot.interrupts

    stream = graph.astream(data, watched, **streaming)
    return translate_async(translator, stream, final=final, **options)
