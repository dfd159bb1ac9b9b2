"""The team the run-page tests serve: a loop's passes, parallel branches, tools, masking, streaming."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphflow import FunctionAgent, LoopAgent, ParallelAgent, ReactAgent, SequentialAgent
from graphflow.context import ObservationMasking
from graphflow.testing import ScriptedChatModel, tool_call
from tests.context.context_helpers import searching, web_search

STREAM_GATE = threading.Event()
"""The `streamer` team's model sends its first words, then waits for this to send the rest."""


@tool
def lookup(code: str) -> str:
    """Look a code up."""
    if code == "bad":
        raise LookupError("no such code: bad")
    return f"code {code} is fine"


def _checker(messages: list[Any], n: int) -> Any:
    tool_results = [m for m in messages if isinstance(m, ToolMessage)]
    if not tool_results:
        return tool_call("lookup", {"code": "bad"})
    if len(tool_results) == 1:
        return tool_call("lookup", {"code": "ok7"})
    return "checked"


def crew() -> SequentialAgent:
    """`setup` → `refine` (a loop: `writer` twice) → `fan` (`checker` and `researcher` at once).

    `writer` and `checker` have instructions with placeholders; `checker` calls `lookup` (a
    typed error, then a result); `researcher` searches three times with its old results masked.
    """
    return SequentialAgent(
        name="crew",
        sub_agents=[
            FunctionAgent(name="setup", fn=lambda state: "cats", output_key="topic"),
            LoopAgent(
                name="refine",
                sub_agents=[
                    ReactAgent(
                        name="writer",
                        model=ScriptedChatModel(fn=lambda messages, n: f"draft {n} about cats"),
                        instruction="Write about {topic}.",
                        output_key="draft",
                    )
                ],
                max_iterations=2,
            ),
            ParallelAgent(
                name="fan",
                sub_agents=[
                    ReactAgent(
                        name="checker",
                        model=ScriptedChatModel(fn=_checker),
                        instruction="Check the draft on {topic}: {draft}",
                        tools=[lookup],
                        output_key="check",
                    ),
                    ReactAgent(
                        name="researcher",
                        model=ScriptedChatModel(fn=searching(3, answer="researched")),
                        tools=[web_search],
                        context=ObservationMasking(keep_last=1, keep_tokens=None),
                        output_key="research",
                    ),
                ],
            ),
        ],
    )


class GatedModel(ScriptedChatModel):
    """Streams its reply word by word, waiting for STREAM_GATE after the first two words."""

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for sent, chunk in enumerate(super()._stream(*args, **kwargs)):
            if sent == 2:
                STREAM_GATE.wait(60)
            yield chunk

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        sent = 0
        async for chunk in super()._astream(*args, **kwargs):
            if sent == 2:
                await asyncio.to_thread(STREAM_GATE.wait, 60)
            sent += 1
            yield chunk


def streamer() -> ReactAgent:
    """Answers `Once upon a time there was a cat` slowly (see GatedModel)."""
    return ReactAgent(
        name="teller",
        model=GatedModel(fn=lambda messages, n: "Once upon a time there was a cat"),
    )


def targets() -> dict[str, Any]:
    """Target name -> agent, as `graphflow ui` would load them."""
    return {"crew": crew(), "streamer": streamer()}
