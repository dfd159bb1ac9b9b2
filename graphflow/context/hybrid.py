"""`HybridContext`: mask first, summarize only when masking is not enough (the recommended policy).

The seed's finding: summaries alone made runs about 15% longer, because a summary hides the
signal that the agent should stop; masking is cheap and keeps the trajectory readable. So each
request is built in this order:

1. apply the summary made earlier, if any;
2. mask tool results older than `masking.keep_last` rounds, or than the rounds whose results fit
   in `masking.keep_tokens`;
3. only if the request still exceeds `summarization.trigger` × the window, summarize;
4. add a note when the last tool calls loop (`LoopBreaker`);
5. check tool-call pairs and repair any orphan.

What fired, how often, the tokens saved and the summarizer calls are recorded in the agent's
`gf_context` state (`ContextStats.from_state(...)`) and in `graphflow_context` custom stream
events.
"""

from __future__ import annotations

from typing import Any, Literal

from graphflow.context._pipeline import Parts
from graphflow.context.loops import LoopBreaker
from graphflow.context.masking import ObservationMasking
from graphflow.context.policy import ContextPolicy
from graphflow.context.summarization import Summarization

__all__ = ("HybridContext",)


class HybridContext(ContextPolicy):
    """Observation masking, then summarization when needed, plus the loop breaker."""

    def __init__(
        self,
        masking: ObservationMasking | None = None,
        summarization: Summarization | Literal[False] | None = None,
        *,
        loop_breaker: LoopBreaker | Literal[False] | None = None,
        context_window: int | None = None,
        offload: Any = None,
    ) -> None:
        """Configure the layers.

        Args:
            masking: the masking settings (default `ObservationMasking()`: keep 10 rounds, as
                far as their results fit in 2,000 tokens).
            summarization: the summarization settings (default `Summarization()`: the agent's
                model summarizes at 80% of its window); False for masking only.
            loop_breaker: the loop breaker (default `LoopBreaker()`: 3 repeats); False for none.
            context_window: the agent model's window in tokens, overriding the table (and the
                summarization's own setting).
            offload: where originals and summaries are kept; this store is used for every layer.
        """
        super().__init__(offload=offload)
        self.masking = masking or ObservationMasking()
        """The masking layer."""
        self.summarization: Summarization | None = (
            None if summarization is False else (summarization or Summarization())
        )
        """The summarization layer, or None."""
        self.context_window = context_window
        """The agent model's window, overriding the table and the summarization's setting."""
        self.loop_breaker: LoopBreaker | None = (
            None if loop_breaker is False else (loop_breaker or LoopBreaker())
        )
        """The loop breaker, or None."""

    def _parts(self) -> Parts:
        return Parts(
            masking=self.masking,
            summarization=self.summarization,
            loop_breaker=self.loop_breaker,
            offload=self.offload,
            written=self._written,
            context_window=self.context_window,
        )
