"""`ContextStep`: one pluggable step of a context pipeline, and the `StepContext` it is given.

A context policy builds each model request by running its steps in order over the *view*: the
list of messages about to be sent (system prompt first). Each step takes the view and returns the
new one. The built-in steps are `ObservationMasking`, `Summarization` and `LoopBreaker`; a step
of your own is a subclass with an `apply` method::

    class DropOldMessages(ContextStep):
        def apply(self, messages, context):
            return messages[:1] + messages[-20:]

Steps change only what the model is sent, never the checkpointed history (`context.history`).
After the last step the policy checks the tool-call pairs of the view and repairs an orphan (a
step may drop a call or a result without breaking the request), offers `recall_observation` when
something was offloaded, and records what fired in `ContextStats`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, ToolMessage

from graphflow.context import _view
from graphflow.messages import MASK_MARK, RECALL_MARK

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool

    from graphflow.context._pipeline import Work
    from graphflow.hooks.base import ModelRequest

__all__ = ("ContextStep", "StepContext")


class ContextStep:
    """One step of a context pipeline: takes the view about to be sent and returns the new view.

    Subclass it and implement `apply`; put instances in `ContextPipeline([...])`, in the order
    they should run. A step is shared by every run of the agent (and by threads running at the
    same time), so keep what changes from call to call out of `self`.
    """

    recalls: bool = False
    """True for a step whose work the `recall_observation` tool undoes (masking, summaries): the
    agent may then not have a tool of that name itself."""

    @property
    def name(self) -> str:
        """A short name for this step (its class name), used in logs."""
        return type(self).__name__

    def apply(self, messages: list[BaseMessage], context: StepContext) -> list[BaseMessage]:
        """The view to send instead of `messages`.

        Args:
            messages: what would be sent, as left by the steps before this one: system
                messages first, then the conversation. Return a new list; do not edit the
                messages in place (they are the checkpointed ones): build changed copies,
                e.g. `message.model_copy(update={"content": ...})`.
            context: the model call being prepared (agent, model, history, token counts, the
                window) and the services a step may use (`offload`, `event`).

        Returns:
            The messages to pass to the next step (the last step's are sent).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement apply(messages, context)")

    def restore(self, messages: list[BaseMessage], context: StepContext) -> list[BaseMessage]:
        """Optional: put back what this step decided on earlier calls, before any step applies.

        Runs for every step, in order, before the first `apply`. `Summarization` uses it to put
        its earlier summary in place of the rounds it condensed, so the steps before it see the
        summarized view. The default returns `messages` unchanged.
        """
        return messages


class StepContext:
    """What a step knows about the model call it helps prepare, and what it may use."""

    def __init__(self, *, request: ModelRequest, work: Work, window: int) -> None:
        self.request = request
        """The model call being prepared (read it; steps return messages, not requests)."""
        self.window = window
        """The model's context window in tokens (the policy's `context_window`, else the table
        `graphflow.context.CONTEXT_WINDOWS`)."""
        self._work = work

    @property
    def agent(self) -> str:
        """The name of the agent making the call."""
        return self.request.agent

    @property
    def model(self) -> BaseChatModel:
        """The chat model that will be called."""
        return self.request.model

    @property
    def call_number(self) -> int:
        """0-based index of this model call within the agent's invocation."""
        return self.request.call_number

    @property
    def state(self) -> Mapping[str, Any]:
        """The agent's state (read-only)."""
        return self.request.state

    @property
    def history(self) -> Sequence[BaseMessage]:
        """The agent's checkpointed conversation, whole (steps never change it)."""
        return self._work.history

    @property
    def tools(self) -> Sequence[BaseTool]:
        """The tools the request carries."""
        return self.request.tools

    def count_tokens(self, messages: Sequence[BaseMessage]) -> int:
        """Tokens of `messages` plus the request's tool schemas, as the provider would count them.

        Counted offline for the model (see `graphflow.context.count_tokens`) and scaled by what
        the provider reported for the previous request, when it did.
        """
        work = self._work
        return round(work.counter.count(messages, self.tools) * work.calibration)

    def event(self, name: str, **data: Any) -> None:
        """Record `name` (and JSON-able `data`) in this call's `graphflow_context` stream event."""
        self._work.events.append({"event": name, **data})

    def offload(self, message: ToolMessage) -> ToolMessage:
        """Keep a tool result of the history in the offload store; the placeholder to send.

        The placeholder names the tool, the size and an observation id; the model gets the
        `recall_observation(id)` tool, which returns the original. Use it for results a step
        would otherwise drop. A result already offloaded is returned as it is.

        Raises:
            ValueError: `message` is not a tool result of the checkpointed history.
        """
        if MASK_MARK in message.additional_kwargs:
            return message
        ordinal = self._work.ordinals.get(message.id or "")
        if ordinal is None:
            raise ValueError(
                f"Agent `{self.agent}`: only tool results of the checkpointed history can be "
                f"offloaded; {message.id!r} is not one (keep the message ids a step receives)"
            )
        recalled = message.additional_kwargs.get(RECALL_MARK)
        obs_id = str(recalled) if recalled else _view.observation_id(ordinal)
        tool = message.name or _view.call_names(self.history).get(message.tool_call_id, "tool")
        if not recalled:
            self._work.offload_result(message, obs_id, tool)
        return _view.masked_copy(message, tool, obs_id, gist_chars=80)
