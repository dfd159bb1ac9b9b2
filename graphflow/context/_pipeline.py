"""One model call's context work: summary, masking, summarization, loop note, pair check.

Runs in `before_model`. Everything it decides is a function of the checkpointed history and the
policy's own record in `gf_context`, so a resumed run builds the same request again.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.errors import GraphBubbleUp

from graphflow.context import _view
from graphflow.context._summarizer import Summarizer, render
from graphflow.context.offload import OffloadLocation, OffloadStore, current_location
from graphflow.context.pairs import repair_tool_pairs
from graphflow.context.recall import RECALL_TOOL, recall_tool
from graphflow.context.tokens import TokenCounter, token_counter
from graphflow.context.windows import context_window
from graphflow.exceptions import GraphflowConfigError
from graphflow.hooks.base import ModelRequest
from graphflow.messages import MASK_MARK, NOTE_MARK, RECALL_MARK, SUMMARY_MARK
from graphflow.state import CONTEXT, MESSAGES

if TYPE_CHECKING:
    from graphflow.context.loops import LoopBreaker
    from graphflow.context.masking import ObservationMasking
    from graphflow.context.summarization import Summarization

log = logging.getLogger("graphflow.context")

_SUMMARIZER_TAGS = ["nostream", "graphflow:context_summarizer"]
_MAX_RECORDS = 20


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


@dataclass(kw_only=True)
class Parts:
    """What one policy does."""

    masking: ObservationMasking | None = None
    summarization: Summarization | None = None
    loop_breaker: LoopBreaker | None = None
    offload: OffloadStore
    written: WrittenSet
    context_window: int | None = None
    """Overrides the summarization's own window (HybridContext's setting)."""


@dataclass(kw_only=True)
class _Run:
    """The working state of one call."""

    request: ModelRequest
    parts: Parts
    where: OffloadLocation
    counter: TokenCounter
    record: dict[str, Any]
    stats: dict[str, Any]
    history: list[BaseMessage]
    originals: dict[str, ToolMessage]
    ordinals: dict[str, int]
    calibration: float
    events: list[dict[str, Any]] = field(default_factory=list)

    def offload_result(self, message: ToolMessage, obs_id: str, tool: str) -> None:
        key = (*self.where.labels, obs_id)
        if not self.parts.written.add(key):
            return
        original = self.originals.get(message.id or "", message)
        self.parts.offload.put(
            self.where,
            obs_id,
            {
                "content": original.content,
                "tool": tool,
                "chars": len(_view.text_of(original)),
                "tool_call_id": original.tool_call_id,
                "agent": self.request.agent,
            },
        )


def prepare(request: ModelRequest, parts: Parts) -> ModelRequest:
    """The request to send instead of `request`, with the policy's record in `state_update`."""
    recalls = parts.masking is not None or parts.summarization is not None
    if recalls and any(t.name == RECALL_TOOL for t in request.tools):
        raise GraphflowConfigError(
            f"Agent `{request.agent}` has its own tool named {RECALL_TOOL!r}, which the context "
            "policy adds to recall masked results; rename that tool"
        )
    history = list(request.state.get(MESSAGES) or [])
    record = dict(request.state.get(CONTEXT) or {})
    run = _Run(
        request=request,
        parts=parts,
        where=current_location(),
        counter=token_counter(request.model),
        record=record,
        stats=dict(record.get("stats") or {}),
        history=history,
        originals={m.id: m for m in history if isinstance(m, ToolMessage) and m.id},
        ordinals=_view.tool_ordinals(history),
        calibration=_calibration(record, history),
    )
    tools = list(request.tools)
    before = run.counter.count(request.messages, tools)
    view = list(request.messages)

    summary = record.get("summary") if parts.summarization is not None else None
    view, applied = _view.apply_summary(view, summary)
    if not applied:
        summary = None

    if parts.masking is not None:
        view = _mask(run, view)

    if parts.summarization is not None:
        # counted with the recall tool: a summary brings it into the request
        counted = [*tools, recall_tool()]
        if parts.masking is not None and _over(run, view, counted):
            # mask first: the rounds a summary would condense are masked before any summary is
            # paid for (keeping only the rounds a summary would keep whole)
            tighter = min(parts.masking.keep_last, parts.summarization.keep_last)
            view = _mask(run, view, keep_last=tighter)
        view, summary = _summarize_if_needed(run, view, summary, counted)

    if parts.loop_breaker is not None:
        view = _loop_note(run, view)

    view, repairs = repair_tool_pairs(view)
    masked_now = sum(1 for m in view if MASK_MARK in m.additional_kwargs)
    if masked_now or summary is not None:
        tools.append(recall_tool())
    after = run.counter.count(view, tools)

    stats = run.stats
    stats["model_calls"] = int(stats.get("model_calls", 0)) + 1
    stats["masked_results"] = masked_now
    stats["masking_fired"] = int(stats.get("masking_fired", 0)) + (1 if masked_now else 0)
    stats["tokens_saved"] = int(stats.get("tokens_saved", 0)) + max(0, before - after)
    stats["last_request_tokens"] = after
    stats["largest_request_tokens"] = max(int(stats.get("largest_request_tokens", 0)), after)
    stats["pair_repairs"] = int(stats.get("pair_repairs", 0)) + repairs
    if repairs:
        run.events.append({"event": "pairs_repaired", "count": repairs})

    update: dict[str, Any] = {
        "stats": stats,
        "sent": {"tokens": after, "messages": len(history)},
        "calibration": run.calibration,
    }
    if summary is not None and summary is not record.get("summary"):
        update["summary"] = summary
    elif summary is None and parts.summarization is not None and record.get("summary"):
        update["summary"] = None  # the history it condensed is gone (e.g. replaced): forget it
    for key in ("loops", "failures"):
        if key in run.record:
            update[key] = run.record[key]
    _emit(request, run, masked_now, before, after)
    merged = dict(request.state_update)
    merged[CONTEXT] = {**(merged.get(CONTEXT) or {}), **update}
    return request.override(messages=view, tools=tools, state_update=merged)


