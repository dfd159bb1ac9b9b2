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

from langchain_core.messages import BaseMessage

from graphflow.context import _settings, _view
from graphflow.context.policy import ContextPolicy
from graphflow.context.step import ContextStep, StepContext

__all__ = ("ObservationMasking",)


class ObservationMasking(ContextPolicy, ContextStep):
    """Mask the tool results of all but the last `keep_last` tool rounds.

    A policy on its own (`ReactAgent(context=ObservationMasking())`) and a step of a
    `ContextPipeline` or `HybridContext`.
    """

    recalls = True

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
                `OffloadStore`, or None for the run's store (else an in-memory one). Unused when
                the masking is a step of a pipeline (the pipeline's store is used).

        Raises:
            GraphflowConfigError: a setting out of range, or an offload store that cannot be
                used.
        """
        owner = "ObservationMasking"
        _settings.whole(
            owner,
            "keep_last",
            keep_last,
            minimum=1,
            hint="the newest round's results are what the model has not read yet",
        )
        _settings.whole(
            owner,
            "keep_tokens",
            keep_tokens,
            minimum=0,
            optional=True,
            hint="0 keeps only the newest round whole; None: no budget",
        )
        _settings.whole(owner, "min_chars", min_chars, minimum=0)
        _settings.whole(owner, "gist_chars", gist_chars, minimum=0)
        super().__init__(offload=offload)
        self.keep_last = keep_last
        """Tool rounds kept whole."""
        self.keep_tokens = keep_tokens
        """Most tokens of tool results kept whole (None: no budget)."""
        self.min_chars = min_chars
        """Results shorter than this are never masked."""
        self.gist_chars = gist_chars
        """Characters of gist in a placeholder."""

    def apply(self, messages: list[BaseMessage], context: StepContext) -> list[BaseMessage]:
        """Mask the results of the rounds before those kept whole, offloading the originals."""
        return self.mask(messages, context)

    def mask(
        self, messages: list[BaseMessage], context: StepContext, *, keep_last: int | None = None
    ) -> list[BaseMessage]:
        """`apply`, keeping `keep_last` rounds whole instead of the setting.

        `Summarization` masks tighter before it condenses rounds.
        """
        work = context._work
        view, masked = _view.mask(
            messages,
            keep_last=keep_last or self.keep_last,
            min_chars=self.min_chars,
            gist_chars=self.gist_chars,
            ordinals=work.ordinals,
            keep_tokens=self.keep_tokens,
            cost=work.counter.count_text,
        )
        for item in masked:
            if not item.stored:
                work.offload_result(item.original, item.obs_id, item.tool)
        return view
