"""`ObservationMasking`: old tool results become placeholders; the originals stay recallable.

The first layer of the seed's strategy: tool results older than the last `keep_last` tool rounds
are replaced — in what the model is sent, not in the checkpointed history — by a placeholder
naming the tool, the size, a one-line gist and an observation id::

    [web_search result (2,140 chars) omitted — recall_observation("obs_17")] Gist: Pura X ...

Reasoning, tool calls and small results stay whole. The original goes to the offload store and
the `recall_observation(id)` tool (added to the request once something is masked) brings it back.

The seed keeps 10 rounds; graphflow keeps them *as far as their results fit in `keep_tokens`*
(2,000 by default). Small results keep all ten rounds, while large ones, which are what fill a
window and would be resent on every call, are masked once the model has read them and a few
newer ones have arrived; the newest round always stays whole. Walking back from the newest
round, the first round that does not fit is masked with everything before it, so the boundary
only moves forward: a result once masked is never sent whole again.
"""

from __future__ import annotations

from typing import Any

from graphflow.context._pipeline import Parts
from graphflow.context.policy import ContextPolicy

__all__ = ("ObservationMasking",)


class ObservationMasking(ContextPolicy):
    """Mask the tool results of all but the last `keep_last` tool rounds."""

    def __init__(
        self,
        keep_last: int = 10,
        *,
        keep_tokens: int | None = 2_000,
        min_chars: int = 500,
        gist_chars: int = 80,
        offload: Any = None,
    ) -> None:
        """Configure the masking.

        Args:
            keep_last: tool rounds (a model turn's calls and their results) kept whole, newest
                first; at least 1.
            keep_tokens: the most tokens of tool results kept whole: walking back from the
                newest round, a round whose results would exceed it is masked with every older
                one, even within `keep_last` (the newest round always stays whole). Ten results
                of 200 tokens keep all ten rounds; 2 KB pages keep about four. None: no budget,
                `keep_last` rounds whatever their size.
            min_chars: results shorter than this stay whole (a placeholder would not be smaller).
            gist_chars: length of the gist in the placeholder (0: no gist).
            offload: where the originals go: a LangGraph `BaseStore`, a directory path, an
                `OffloadStore`, or None for the run's store (else an in-memory one).
        """
        if keep_last < 1:
            raise ValueError(
                f"ObservationMasking: keep_last={keep_last}; it must be at least 1 (the newest "
                "round's results are what the model has not read yet)"
            )
        if keep_tokens is not None and keep_tokens < 0:
            raise ValueError(
                f"ObservationMasking: keep_tokens={keep_tokens}; use a number of tokens >= 0 "
                "(0 keeps only the newest round whole) or None for no budget"
            )
        if min_chars < 0 or gist_chars < 0:
            raise ValueError("ObservationMasking: min_chars and gist_chars must be >= 0")
        super().__init__(offload=offload)
        self.keep_last = keep_last
        """Tool rounds kept whole."""
        self.keep_tokens = keep_tokens
        """Most tokens of tool results kept whole (None: no budget)."""
        self.min_chars = min_chars
        """Results shorter than this are never masked."""
        self.gist_chars = gist_chars
        """Characters of gist in a placeholder."""

    def _parts(self) -> Parts:
        return Parts(masking=self, offload=self.offload, written=self._written)
