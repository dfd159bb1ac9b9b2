"""Test doubles and checks that several test folders use, each defined once.

Imported as a package (`from tests.support.helpers import ...`): every test folder is a package.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool

from graphflow import FunctionAgent, HumanApproval, ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel, tool_call

PAID: list[int] = []
"""Amounts `pay` was called with; a test clears it first."""


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def pay(amount: int) -> str:
    """Pay an amount."""
    PAID.append(amount)
    return f"paid {amount}"


def guarded_payer(amount: int, *, output_key: str, final: str = "ok") -> ReactAgent:
    """A ReactAgent `payer` that calls `pay(amount)` once, behind `HumanApproval`, then says `final`."""
    return ReactAgent(
        name="payer",
        model=ScriptedChatModel(
            fn=lambda m, n: (
                final if isinstance(m[-1], ToolMessage) else tool_call("pay", {"amount": amount})
            )
        ),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key=output_key,
    )


class Counted:
    """A FunctionAgent function: counts its calls; fails on the first call when `fail_once`."""

    def __init__(self, value: Any, *, delay: float = 0.0, fail_once: bool = False) -> None:
        self.value = value
        self.delay = delay
        self.fail_once = fail_once
        self.calls = 0

    def __call__(self, state: Any) -> Any:
        self.calls += 1
        time.sleep(self.delay)
        if self.fail_once and self.calls == 1:
            raise RuntimeError(f"{self.value} broke")
        return self.value


def sqlite_url(tmp_path: Path) -> str:
    """A SQLite checkpointer URL in the test's own folder."""
    return f"sqlite:///{tmp_path}/runs.db"


def assert_tool_pairs_intact(messages: list[BaseMessage]) -> None:
    """Every AI tool call in `messages` has its ToolMessage, and every ToolMessage its call."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    asked = {tc["id"] for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls}
    assert asked <= answered, f"dangling tool calls: {asked - answered}"
    assert answered <= asked, f"orphan tool results: {answered - asked}"


def made_then_after(value: Any, calls: list[str]) -> SequentialAgent:
    """`make` writes `value` to `made`, then `after` writes `tail`; each appends its name to
    `calls` (whether the next agent ran after a value that cannot be stored)."""

    def make(state: dict[str, Any]) -> Any:
        calls.append("make")
        return value

    def after(state: dict[str, Any]) -> str:
        calls.append("after")
        return "AFTER"

    return SequentialAgent(
        name="team",
        sub_agents=[
            FunctionAgent(name="make", fn=make, output_key="made"),
            FunctionAgent(name="after", fn=after, output_key="tail"),
        ],
    )
