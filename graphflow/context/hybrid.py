"""`HybridContext`: mask first, summarize only when masking is not enough (the recommended policy).

The seed's finding: summaries alone made runs about 15% longer, because a summary hides the
signal that the agent should stop; masking is cheap and keeps the trajectory readable. So each
request is built in this order:

1. apply the summary made earlier, if any (`Summarization.restore`);
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

from collections.abc import Sequence
from typing import Any, Literal

from graphflow.context import _settings
from graphflow.context.loops import LoopBreaker
from graphflow.context.masking import ObservationMasking
from graphflow.context.pipeline import ContextPipeline
from graphflow.context.step import ContextStep
from graphflow.context.summarization import Summarization

__all__ = ("HybridContext",)


class HybridContext(ContextPipeline):
    """Observation masking, then summarization when needed, plus the loop breaker.

    The pipeline `[masking, summarization, loop_breaker]`; its layers stay editable as
    attributes.
    """

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

        Raises:
            GraphflowConfigError: a layer of the wrong kind, a window that is not a positive
                whole number, or an unusable offload store.
        """
        owner = "HybridContext"
        _settings.instance(owner, "masking", masking, ObservationMasking)
        _settings.instance(owner, "summarization", summarization, Summarization, off=True)
        _settings.instance(owner, "loop_breaker", loop_breaker, LoopBreaker, off=True)
        self.masking = masking or ObservationMasking()
        """The masking layer."""
        self.summarization: Summarization | None = (
            None if summarization is False else (summarization or Summarization())
        )
        """The summarization layer, or None."""
        self.loop_breaker: LoopBreaker | None = (
            None if loop_breaker is False else (loop_breaker or LoopBreaker())
        )
        """The loop breaker, or None."""
        super().__init__(self._layers(), context_window=context_window, offload=offload)

    def _layers(self) -> list[ContextStep]:
        layers: list[ContextStep | None] = [self.masking, self.summarization, self.loop_breaker]
        return [layer for layer in layers if layer is not None]

    def context_steps(self) -> Sequence[ContextStep]:
        """The layers that are on, in order: masking, summarization, loop breaker."""
        return tuple(self._layers())