# -- steps ----------------------------------------------------------------------------------------


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


def _mask(run: _Run, view: list[BaseMessage], keep_last: int | None = None) -> list[BaseMessage]:
    masking = run.parts.masking
    assert masking is not None
    view, masked = _view.mask(
        view,
        keep_last=keep_last or masking.keep_last,
        min_chars=masking.min_chars,
        gist_chars=masking.gist_chars,
        ordinals=run.ordinals,
        keep_tokens=masking.keep_tokens,
        cost=run.counter.count_text,
    )
    for item in masked:
        if not item.stored:
            run.offload_result(item.original, item.obs_id, item.tool)
    return view


def _over(run: _Run, view: list[BaseMessage], tools: list[Any]) -> bool:
    """Whether `view` exceeds the summarization trigger (trigger × the context window)."""
    settings = run.parts.summarization
    assert settings is not None
    window = context_window(run.request.model, run.parts.context_window or settings.context_window)
    return run.counter.count(view, tools) * run.calibration > settings.trigger * window


def _summarize_if_needed(
    run: _Run,
    view: list[BaseMessage],
    summary: dict[str, Any] | None,
    tools: list[Any],
) -> tuple[list[BaseMessage], dict[str, Any] | None]:
    settings = run.parts.summarization
    assert settings is not None
    keep = settings.keep_last
    while _over(run, view, tools):
        cut = _view.choose_cut(view, keep)
        if cut is None:
            break
        start, end = cut
        through = next((m.id for m in reversed(view[start:end]) if m.id), None)
        if through is None:
            break
        try:
            summary = _new_summary(run, view[start:end], summary, str(through))
        except GraphBubbleUp:
            raise
        except Exception as exc:
            _record_failure(run, exc)
            break
        # the new summary replaces the old one (it includes it) and the span after it
        replaces_old = start > 0 and SUMMARY_MARK in view[start - 1].additional_kwargs
        pinned = start - 1 if replaces_old else start
        view = [*view[:pinned], _view.summary_message(summary), *view[end:]]
        if keep == 1:
            break
        keep = max(1, keep // 2)
    return view, summary


def _new_summary(
    run: _Run, span: list[BaseMessage], previous: dict[str, Any] | None, through: str
) -> dict[str, Any]:
    settings = run.parts.summarization
    assert settings is not None
    rounds = len(_view.round_starts(span)) + int((previous or {}).get("rounds") or 0)
    key = (
        "sum_"
        + hashlib.sha256(f"{(previous or {}).get('through', '')}>{through}".encode()).hexdigest()[
            :24
        ]
    )
    names = _view.call_names(span)
    obs_ids: dict[str, str] = {}
    for message in span:
        if isinstance(message, ToolMessage) and message.id in run.ordinals:
            obs_id = str(
                message.additional_kwargs.get(RECALL_MARK)
                or message.additional_kwargs.get(MASK_MARK)
                or _view.observation_id(run.ordinals[message.id])
            )
            obs_ids[message.id or ""] = obs_id
            if RECALL_MARK not in message.additional_kwargs:
                tool = message.name or names.get(message.tool_call_id, "tool")
                run.offload_result(message, obs_id, tool)
    cached = run.parts.offload.get(run.where, key)
    number = int((previous or {}).get("number") or 0) + 1
    if cached and cached.get("text"):
        # made in a call that died before its step was saved: reuse it, and count the calls
        # that made it (they were never counted, since that step's record was lost)
        text = str(cached["text"])
        run.stats["summarizer_calls"] = int(run.stats.get("summarizer_calls", 0)) + int(
            cached.get("calls") or 0
        )
    else:
        model = settings.summarizer_model(run.request.model)
        summarizer_counter = token_counter(model)
        budget = settings.max_input_tokens or min(32_000, context_window(model) // 2)

        def invoke(messages: list[BaseMessage]) -> AIMessage:
            reply = model.invoke(messages, config={"tags": list(_SUMMARIZER_TAGS)})
            return reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply))

        summarizer = Summarizer(invoke, summarizer_counter, budget)
        try:
            text = summarizer.summarize((previous or {}).get("text"), render(span, obs_ids))
        finally:
            run.stats["summarizer_calls"] = int(run.stats.get("summarizer_calls", 0)) + (
                summarizer.calls
            )
        run.parts.offload.put(
            run.where,
            key,
            {"text": text, "rounds": rounds, "through": through, "calls": summarizer.calls},
        )
    run.stats["summaries"] = int(run.stats.get("summaries", 0)) + 1
    run.events.append({"event": "summarized", "rounds": rounds, "number": number})
    return {"text": text, "through": through, "rounds": rounds, "number": number}


