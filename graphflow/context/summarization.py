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
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from graphflow.context._pipeline import Parts
from graphflow.context.policy import ContextPolicy

__all__ = ("Summarization",)


class Summarization(ContextPolicy):
    """Summarize older rounds once the request would exceed `trigger` × the context window."""

    def __init__(
        self,
        model: BaseChatModel | str | None = None,
        *,
        trigger: float = 0.8,
        keep_last: int = 4,
        context_window: int | None = None,
        max_input_tokens: int | None = None,
        offload: Any = None,
    ) -> None:
        """Configure the summarization.

        Args:
            model: the summarizer (a chat model or `"openai:<name>"`); None uses the agent's
                own model.
            trigger: summarize when the request would exceed this fraction of the window.
            keep_last: tool rounds kept whole after the summary (halved, down to 1, while the
                request is still too large).
            context_window: the agent model's window in tokens; None looks the model up in
                `graphflow.context.CONTEXT_WINDOWS`.
            max_input_tokens: most tokens one summarizer call is sent; None: half the
                summarizer's window, at most 32,000.
            offload: where summaries and summarized results go (see `ObservationMasking`).
        """
        if not 0 < trigger <= 1:
            raise ValueError(f"Summarization: trigger={trigger}; use a fraction in (0, 1]")
        if keep_last < 1:
            raise ValueError(f"Summarization: keep_last={keep_last}; it must be at least 1")
        if context_window is not None and context_window < 1:
            raise ValueError(f"Summarization: context_window={context_window} must be positive")
        if max_input_tokens is not None and max_input_tokens < 256:
            raise ValueError(
                f"Summarization: max_input_tokens={max_input_tokens}; use at least 256"
            )
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
        self._resolved: BaseChatModel | None = None

    def summarizer_model(self, agent_model: BaseChatModel) -> BaseChatModel:
        """The model that writes summaries (the agent's own when none was given)."""
        if self.model is None:
            return agent_model
        if self._resolved is None:
            from graphflow.models import resolve_model

            self._resolved = resolve_model(self.model, agent="summarizer")
        return self._resolved

    def _parts(self) -> Parts:
        return Parts(summarization=self, offload=self.offload, written=self._written)
