"""Agent trees the UI tests serve: a two-step pipe, a payer behind HumanApproval, a gated run."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphflow import FunctionAgent, HumanApproval, ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel, tool_call

PAID: list[int] = []
"""Amounts the `pay` tool paid (each call once)."""

GATE = threading.Event()
"""The `gated` team's first agent waits for this."""

EVIL = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


@tool
def pay(amount: int) -> str:
    """Pay an amount."""
    PAID.append(amount)
    return f"paid {amount}"


def pipe() -> SequentialAgent:
    """`first` writes `a`; `second` writes `b` from it (so a fork that edits `a` changes `b`)."""
    return SequentialAgent(
        name="pipe",
        sub_agents=[
            FunctionAgent(name="first", fn=lambda state: "A", output_key="a"),
            FunctionAgent(name="second", fn=lambda state: f"{state['a']}+B", output_key="b"),
        ],
    )


def payer() -> ReactAgent:
    """Calls `pay` (guarded by HumanApproval), then answers with what the tool said."""

    def reply(messages: list[Any], n: int) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return f"done: {messages[-1].content}"
        return tool_call("pay", {"amount": 5})

    return ReactAgent(
        name="payer",
        model=ScriptedChatModel(fn=reply),
        tools=[pay],
        hooks=[HumanApproval({"pay": "Sends money."})],
    )


def evil() -> ReactAgent:
    """Answers with markup that would run if the page inserted it as HTML."""
    return ReactAgent(name="evil", model=ScriptedChatModel(fn=lambda messages, n: EVIL))


def gated() -> SequentialAgent:
    """Waits for GATE in its first agent, so a test sees it running, then done."""

    def wait(state: Any) -> str:
        if not GATE.wait(timeout=60):
            raise TimeoutError("the test never opened the gate")
        return "opened"

    return SequentialAgent(
        name="gated",
        sub_agents=[
            FunctionAgent(name="waiter", fn=wait, output_key="gate"),
            FunctionAgent(
                name="after", fn=lambda state: "after " + state["gate"], output_key="end"
            ),
        ],
    )


def targets() -> dict[str, Any]:
    """Target name -> agent, as `graphflow ui` would load them."""
    return {"pipe": pipe(), "payer": payer(), "evil": evil(), "gated": gated()}
