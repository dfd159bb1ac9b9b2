"""`ContextPipeline`: a context policy made of an ordered list of steps, yours among them.

Each model request is built by running the steps in order over the messages about to be sent
(see `graphflow.context.step`): the built-in `ObservationMasking`, `Summarization` and
`LoopBreaker`, and any `ContextStep` of your own::

    ReactAgent(..., context=ContextPipeline([RedactEmails(), ObservationMasking(keep_last=5)]))

`HybridContext` is the recommended pipeline: masking, summarization, loop breaker.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from graphflow.context import _settings
from graphflow.context.policy import ContextPolicy
from graphflow.context.step import ContextStep
from graphflow.exceptions import GraphflowConfigError

__all__ = ("ContextPipeline",)


class ContextPipeline(ContextPolicy):
    """A context policy that runs `steps` in order before each model call."""

    def __init__(
        self,
        steps: Iterable[ContextStep],
        *,
        context_window: int | None = None,
        offload: Any = None,
    ) -> None:
        """Configure the pipeline.

        Args:
            steps: the steps, in the order they run (each gets the view the one before
                returned).
            context_window: the agent model's window in tokens, for every step (overrides the
                table and a `Summarization`'s own setting).
            offload: where originals and summaries are kept, for every step (see
                `ObservationMasking`).

        Raises:
            GraphflowConfigError: a step that is not a `ContextStep` or lacks `apply`, a step
                given twice, a window that is not a positive whole number, or an unusable
                offload store.
        """
        if not isinstance(steps, Iterable):
            raise GraphflowConfigError(
                f"ContextPipeline: steps is a {type(steps).__name__}; give a list of ContextStep"
            )
        checked = list(steps)
        for index, step in enumerate(checked):
            if not isinstance(step, ContextStep):
                raise GraphflowConfigError(
                    f"ContextPipeline: step {index} is a {type(step).__name__}, not a ContextStep;"
                    " subclass graphflow.context.ContextStep and implement apply(messages, context)"
                )
            if type(step).apply is ContextStep.apply:
                raise GraphflowConfigError(
                    f"ContextPipeline: step {index} ({step.name}) does not implement "
                    "apply(messages, context), the method that returns the messages to send"
                )
            if any(step is other for other in checked[:index]):
                raise GraphflowConfigError(
                    f"ContextPipeline: step {index} ({step.name}) is given twice; make a second "
                    "instance if it should run twice"
                )
        _settings.whole(
            "ContextPipeline", "context_window", context_window, minimum=1, optional=True
        )
        super().__init__(offload=offload)
        self._steps = tuple(checked)
        self.context_window = context_window
        """The agent model's window for every step, or None."""

    @property
    def steps(self) -> list[ContextStep]:
        """The steps, in the order they run."""
        return list(self.context_steps())

    def context_steps(self) -> Sequence[ContextStep]:
        """The steps, in order."""
        return self._steps

    def _context_window(self) -> int | None:
        return self.context_window
