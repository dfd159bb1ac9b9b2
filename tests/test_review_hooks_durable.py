"""Adversarial review: hooks and durable runs, each probed as a real run of a compiled graph."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphflow import (
    FunctionAgent,
    HumanApproval,
    LoopAgent,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
)
from graphflow.testing import ScriptedChatModel, tool_call, tool_calls

PAID: list[int] = []


@tool
def pay(amount: int) -> str:
    """Pay an amount."""
    PAID.append(amount)
    return f"paid {amount}"


@tool
def refund(amount: int) -> str:
    """Refund an amount."""
    return f"refunded {amount}"


def _answer_after_tools(messages, n):
    if isinstance(messages[-1], ToolMessage):
        return "tools said: " + " | ".join(
            str(m.content) for m in messages if isinstance(m, ToolMessage)
        )
    return tool_calls(("pay", {"amount": 5}), ("refund", {"amount": 3}))


# -- 1. HumanApproval --------------------------------------------------------------------------


def test_approval_async_two_pending_in_one_resume():
    PAID.clear()
    agent = ReactAgent(
        name="payer",
        model=ScriptedChatModel(fn=_answer_after_tools),
        tools=[pay, refund],
        hooks=[HumanApproval(["pay", "refund"])],
        output_key="out",
    )

    async def main():
        first = await agent.ainvoke("go", thread_id="t2")
        pending = first["__interrupt__"]
        assert sorted(p.value["tool"] for p in pending) == ["pay", "refund"]
        answers = {
            p.id: (
                {"decision": "edit", "args": {"amount": 7}}
                if p.value["tool"] == "pay"
                else {"decision": "reject", "reason": "no"}
            )
            for p in pending
        }
        return await agent.aresume("t2", answers)

    result = asyncio.run(main())
    assert "__interrupt__" not in result
    assert PAID == [7]
    assert "paid 7" in result["out"]
    assert "rejected by a human reviewer: no" in result["out"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_approval_inside_parallel_branch_while_other_completes(mode):
    PAID.clear()
    payer = ReactAgent(
        name="payer",
        model=ScriptedChatModel(
            fn=lambda m, n: (
                "done paying" if isinstance(m[-1], ToolMessage) else tool_call("pay", {"amount": 2})
            )
        ),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="paid",
    )
    other_model = ScriptedChatModel(replies=["other result"])
    other = ReactAgent(name="other", model=other_model, output_key="other_out")
    flow = ParallelAgent(name="par", sub_agents=[payer, other])

    async def arun():
        first = await flow.ainvoke("go", thread_id="p")
        return first, await flow.aresume("p", {"decision": "approve"})

    if mode == "sync":
        first = flow.invoke("go", thread_id="p")
        result = flow.resume("p", {"decision": "approve"})
    else:
        first, result = asyncio.run(arun())
    assert len(first["__interrupt__"]) == 1
    assert result["paid"] == "done paying"
    assert result["other_out"] == "other result"
    assert other_model.calls == 1  # the finished branch did not run again
    assert PAID == [2]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_approval_inside_loop_on_second_pass(mode):
    PAID.clear()

    def reply(messages, n):
        if isinstance(messages[-1], ToolMessage):
            return f"pass done {n}"
        return tool_call("pay", {"amount": 10 + n})

    worker = ReactAgent(
        name="worker",
        model=ScriptedChatModel(fn=reply),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="out",
        instruction="pass {loop_iteration}",
    )
    loop = LoopAgent(name="loop", sub_agents=[worker], max_iterations=2)

    async def arun():
        a = await loop.ainvoke("go", thread_id="l")
        b = await loop.aresume("l", {"decision": "approve"})
        c = await loop.aresume("l", {"decision": "reject", "reason": "enough"})
        return a, b, c

    if mode == "sync":
        a = loop.invoke("go", thread_id="l")
        b = loop.resume("l", {"decision": "approve"})
        c = loop.resume("l", {"decision": "reject", "reason": "enough"})
    else:
        a, b, c = asyncio.run(arun())
    assert a["__interrupt__"][0].value["args"] == {"amount": 10}
    assert b["__interrupt__"][0].value["args"] == {"amount": 12}
    assert "__interrupt__" not in c
    assert PAID == [10]
    assert c["out"] == "pass done 3"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_bad_decision_then_good_decision(mode):
    PAID.clear()
    agent = ReactAgent(
        name="payer",
        model=ScriptedChatModel(
            fn=lambda m, n: (
                "ok" if isinstance(m[-1], ToolMessage) else tool_call("pay", {"amount": 1})
            )
        ),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="out",
    )

    async def arun():
        await agent.ainvoke("go", thread_id="b")
        with pytest.raises(ValueError, match="approve.*edit.*reject") as info:
            await agent.aresume("b", {"decision": "accept"})
        return info, await agent.aresume("b", {"decision": "approve"})

    if mode == "sync":
        agent.invoke("go", thread_id="b")
        with pytest.raises(ValueError, match="approve.*edit.*reject") as info:
            agent.resume("b", {"decision": "accept"})
        result = agent.resume("b", {"decision": "approve"})
    else:
        info, result = asyncio.run(arun())
    assert "accept" in str(info.value)
    assert result["out"] == "ok"
    assert PAID == [1]