def _record_failure(run: _Run, exc: Exception) -> None:
    message = f"{type(exc).__name__}: {exc}"
    log.warning(
        "Agent `%s`: summarization failed (%s); continuing with masking only",
        run.request.agent,
        message,
    )
    run.stats["summarizer_failures"] = int(run.stats.get("summarizer_failures", 0)) + 1
    run.stats["last_error"] = message
    failures = list(run.record.get("failures") or [])
    failures.append({"error": message, "call": run.request.call_number})
    run.record["failures"] = failures[-_MAX_RECORDS:]
    run.events.append({"event": "summarizer_failed", "error": message})


def _loop_note(run: _Run, view: list[BaseMessage]) -> list[BaseMessage]:
    breaker = run.parts.loop_breaker
    assert breaker is not None
    loop = breaker.detect(run.history)
    if loop is None:
        return view
    if loop.repeats == breaker.repeats:  # a new streak (a longer one was recorded already)
        run.stats["loops_detected"] = int(run.stats.get("loops_detected", 0)) + 1
        loops = list(run.record.get("loops") or [])
        loops.append(
            {"tool": loop.tool, "args": loop.args, "call_id": loop.call_id, "repeats": loop.repeats}
        )
        run.record["loops"] = loops[-_MAX_RECORDS:]
        run.events.append({"event": "loop_detected", "tool": loop.tool, "repeats": loop.repeats})
    note = HumanMessage(content=loop.note(), additional_kwargs={NOTE_MARK: "loop"})
    return [*view, note]


def _emit(request: ModelRequest, run: _Run, masked: int, before: int, after: int) -> None:
    if masked or run.events:
        emit(
            request,
            {
                "masked": masked,
                "tokens_before": before,
                "tokens_after": after,
                "events": list(run.events),
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
