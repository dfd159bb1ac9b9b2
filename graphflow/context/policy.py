"""`ContextPolicy`: the hook base every context policy shares.

A policy is an ordered list of `ContextStep`s (`context_steps()`) run as hooks: a `ModelHook`
(its steps rewrite what the model is sent in `before_model`, and the final request's tool pairs
are checked in `wrap_model_call`) and a `ToolHook` (it answers its own `recall_observation`
tool). It changes only the request — never the checkpointed history — and keeps its bookkeeping
in the agent's private `gf_context` channel, written with the model call.

Use one policy per agent: `ReactAgent(context=HybridContext())`, or in `hooks=[...]`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from graphflow.context._pipeline import WrittenSet, emit, prepare
from graphflow.context.offload import OffloadStore, current_location, resolve_offload
from graphflow.context.pairs import repair_tool_pairs
from graphflow.context.recall import RECALL_TOOL, recall_observation
from graphflow.context.step import ContextStep
from graphflow.hooks.base import (
    AsyncModelHandler,
    AsyncToolHandler,
    ModelHandler,
    ModelHook,
    ModelRequest,
    ToolCallRequest,
    ToolHandler,
    ToolHook,
)

__all__ = ("ContextPolicy",)

log = logging.getLogger("graphflow.context")


class ContextPolicy(ModelHook, ToolHook):
    """Base of the context policies: runs an ordered list of steps before each model call.

    A subclass says what it does by returning its steps from `context_steps()`; a policy that
    is itself a `ContextStep` (`ObservationMasking`, `Summarization`, `LoopBreaker`) is a
    pipeline of one step. `ContextPipeline` takes any list of steps.
    """

    def __init__(self, *, offload: Any = None) -> None:
        """Keep offloaded originals in `offload` (see `graphflow.context.offload`).

        Raises:
            GraphflowConfigError: `offload` is not a store, or a directory that cannot be used.
        """
        self.offload: OffloadStore = resolve_offload(offload, owner=type(self).__name__)
        """Where masked originals and summaries are kept: the run's store, else in memory."""
        self._written = WrittenSet()

    def context_steps(self) -> Sequence[ContextStep]:
        """The steps run before each model call, in order."""
        if isinstance(self, ContextStep):
            return (self,)
        raise NotImplementedError(
            f"{type(self).__name__} must return its steps from context_steps() (or use "
            "ContextPipeline([...]))"
        )

    def _context_window(self) -> int | None:
        """The window the policy sets for all its steps (None: each step's own, or the table)."""
        return None

    # -- model hooks ------------------------------------------------------------------------------

    def before_model(self, request: ModelRequest) -> ModelRequest:
        """Build the request the model is sent: the steps in order, then a pair check."""
        return prepare(
            request,
            self.context_steps(),
            offload=self.offload,
            written=self._written,
            context_window=self._context_window(),
        )

    async def abefore_model(self, request: ModelRequest) -> ModelRequest:
        """Async twin: the same work in a worker thread (the summarizer and store are sync)."""
        return await asyncio.to_thread(self.before_model, request)

    def wrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> AIMessage:
        """Check the final request (after every other hook) and repair an orphan before sending."""
        return handler(_paired(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: AsyncModelHandler
    ) -> AIMessage:
        """Async twin of `wrap_model_call`."""
        return await handler(_paired(request))

    # -- tool hooks -------------------------------------------------------------------------------

    def _is_recall(self, request: ToolCallRequest) -> bool:
        return request.tool is None and request.tool_call.get("name") == RECALL_TOOL

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolMessage:
        """Answer `recall_observation`; pass every other call on."""
        if self._is_recall(request):
            return recall_observation(self.offload, current_location(), request.tool_call)
        return handler(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolMessage:
        """Async twin of `wrap_tool_call`."""
        if self._is_recall(request):
            where = current_location()
            return await asyncio.to_thread(
                recall_observation, self.offload, where, request.tool_call
            )
        return await handler(request)


def _paired(request: ModelRequest) -> ModelRequest:
    messages, repairs = repair_tool_pairs(request.messages)
    if not repairs:
        return request
    log.warning(
        "Agent `%s`: repaired %d orphan tool call(s)/result(s) in the request before sending it",
        request.agent,
        repairs,
    )
    # (a hook after the policy broke the pairs: the policy's record was written already, so the
    # repair is logged and streamed, not counted in ContextStats.pair_repairs)
    emit(request, {"events": [{"event": "pairs_repaired", "count": repairs, "late": True}]})
    return request.override(messages=messages)
