"""How a context policy runs its steps for one model call, and what it records.

Runs in `before_model`: every step's `restore`, then every step's `apply`, in order, over the
messages about to be sent; then the tool-call pairs are checked, the recall tool offered and the
counters recorded. Everything the built-in steps decide is a function of the checkpointed history
and the policy's own record in `gf_context`, so a resumed run builds the same request again.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from graphflow.context import _view
from graphflow.context.offload import OffloadLocation, OffloadStore, current_location
from graphflow.context.pairs import repair_tool_pairs
from graphflow.context.recall import RECALL_TOOL, recall_tool
from graphflow.context.step import ContextStep, StepContext
from graphflow.context.tokens import TokenCounter, token_counter
from graphflow.context.windows import context_window
from graphflow.exceptions import AgentRunError, GraphflowConfigError
from graphflow.hooks.base import ModelRequest
from graphflow.messages import MASK_MARK
from graphflow.state import CONTEXT, MESSAGES

log = logging.getLogger("graphflow.context")

MAX_RECORDS = 20
"""Most loop and failure records a policy keeps in `gf_context`."""


class WrittenSet:
    """Offload keys this process has written (bounded), so each original is put once."""

    def __init__(self, size: int = 100_000) -> None:
        self._seen: OrderedDict[tuple[str, ...], None] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def add(self, key: tuple[str, ...]) -> bool:
        """Record `key`; False if it was already recorded."""
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return False
            self._seen[key] = None
            if len(self._seen) > self._size:
                self._seen.popitem(last=False)
            return True


@dataclass(kw_only=True, eq=False)
class Work:
    """The working state of one call, shared by its steps (through their `StepContext`)."""

    request: ModelRequest
    steps: Sequence[ContextStep]
    offload: OffloadStore
    written: WrittenSet
    where: OffloadLocation
    counter: TokenCounter
    record: dict[str, Any]
    """The policy's record in `gf_context`, as read at the start of the call (steps edit it)."""
    stats: dict[str, Any]
    history: list[BaseMessage]
    originals: dict[str, ToolMessage]
    ordinals: dict[str, int]
    calibration: float
    window_override: int | None = None
    """The policy's `context_window` (HybridContext's, ContextPipeline's), if set."""
    events: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    """The summary the view holds now (set by `Summarization`)."""

    def offload_result(self, message: ToolMessage, obs_id: str, tool: str) -> None:
        """Put the original of `message` in the offload store (once per process and key)."""
        key = (*self.where.labels, obs_id)
        if not self.written.add(key):
            return
        original = self.originals.get(message.id or "", message)
        entry = {
            "content": original.content,
            "tool": tool,
            "chars": len(_view.text_of(original)),
            "tool_call_id": original.tool_call_id,
            "agent": self.request.agent,
        }
        try:
            self.offload.put(self.where, obs_id, entry)
        except OSError as exc:
            # (a masked result that cannot be kept could never be recalled: stop, with the fix)
            agent = self.request.agent
            raise AgentRunError(
                f"Agent `{agent}`: the context policy could not keep the original of {obs_id} "
                f"in its offload store ({type(exc).__name__}: {exc}); make the store writable "
                "again (or give offload= another directory or store) and resume the run",
                agent=agent,
            ) from exc


def prepare(
    request: ModelRequest,
    steps: Sequence[ContextStep],
    *,
    offload: OffloadStore,
    written: WrittenSet,
    context_window: int | None = None,
) -> ModelRequest:
    """The request to send instead of `request`, with the policy's record in `state_update`.

    Runs every step's `restore`, then every step's `apply`, in order; then checks the tool-call
    pairs, offers the recall tool when something was offloaded, and records what fired.
    """
    if any(step.recalls for step in steps):
        _check_recall_name(request)
    history = list(request.state.get(MESSAGES) or [])
    original = dict(request.state.get(CONTEXT) or {})
    work = Work(
        request=request,
        steps=steps,
        offload=offload,
        written=written,
        where=current_location(),
        counter=token_counter(request.model),
        record=dict(original),
        stats=dict(original.get("stats") or {}),
        history=history,
        originals={m.id: m for m in history if isinstance(m, ToolMessage) and m.id},
        ordinals=_view.tool_ordinals(history),
        calibration=_calibration(original, history),
        window_override=context_window,
    )
    tools = list(request.tools)
    before = work.counter.count(request.messages, tools)
    context = StepContext(
        request=request, work=work, window=_window(request, steps, context_window)
    )
    view = list(request.messages)
    for step in steps:
        view = _checked(request, step, "restore", step.restore(list(view), context))
    for step in steps:
        view = _checked(request, step, "apply", step.apply(list(view), context))

    view, repairs = repair_tool_pairs(view)
    masked_now = sum(1 for m in view if MASK_MARK in m.additional_kwargs)
    if masked_now or work.summary is not None:
        _check_recall_name(request)
        tools.append(recall_tool())
    after = work.counter.count(view, tools)

    stats = work.stats
    stats["model_calls"] = int(stats.get("model_calls", 0)) + 1
    stats["masked_results"] = masked_now
    stats["masking_fired"] = int(stats.get("masking_fired", 0)) + (1 if masked_now else 0)
    stats["tokens_saved"] = int(stats.get("tokens_saved", 0)) + max(0, before - after)
    stats["last_request_tokens"] = after
    stats["largest_request_tokens"] = max(int(stats.get("largest_request_tokens", 0)), after)
    stats["pair_repairs"] = int(stats.get("pair_repairs", 0)) + repairs
    if repairs:
        work.events.append({"event": "pairs_repaired", "count": repairs})

    shown = _what_was_shown(view, work)
    update: dict[str, Any] = {
        "stats": stats,
        "sent": {"tokens": after, "messages": len(history)},
        "calibration": work.calibration,
        "last_call": shown,
    }
    # what the steps recorded (a new summary, loops, failures), or forgot (a summary whose
    # history is gone)
    for key, value in work.record.items():
        if key not in update and (key not in original or value is not original[key]):
            update[key] = value
    _emit(request, work, shown, before, after)
    merged = dict(request.state_update)
    merged[CONTEXT] = {**(merged.get(CONTEXT) or {}), **update}
    return request.override(messages=view, tools=tools, state_update=merged)


