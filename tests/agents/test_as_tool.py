"""Agents as tools: the supervisor pattern."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import interrupt

from graphflow import FunctionAgent, ReactAgent, SequentialAgent
from graphflow.messages import is_instruction
from graphflow.testing import ScriptedChatModel, tool_call
from tests.support.helpers import Counted, assert_tool_pairs_intact, sqlite_url


def _setup() -> tuple[ReactAgent, ScriptedChatModel, ScriptedChatModel]:
    sub_model = ScriptedChatModel(replies=["Pura X: 16:10 foldable, 3.5in cover screen"])
    researcher = ReactAgent(
        name="researcher",
        description="Researches a product and reports facts.",
        model=sub_model,
        instruction="Research this: {input}",
        output_key="research_data",
    )
    sup_model = ScriptedChatModel(
        replies=[tool_call("researcher", {"request": "Huawei Pura X specs"}), "Summary: it folds."]
    )
    supervisor = ReactAgent(
        name="supervisor", model=sup_model, tools=[researcher.as_tool()], output_key="answer"
    )
    return supervisor, sup_model, sub_model


def _check(result: dict, sup_model: ScriptedChatModel, sub_model: ScriptedChatModel) -> None:
    # the tool's argument became the sub-agent's input and user message
    sub_req = sub_model.requests[0]
    assert [m.content for m in sub_req] == [
        "Huawei Pura X specs",
        "Research this: Huawei Pura X specs",
    ]
    assert is_instruction(sub_req[-1]) and not is_instruction(sub_req[0])
    # the supervisor's second request holds only its own messages plus the ToolMessage
    second = sup_model.requests[1]
    assert [type(m) for m in second] == [HumanMessage, AIMessage, ToolMessage]
    assert second[0].content == "Tell me about the Pura X"
    assert second[2].content == "Pura X: 16:10 foldable, 3.5in cover screen"  # the output_key value
    assert all("Research this" not in str(m.content) for m in second)
    assert result["answer"] == "Summary: it folds."
    assert "research_data" not in result
    # nothing of the sub-agent reaches the caller's conversation beyond the tool result
    assert all("Research this" not in str(m.content) for m in result["messages"])
    assert not any(
        getattr(m, "name", None) == "researcher" for m in result["messages"] if m.type == "ai"
    )


def test_agent_as_tool_sync() -> None:
    supervisor, sup_model, sub_model = _setup()
    tool = supervisor.tools[0]
    assert tool.name == "researcher"
    assert tool.description == "Researches a product and reports facts."
    assert set(tool.args) == {"request"}
    result = supervisor.invoke("Tell me about the Pura X", thread_id="sup")
    assert sup_model.request_tools[0] == ["researcher"]
    _check(result, sup_model, sub_model)


def test_agent_as_tool_async() -> None:
    supervisor, sup_model, sub_model = _setup()
    result = asyncio.run(supervisor.ainvoke("Tell me about the Pura X", thread_id="sup-a"))
    _check(result, sup_model, sub_model)


def test_flow_as_tool_without_output_key_returns_final_message() -> None:
    m1 = ScriptedChatModel(replies=["step1"])
    m2 = ScriptedChatModel(replies=["step2 final"])
    flow = SequentialAgent(
        name="flow",
        description="Two-step flow.",
        sub_agents=[
            ReactAgent(name="one", model=m1, output_key="o1"),
            ReactAgent(name="two", model=m2, instruction="continue {o1}", output_key="o2"),
        ],
    )
    sup_model = ScriptedChatModel(replies=[tool_call("run_flow", {"request": "do it"}), "ok"])
    sup = ReactAgent(
        name="sup",
        model=sup_model,
        tools=[flow.as_tool(name="run_flow", description="Runs the flow")],
    )
    result = sup.invoke("please")
    assert m1.requests[0][-1].content == "do it"
    tool_msg = sup_model.requests[1][-1]
    assert isinstance(tool_msg, ToolMessage) and tool_msg.content == "step2 final"
    assert [m.type for m in result["messages"]] == ["human", "ai", "tool", "ai"]


# -- the sub-agent interrupts --------------------------------------------------------------------


def test_as_tool_sub_agent_interrupt_resumes_inside_supervisor(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    pre, ask = Counted("pre done"), Counted(None)

    def asking(state: Any) -> Any:
        ask(state)
        return interrupt({"question": "approve?", "request": state["input"]})

    sub_model = ScriptedChatModel(fn=lambda m, n: f"worker final {n} / {m[-1].content}")
    worker = SequentialAgent(
        name="worker",
        description="Does work after approval.",
        sub_agents=[
            FunctionAgent(name="pre", fn=pre, output_key="pre_out"),
            FunctionAgent(name="ask", fn=asking, output_key="approval"),
            ReactAgent(
                name="fin", model=sub_model, instruction="Approval: {approval}", output_key="w"
            ),
        ],
    )
    sup_model = ScriptedChatModel(
        replies=[tool_call("worker", {"request": "do X"}), "Supervisor done."]
    )
    sup = ReactAgent(name="sup", model=sup_model, tools=[worker.as_tool()], output_key="answer")
    first = sup.invoke("please", thread_id="sup-1", checkpointer=url)
    (pending,) = first["__interrupt__"]
    assert pending.value == {"question": "approve?", "request": "do X"}
    result = sup.resume("sup-1", "yes", checkpointer=url)
    assert (pre.calls, ask.calls) == (1, 2)  # pre does not re-run; ask re-runs to get the answer
    assert (sup_model.calls, sub_model.calls) == (2, 1)
    assert result["answer"] == "Supervisor done."
    messages = result["messages"]
    assert_tool_pairs_intact(messages)
    tool_msg = next(m for m in messages if isinstance(m, ToolMessage))
    assert tool_msg.content == "worker final 0 / Approval: yes"
    # nothing of the worker leaks into the supervisor's state or conversation
    assert not {"pre_out", "approval", "w"} & set(result)
    assert {m.name for m in messages if isinstance(m, AIMessage)} == {"sup"}
    assert set(result["agent_status"]) == {"sup"}
