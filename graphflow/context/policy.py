"""`ContextPolicy`: the hook base every context policy shares.

A policy is a `ModelHook` (it rewrites what the model is sent in `before_model`, and checks the
final request's tool pairs in `wrap_model_call`) and a `ToolHook` (it answers its own
`recall_observation` tool). It changes only the request — never the checkpointed history — and
keeps its bookkeeping in the agent's private `gf_context` channel, written with the model call.

Use one policy per agent: `ReactAgent(context=HybridContext())`, or in `hooks=[...]`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from graphflow.context._pipeline import Parts, WrittenSet, emit, prepare
from graphflow.context.offload import OffloadStore, current_location, resolve_offload
from graphflow.context.pairs import repair_tool_pairs
from graphflow.context.recall import RECALL_TOOL, recall_observation
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
    """Base of the context policies: decides what each model call is sent.

    Subclasses say what they do by returning their `Parts`; this class runs them.
    """

    def __init__(self, *, offload: Any = None) -> None:
        """Keep offloaded originals in `offload` (see `graphflow.context.offload`)."""
        self.offload: OffloadStore = resolve_offload(offload)
        """Where masked originals and summaries are kept: the run's store, else in memory."""
        self._written = WrittenSet()

    def _parts(self) -> Parts:
        raise NotImplementedError

    # -- model hooks ------------------------------------------------------------------------------

    def before_model(self, request: ModelRequest) -> ModelRequest:
        """Build the request the model is sent: masked, summarized, noted, pair-checked."""
        return prepare(request, self._parts())

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