def _check_recall_name(request: ModelRequest) -> None:
    if any(t.name == RECALL_TOOL for t in request.tools):
        raise GraphflowConfigError(
            f"Agent `{request.agent}` has its own tool named {RECALL_TOOL!r}, which the context "
            "policy adds to recall masked results; rename that tool"
        )


def _window(request: ModelRequest, steps: Sequence[ContextStep], override: int | None) -> int:
    """The window steps are told: the policy's, else a step's own setting, else the table."""
    if override is None:
        override = next(
            (w for s in steps if isinstance(w := getattr(s, "context_window", None), int)), None
        )
    return context_window(request.model, override)


def _checked(request: ModelRequest, step: ContextStep, method: str, view: Any) -> list[BaseMessage]:
    if isinstance(view, list) and all(isinstance(m, BaseMessage) for m in view):
        return view
    found = type(view).__name__
    if isinstance(view, list):
        found = "a list holding " + next(
            type(m).__name__ for m in view if not isinstance(m, BaseMessage)
        )
    raise AgentRunError(
        f"Agent `{request.agent}`: context step {step.name}.{method}() returned {found}; it "
        "must return the list of messages to send (LangChain messages)",
        agent=request.agent,
    )


def _calibration(record: dict[str, Any], history: Sequence[BaseMessage]) -> float:
    """Reported / local tokens of the last request, from the reply's `usage_metadata`."""
    previous = float(record.get("calibration") or 1.0)
    sent = record.get("sent") or {}
    at = int(sent.get("messages", -1))
    if not sent.get("tokens") or not 0 <= at < len(history):
        return previous
    reply = history[at]
    usage = getattr(reply, "usage_metadata", None) if isinstance(reply, AIMessage) else None
    if not usage or not usage.get("input_tokens"):
        return previous
    return min(4.0, max(0.25, int(usage["input_tokens"]) / int(sent["tokens"])))


def _what_was_shown(view: Sequence[BaseMessage], work: Work) -> dict[str, Any]:
    """What the call's request holds instead of the history: masked results and the summary.

    Recorded in `gf_context["last_call"]` (and in the call's stream event), so a viewer of the
    run (the web UI) can say what the model was not sent whole without re-running the steps.
    """
    names = _view.call_names(work.history)
    masked = []
    for message in view:
        obs_id = message.additional_kwargs.get(MASK_MARK)
        if obs_id is None or not isinstance(message, ToolMessage):
            continue
        original = work.originals.get(message.id or "")
        masked.append(
            {
                "obs_id": str(obs_id),
                "tool": message.name or names.get(message.tool_call_id, "tool"),
                "tool_call_id": message.tool_call_id,
                "chars": len(_view.text_of(original)) if original is not None else None,
            }
        )
    summary = work.summary
    return {
        "call": work.request.call_number,
        "messages": len(work.history),
        "masked": masked,
        "summary": None
        if summary is None
        else {"rounds": summary.get("rounds"), "through": summary.get("through")},
    }


def _emit(
    request: ModelRequest, work: Work, shown: dict[str, Any], before: int, after: int
) -> None:
    if shown["masked"] or work.events:
        emit(
            request,
            {
                "masked": len(shown["masked"]),
                "masked_results": shown["masked"],
                "summary": shown["summary"],
                "tokens_before": before,
                "tokens_after": after,
                "events": list(work.events),
            },
        )


def emit(request: ModelRequest, record: dict[str, Any]) -> None:
    """Write a `graphflow_context` custom stream event about `request`'s call (if streaming)."""
    try:
        from langgraph.config import get_stream_writer

        writer = get_stream_writer()
    except (RuntimeError, KeyError, AttributeError):
        return
    writer({"graphflow_context": {"agent": request.agent, "call": request.call_number, **record}})
