"""The `recall_observation(id)` tool a context policy adds once it has masked a result.

The tool is only a schema for the model: the policy's tool hook answers the call (the ReAct
runtime hands a call of a tool it does not know to the tool hooks, with `request.tool=None`),
reading the original from the offload store of the current thread and agent run.
"""

from __future__ import annotations

import functools
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from graphflow.context.offload import OffloadLocation, OffloadStore, check_key
from graphflow.exceptions import OffloadKeyError
from graphflow.messages import RECALL_MARK

__all__ = ("RECALL_TOOL", "recall_observation", "recall_tool")

RECALL_TOOL = "recall_observation"
"""Name of the recall tool."""


class _RecallArgs(BaseModel):
    id: str = Field(description='The id shown in the placeholder, e.g. "obs_17".')


def _not_direct(id: str) -> str:
    raise RuntimeError(
        "recall_observation is answered by the context policy's tool hook; it cannot run on its "
        "own (is the policy in the agent's hooks or context=?)"
    )


@functools.cache
def recall_tool() -> BaseTool:
    """The tool schema the model sees."""
    return StructuredTool.from_function(
        func=_not_direct,
        name=RECALL_TOOL,
        description=(
            "Return the full original text of an earlier tool result that was replaced by a "
            'placeholder such as [search result (2,140 chars) omitted — recall_observation("obs_17")]. '
            "Use it only when you need that exact content again."
        ),
        args_schema=_RecallArgs,
    )


def recall_observation(
    offload: OffloadStore, where: OffloadLocation, tool_call: dict[str, Any]
) -> ToolMessage:
    """Answer one `recall_observation` call: the original result, or an error the model can read."""
    args = tool_call.get("args") or {}
    obs_id = args.get("id") if isinstance(args, dict) else None
    call_id = tool_call.get("id") or ""
    try:
        key = check_key(obs_id)
        if not key.startswith("obs_"):  # summaries share the store but are not observations
            raise OffloadKeyError(f"{key!r} is not an observation id; expected obs_<number>")
        entry = offload.get(where, key)
    except OffloadKeyError as exc:
        return _error(call_id, f"Error: {exc}.")
    if entry is None or "content" not in entry:
        return _error(
            call_id,
            f"Error: no observation {obs_id!r} in this conversation; use an id from a "
            "placeholder you were shown.",
        )
    return ToolMessage(
        content=entry["content"],
        tool_call_id=call_id,
        name=RECALL_TOOL,
        additional_kwargs={RECALL_MARK: obs_id},
    )


def _error(call_id: str, text: str) -> ToolMessage:
    return ToolMessage(content=text, tool_call_id=call_id, name=RECALL_TOOL, status="error")
