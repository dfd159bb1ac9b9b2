"""`Summarization`: condense older rounds into one structured summary when the window fills up.

When what would be sent exceeds `trigger` × the model's context window, the rounds before the
last `keep_last` are summarized by a summarizer model into five sections — **Goal**,
**Progress**, **Key Decisions**, **Critical Context** (paths, names, figures, observation ids),
**Next Steps** — and sent as one clearly marked message in their place. The cut always falls
between rounds, so a tool call is never separated from its result (and the final request is
checked and repaired anyway).

The summary is kept in the agent's `gf_context` state (and in the offload store), so the next
call — or a resumed run — reuses it instead of summarizing again; a later summary folds the
earlier one in. The summarizer's input is bounded by `max_input_tokens`: a long history is
chunked and the partial summaries merged. Tool results of summarized rounds are offloaded, so they
stay recallable. If the summarizer fails, the run goes on (with masking, in `HybridContext`) and
the failure is recorded.

Summarization is bounded on both sides: the summarizer's calls share the agent's `model_timeout`
(a stalled summarizer is abandoned when it is up, and the call goes on without a new summary),
and a summary longer than `max_summary_tokens` (a quarter of the window by default) is cut,
section by section, so a runaway summarizer cannot fill the window it was meant to relieve.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.errors import GraphBubbleUp

from graphflow.context import _settings, _view
from graphflow.context._pipeline import MAX_RECORDS, Work, log
from graphflow.context._summarizer import Summarizer, fit, render
from graphflow.context.masking import ObservationMasking
from graphflow.context.policy import ContextPolicy
from graphflow.context.recall import recall_tool
from graphflow.context.step import ContextStep, StepContext
from graphflow.context.tokens import token_counter
from graphflow.context.windows import context_window
from graphflow.exceptions import GraphflowConfigError, ModelTimeoutError
from graphflow.messages import MASK_MARK, RECALL_MARK, SUMMARY_MARK

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ("Summarization",)

_SUMMARIZER_TAGS = ["nostream", "graphflow:context_summarizer"]


class Summarization(ContextPolicy, ContextStep):
    """Summarize older rounds once the request would exceed `trigger` × the context window.

    A policy on its own and a step of a `ContextPipeline` (after `ObservationMasking`: the
    rounds it would condense are then masked first, and a summary is paid for only when masking
    was not enough).
    """

    recalls = True

    def __init__(
        self,
        model: BaseChatModel | str | None = None,
        *,
        trigger: float = 0.8,
        keep_last: int = 4,
        context_window: int | None = None,
        max_input_tokens: int | None = None,
        max_summary_tokens: int | None = None,
        offload: Any = None,
    ) -> None:
        """Configure the summarization.

        Args:
            model: the summarizer (a chat model or `"openai:<name>"`); None uses the agent's
                own model. Its calls share the agent's `model_timeout`.
            trigger: summarize when the request would exceed this fraction of the window.
            keep_last: tool rounds kept whole after the summary (halved, down to 1, while the
                request is still too large).
            context_window: the agent model's window in tokens; None looks the model up in
                `graphflow.context.CONTEXT_WINDOWS`.
            max_input_tokens: most tokens one summarizer call is sent; None: half the
                summarizer's window, at most 32,000.
            max_summary_tokens: most tokens of a summary; a longer one is cut, each of its
                five sections to its share. None: a quarter of the context window (at most
                half the window in any case).
            offload: where summaries and summarized results go (see `ObservationMasking`).

        Raises:
            GraphflowConfigError: a summarizer that is not a chat model (or a malformed model
                string), a setting out of range, or an offload store that cannot be used.
        """
        owner = "Summarization"
        _check_summarizer(model)
        _settings.fraction(owner, "trigger", trigger)
        _settings.whole(owner, "keep_last", keep_last, minimum=1)
        _settings.whole(owner, "context_window", context_window, minimum=1, optional=True)
        _settings.whole(owner, "max_input_tokens", max_input_tokens, minimum=256, optional=True)
        _settings.whole(owner, "max_summary_tokens", max_summary_tokens, minimum=64, optional=True)
        super().__init__(offload=offload)
        self.model = model
        """The summarizer model, or None for the agent's model."""
        self.trigger = trigger
        """Fraction of the context window that triggers a summary."""
        self.keep_last = keep_last
        """Tool rounds kept whole after the summary."""
        self.context_window = context_window
        """The agent model's window (None: from the table)."""
        self.max_input_tokens = max_input_tokens
        """Most tokens per summarizer call (None: derived from the summarizer's window)."""
        self.max_summary_tokens = max_summary_tokens
        """Most tokens of a summary (None: a quarter of the context window)."""
        self._resolved: BaseChatModel | None = None

    def summarizer_model(self, agent_model: BaseChatModel) -> BaseChatModel:
        """The model that writes summaries (the agent's own when none was given)."""
        if self.model is None:
            return agent_model
        if self._resolved is None:
            from graphflow.models import resolve_model

            self._resolved = resolve_model(self.model, agent="summarizer")
        return self._resolved

    # -- the step ---------------------------------------------------------------------------------

    def restore(self, messages: list[BaseMessage], context: StepContext) -> list[BaseMessage]:
        """Put the summary made on an earlier call in place of the rounds it condensed."""
        work = context._work
        if work.summary is not None:  # put back by an earlier Summarization step already
            return messages
        summary = work.record.get("summary")
        view, applied = _view.apply_summary(messages, summary)
        if not applied:
            if summary:
                work.record["summary"] = None  # the history it condensed is gone: forget it
            return view
        assert summary is not None
        limit = self._summary_limit(work)
        text = fit(str(summary["text"]), work.counter, limit)
        if text != summary["text"]:  # (recorded before summaries were cut)
            summary = {**summary, "text": text}
            work.record["summary"] = summary
            view, _ = _view.apply_summary(messages, summary)
        work.summary = summary
        return view

    def apply(self, messages: list[BaseMessage], context: StepContext) -> list[BaseMessage]:
        """Condense older rounds into the summary while the request is over the trigger."""
        work = context._work
        # counted with the recall tool: a summary brings it into the request
        tools = [*context.tools, recall_tool()]
        view = messages
        masking = _earlier(work, self, ObservationMasking)
        if masking is not None and self._over(work, view, tools):
            # mask first: the rounds a summary would condense are masked before any summary is
            # paid for (keeping only the rounds a summary would keep whole)
            view = masking.mask(view, context, keep_last=min(masking.keep_last, self.keep_last))
        timeout = context.request.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        keep = self.keep_last
        while self._over(work, view, tools):
            cut = _view.choose_cut(view, keep)
            if cut is None:
                break
            start, end = cut
            through = next((m.id for m in reversed(view[start:end]) if m.id), None)
            if through is None:
                break
            try:
                summary = self._new_summary(work, view[start:end], str(through), deadline)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                _record_failure(work, exc)
                break
            work.summary = summary
            work.record["summary"] = summary
            # the new summary replaces the old one (it includes it) and the span after it
            replaces_old = start > 0 and SUMMARY_MARK in view[start - 1].additional_kwargs
            pinned = start - 1 if replaces_old else start
            view = [*view[:pinned], _view.summary_message(summary), *view[end:]]
            if keep == 1:
                break
            keep = max(1, keep // 2)
        return view

    # -- its parts --------------------------------------------------------------------------------

    def _window(self, work: Work) -> int:
        return context_window(work.request.model, work.window_override or self.context_window)

    def _summary_limit(self, work: Work) -> int:
        window = self._window(work)
        # (half the window at most, whatever the setting: a summary is there to make room)
        return max(1, min(self.max_summary_tokens or max(64, window // 4), window // 2))

    def _over(self, work: Work, view: list[BaseMessage], tools: list[Any]) -> bool:
        """Whether `view` exceeds the trigger (trigger × the context window)."""
        return work.counter.count(view, tools) * work.calibration > self.trigger * self._window(
            work
        )

    def _new_summary(
        self, work: Work, span: list[BaseMessage], through: str, deadline: float | None
    ) -> dict[str, Any]:
        previous = work.summary
        rounds = len(_view.round_starts(span)) + int((previous or {}).get("rounds") or 0)
        seed = f"{(previous or {}).get('through', '')}>{through}"
        key = "sum_" + hashlib.sha256(seed.encode()).hexdigest()[:24]
        names = _view.call_names(span)
        obs_ids: dict[str, str] = {}
        for message in span:
            if isinstance(message, ToolMessage) and message.id in work.ordinals:
                obs_id = str(
                    message.additional_kwargs.get(RECALL_MARK)
                    or message.additional_kwargs.get(MASK_MARK)
                    or _view.observation_id(work.ordinals[message.id])
                )
                obs_ids[message.id or ""] = obs_id
                if RECALL_MARK not in message.additional_kwargs:
                    tool = message.name or names.get(message.tool_call_id, "tool")
                    work.offload_result(message, obs_id, tool)
        cached = work.offload.get(work.where, key)
        number = int((previous or {}).get("number") or 0) + 1
        stats = work.stats
        if cached and cached.get("text"):
            # made in a call that died before its step was saved: reuse it, and count the calls
            # that made it (they were never counted, since that step's record was lost)
            text = fit(str(cached["text"]), work.counter, self._summary_limit(work))
            stats["summarizer_calls"] = int(stats.get("summarizer_calls", 0)) + int(
                cached.get("calls") or 0
            )
        else:
            model = self.summarizer_model(work.request.model)
            budget = self.max_input_tokens or min(32_000, context_window(model) // 2)
            summarizer = Summarizer(_bounded(work, model, deadline), token_counter(model), budget)
            try:
                text = summarizer.summarize((previous or {}).get("text"), render(span, obs_ids))
            finally:
                stats["summarizer_calls"] = int(stats.get("summarizer_calls", 0)) + (
                    summarizer.calls
                )
            text = fit(text, work.counter, self._summary_limit(work))
            work.offload.put(
                work.where,
                key,
                {"text": text, "rounds": rounds, "through": through, "calls": summarizer.calls},
            )
        stats["summaries"] = int(stats.get("summaries", 0)) + 1
        work.events.append({"event": "summarized", "rounds": rounds, "number": number})
        return {"text": text, "through": through, "rounds": rounds, "number": number}


def _check_summarizer(model: Any) -> None:
    if model is None:
        return
    from graphflow.models.resolve import check_model

    try:
        check_model(model)
    except GraphflowConfigError as exc:
        raise GraphflowConfigError(
            f"Summarization: the summarizer {exc}; or None to use the agent's own model"
        ) from None


def _earlier(work: Work, step: ContextStep, kind: type[Any]) -> Any:
    """The last step of type `kind` that runs before `step` in this pipeline, or None."""
    found = None
    for other in work.steps:
        if other is step:
            return found
        if isinstance(other, kind):
            found = other
    return None


def _bounded(
    work: Work, model: BaseChatModel, deadline: float | None
) -> Callable[[list[BaseMessage]], AIMessage]:
    """One summarizer call, abandoned at `deadline`.

    The deadline is the agent's `model_timeout` from the start of this summarization: its calls
    (chunks, merges) share it.
    """
    from graphflow.models.timeout import call_with_timeout

    limit = work.request.timeout
    name = getattr(model, "model_name", None) or type(model).__name__

    def timed_out() -> ModelTimeoutError:
        return ModelTimeoutError(
            f"Agent `{work.request.agent}`: the summarizer ({name}) took longer than the agent's "
            f"model_timeout={limit} s and was abandoned; the call goes on without a new summary. "
            "Give Summarization a faster model, or raise model_timeout",
            agent=work.request.agent,
            model=str(name),
            retryable=True,
        )

    def invoke(messages: list[BaseMessage]) -> AIMessage:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise timed_out()
        config = {"tags": list(_SUMMARIZER_TAGS)}
        reply = call_with_timeout(model, messages, config, remaining, timed_out)  # type: ignore[arg-type]
        return reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply))

    return invoke


def _record_failure(work: Work, exc: Exception) -> None:
    message = f"{type(exc).__name__}: {exc}"
    log.warning(
        "Agent `%s`: summarization failed (%s); continuing with masking only",
        work.request.agent,
        message,
    )
    work.stats["summarizer_failures"] = int(work.stats.get("summarizer_failures", 0)) + 1
    work.stats["last_error"] = message
    failures = list(work.record.get("failures") or [])
    failures.append({"error": message, "call": work.request.call_number})
    work.record["failures"] = failures[-MAX_RECORDS:]
    work.events.append({"event": "summarizer_failed", "error": message})
