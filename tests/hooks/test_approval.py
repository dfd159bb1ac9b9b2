"""HumanApproval in one process: approve, edit, reject; several pending at once; inside flows."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphflow import HumanApproval, LoopAgent, ParallelAgent, ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel, tool_call, tool_calls
from graphflow.tools import ToolPolicy
from tests.support.helpers import PAID, add, guarded_payer, pay


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


# -- one decision --------------------------------------------------------------------------------


def payer() -> ReactAgent:
    def reply(messages, n):
        if isinstance(messages[-1], ToolMessage):
            return "tools said: " + " | ".join(
                str(m.content) for m in messages if isinstance(m, ToolMessage)
            )
        return tool_calls(("pay", {"amount": 5}), ("add", {"a": 1, "b": 1}))

    return ReactAgent(
        name="payer",
        model=ScriptedChatModel(fn=reply),
        tools=[pay, add],
        hooks=[HumanApproval({"pay": "Sends money."})],
    )


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ({"decision": "approve"}, "paid 5"),
        ({"decision": "edit", "args": {"amount": 1}}, "paid 1"),
        ({"decision": "reject", "reason": "too much"}, "rejected by a human reviewer: too much"),
    ],
)
def test_human_approval_round_trip(run_mode, decision, expected):
    agent = payer()
    first = run_mode.invoke(agent, "go", thread_id="t")
    (pending,) = first["__interrupt__"]
    assert pending.value["tool"] == "pay"
    assert pending.value["args"] == {"amount": 5}
    assert pending.value["description"] == "Sends money."
    result = run_mode.resume(agent, "t", decision)
    assert "__interrupt__" not in result
    assert expected in result["messages"][-1].content
    pay_message = next(
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "pay"
    )
    assert pay_message.status == ("error" if decision["decision"] == "reject" else "success")


def test_human_approval_inside_a_sequence_and_bad_resume_value():
    outer = SequentialAgent(name="outer", sub_agents=[payer()])
    first = outer.invoke("go", thread_id="t")
    assert len(first["__interrupt__"]) == 1
    with pytest.raises(ValueError, match="HumanApproval"):
        outer.resume("t", {"decision": "maybe"})


# -- several pending, inside flows, bad answers --------------------------------------------------


def test_approval_async_two_pending_in_one_resume():
    PAID.clear()
    agent = ReactAgent(
        name="payer",
        model=ScriptedChatModel(fn=_answer_after_tools),
        tools=[pay, refund],
        hooks=[HumanApproval(["pay", "refund"])],
        default_tool_policy=ToolPolicy(parallel_safe=True),  # both calls pause at once
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


def test_approval_inside_parallel_branch_while_other_completes(run_mode):
    PAID.clear()
    payer = guarded_payer(2, output_key="paid", final="done paying")
    other_model = ScriptedChatModel(replies=["other result"])
    other = ReactAgent(name="other", model=other_model, output_key="other_out")
    flow = ParallelAgent(name="par", sub_agents=[payer, other])

    async def arun():
        first = await flow.ainvoke("go", thread_id="p")
        return first, await flow.aresume("p", {"decision": "approve"})

    if not run_mode.is_async:
        first = flow.invoke("go", thread_id="p")
        result = flow.resume("p", {"decision": "approve"})
    else:
        first, result = asyncio.run(arun())
    assert len(first["__interrupt__"]) == 1
    assert result["paid"] == "done paying"
    assert result["other_out"] == "other result"
    assert other_model.calls == 1  # the finished branch did not run again
    assert PAID == [2]


def test_approval_inside_loop_on_second_pass(run_mode):
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

    if not run_mode.is_async:
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


def test_bad_decision_then_good_decision(run_mode):
    PAID.clear()
    agent = guarded_payer(1, output_key="out")

    async def arun():
        await agent.ainvoke("go", thread_id="b")
        with pytest.raises(ValueError, match="approve.*edit.*reject") as info:
            await agent.aresume("b", {"decision": "accept"})
        return info, await agent.aresume("b", {"decision": "approve"})

    if not run_mode.is_async:
        agent.invoke("go", thread_id="b")
        with pytest.raises(ValueError, match="approve.*edit.*reject") as info:
            agent.resume("b", {"decision": "accept"})
        result = agent.resume("b", {"decision": "approve"})
    else:
        info, result = asyncio.run(arun())
    assert "accept" in str(info.value)
    assert result["out"] == "ok"
    assert PAID == [1]


def test_bad_keyed_answer_among_two_pending_does_not_wedge_the_thread():
    PAID.clear()
    agent = ReactAgent(
        name="payer",
        model=ScriptedChatModel(fn=_answer_after_tools),
        tools=[pay, refund],
        hooks=[HumanApproval(["pay", "refund"])],
        default_tool_policy=ToolPolicy(parallel_safe=True),  # both calls pause at once
        output_key="out",
    )
    pending = agent.invoke("go", thread_id="k")["__interrupt__"]
    with pytest.raises(ValueError, match="'edit' decision needs"):
        agent.resume("k", {p.id: {"decision": "edit"} for p in pending})
    assert len(agent.get_state("k").interrupts) == 2
    result = agent.resume("k", {p.id: True for p in pending})
    assert sorted(PAID) == [5]
    assert "paid 5" in result["out"] and "refunded 3" in result["out"]
