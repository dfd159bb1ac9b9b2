"""Agent trees the UI tests serve: a two-step pipe, a payer behind HumanApproval, a gated run."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
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


def used(message: AIMessage, tokens: int) -> AIMessage:
    """`message` reporting `tokens` tokens used, as a provider's answer does (`usage_metadata`)."""
    message.usage_metadata = {
        "input_tokens": tokens - 2,
        "output_tokens": 2,
        "total_tokens": tokens,
    }
    return message


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
    """Calls `pay` (guarded by HumanApproval), then answers with what the tool said (10 and 7 tokens)."""

    def reply(messages: list[Any], n: int) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return used(AIMessage(f"done: {messages[-1].content}"), 7)
        return used(tool_call("pay", {"amount": 5}), 10)

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


def held() -> SequentialAgent:
    """Run in another process (tests/ui/test_ui_leases.py): holds its thread until released.

    Its first agent writes the file `GF_UI_READY` names, then waits for the one `GF_UI_GO` names.
    """

    def hold(state: Any) -> str:
        Path(os.environ["GF_UI_READY"]).write_text("1")
        go = Path(os.environ["GF_UI_GO"])
        deadline = time.monotonic() + 120
        while not go.exists():
            if time.monotonic() > deadline:
                raise TimeoutError("the test never released the run")
            time.sleep(0.02)
        return "released"

    return SequentialAgent(
        name="held",
        sub_agents=[
            FunctionAgent(name="holder", fn=hold, output_key="hold"),
            FunctionAgent(name="then", fn=lambda state: "then " + state["hold"], output_key="end"),
        ],
    )


def targets() -> dict[str, Any]:
    """Target name -> agent, as `graphflow ui` would load them."""
    return {"pipe": pipe(), "payer": payer(), "evil": evil(), "gated": gated()}
