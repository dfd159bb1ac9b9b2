"""Adversarial edge cases: nesting, hand-off filtering, interrupts, resumes, re-invocations."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import interrupt
from pydantic import BaseModel

from graphflow import (
    DataflowError,
    FunctionAgent,
    GraphflowConfigError,
    LlmRoutingAgent,
    LoopAgent,
    ParallelAgent,
    ParallelBranchError,
    ReactAgent,
    SequentialAgent,
)
from graphflow.hooks import AgentHook
from graphflow.messages import is_instruction
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.tools.exit_loop import exit_loop


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/runs.db"


def _assert_tool_pairs_intact(messages: list[BaseMessage]) -> None:
    """Every AI tool call in `messages` has its ToolMessage, and every ToolMessage its call."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    asked = {tc["id"] for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls}
    assert asked <= answered, f"dangling tool calls: {asked - answered}"
    assert answered <= asked, f"orphan tool results: {answered - asked}"


class _Counter:
    def __init__(self, value: Any, *, fail_first: bool = False) -> None:
        self.value = value
        self.fail_first = fail_first
        self.calls = 0

    def __call__(self, state: Any) -> Any:
        self.calls += 1
        if self.fail_first and self.calls == 1:
            raise RuntimeError(f"{self.value} broke")
        return self.value


# -- 1. parallel ReAct branches hand back only their finals, in declaration order --------------


def _two_react_fan() -> ParallelAgent:
    # `zeta` is declared first and answers first; `alpha` sorts first by name and is slower
    zeta = ScriptedChatModel(replies=[tool_call("search", {"query": "z"}), "final zeta"])
    alpha = ScriptedChatModel(
        replies=[tool_call("search", {"query": "a"}), "final alpha"], latency=0.05
    )
    return ParallelAgent(
        name="fan",
        sub_agents=[
            ReactAgent(
                name="zeta", model=zeta, tools=[search], instruction="Do z.", output_key="z"
            ),
            ReactAgent(
                name="alpha", model=alpha, tools=[search], instruction="Do a.", output_key="a"
            ),
        ],
        output_key="merged",
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_parallel_react_finals_reach_parent_in_declaration_order(mode: str) -> None:
    fan = _two_react_fan()
    if mode == "sync":
        result = fan.invoke("go", checkpointer=False)
    else:
        result = asyncio.run(fan.ainvoke("go", checkpointer=False))
    messages = result["messages"]
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "AIMessage"]
    assert [(m.name, m.content) for m in messages[1:]] == [
        ("zeta", "final zeta"),
        ("alpha", "final alpha"),
    ]
    assert not any(is_instruction(m) for m in messages)
    assert all(not m.tool_calls for m in messages[1:] if isinstance(m, AIMessage))
    assert result["merged"] == {"z": "final zeta", "a": "final alpha"}


def test_parallel_order_survives_a_failed_branch_and_resume() -> None:
    flaky = _Counter("late", fail_first=True)
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            ReactAgent(name="zz", model=ScriptedChatModel(replies=["zz says"]), output_key="zo"),
            FunctionAgent(name="mid", fn=flaky, output_key="mo"),
            ReactAgent(name="aa", model=ScriptedChatModel(replies=["aa says"]), output_key="ao"),
        ],
    )
    with pytest.raises(ParallelBranchError, match="mid"):
        fan.invoke("go", thread_id="order-resume")
    result = fan.resume("order-resume")
    assert [m.content for m in result["messages"]] == ["go", "zz says", "aa says"]


# -- 2. return_reasoning_contents inside a parallel and a loop --------------------------------


def test_reasoning_contents_inside_parallel_keeps_tool_pairs() -> None:
    model = ScriptedChatModel(replies=[tool_call("search", {"query": "x"}), "final r"])
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            ReactAgent(
                name="reasoner",
                model=model,
                tools=[search],
                instruction="Research.",
                output_key="r_out",
                return_reasoning_contents=True,
            ),
            FunctionAgent(name="fn", fn=lambda s: "v", output_key="f_out"),
        ],
    )
    messages = fan.invoke("go", checkpointer=False)["messages"]
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["HumanMessage", "HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert is_instruction(messages[1])
    _assert_tool_pairs_intact(messages)


def test_reasoning_contents_inside_loop_keeps_tool_pairs() -> None:
    model = ScriptedChatModel(
        fn=lambda m, n: tool_call("search", {"query": str(n)}) if n % 2 == 0 else f"final {n}"
    )
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            ReactAgent(
                name="worker",
                model=model,
                tools=[search],
                instruction="Pass {loop_iteration}.",
                output_key="w",
                return_reasoning_contents=True,
            )
        ],
        max_iterations=2,
    )
    result = SequentialAgent(name="outer", sub_agents=[loop]).invoke("go", checkpointer=False)
    messages = result["messages"]
    _assert_tool_pairs_intact(messages)
    assert [m.content for m in messages if isinstance(m, AIMessage) and not m.tool_calls] == [
        "final 1",
        "final 3",
    ]
    assert [m.content for m in messages if is_instruction(m)] == ["Pass 0.", "Pass 1."]


# -- 3. exit_loop deep inside a loop -----------------------------------------------------------


def test_exit_loop_from_react_in_parallel_in_loop() -> None:
    exiter = ScriptedChatModel(fn=lambda m, n: tool_call("exit_loop") if n == 1 else f"ex {n}")
    other = ScriptedChatModel(fn=lambda m, n: f"other {n}")
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            ParallelAgent(
                name="fan",
                sub_agents=[
                    ReactAgent(name="ex", model=exiter, tools=[exit_loop], output_key="ex_out"),
                    ReactAgent(name="ot", model=other, output_key="ot_out"),
                ],
            )
        ],
        max_iterations=5,
    )
    result = loop.invoke("go", checkpointer=False)
    assert result["agent_status"]["loop"] == "exit_loop"
    assert result["loop_iteration"] == 1
    assert (exiter.calls, other.calls) == (2, 2)
    _assert_tool_pairs_intact(result["messages"])
    assert "gf_exit_loop" not in result


def test_exit_loop_from_nested_sequential_skips_rest_of_pass() -> None:
    model = ScriptedChatModel(fn=lambda m, n: tool_call("exit_loop") if n == 1 else f"a {n}")
    ran: list[str] = []
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            SequentialAgent(
                name="seq",
                sub_agents=[
                    ReactAgent(name="ex", model=model, tools=[exit_loop], output_key="ex_out"),
                    FunctionAgent(
                        name="inner_after", fn=lambda s: ran.append("in") or 1, output_key="i"
                    ),
                ],
            ),
            FunctionAgent(name="outer_after", fn=lambda s: ran.append("out") or 2, output_key="o"),
        ],
        max_iterations=5,
    )
    outer = SequentialAgent(name="root", sub_agents=[loop])
    result = outer.invoke("go", checkpointer=False)
    assert ran == ["in", "out"]  # pass 0 only; pass 1 exits after `ex`
    assert result["agent_status"]["loop"] == "exit_loop"
    assert result["agent_status"]["root"] == "completed"
    assert model.calls == 2


# -- 4. a router whose route is a flow, with a rewritten query ----------------------------------


@pytest.mark.parametrize("route", ["refine", "fan"])
def test_router_to_flow_route_with_rewritten_query_does_not_leak_it(route: str) -> None:
    writer = ScriptedChatModel(fn=lambda m, n: f"draft {n}")
    reviewer = ScriptedChatModel(fn=lambda m, n: "APPROVE" if n == 1 else "fix it")
    loop = LoopAgent(
        name="refine",
        description="Refines a draft.",
        sub_agents=[
            ReactAgent(name="writer", model=writer, instruction="Write {input}", output_key="d"),
            ReactAgent(name="reviewer", model=reviewer, instruction="Review {d}", output_key="fb"),
        ],
        until=lambda s: "APPROVE" in (s.get("fb") or ""),
        max_iterations=4,
    )
    pm = ScriptedChatModel(fn=lambda m, n: f"p {n}")
    fan = ParallelAgent(
        name="fan",
        description="Asks two experts.",
        sub_agents=[
            ReactAgent(name="p1", model=pm, output_key="p1o"),
            ReactAgent(name="p2", model=pm, output_key="p2o"),
        ],
        output_key="fan_out",
    )
    router = LlmRoutingAgent(
        name="router",
        model=ScriptedChatModel(replies=[{"agent": route, "query": "REWRITTEN"}]),
        sub_agents=[loop, fan],
        output_key="answer",
    )
    result = router.invoke("original", checkpointer=False)
    messages = result["messages"]
    assert all("REWRITTEN" not in str(m.content) for m in messages)
    assert result["input"] == "original"
    assert isinstance(messages[0], HumanMessage) and messages[0].content == "original"
    assert all(isinstance(m, AIMessage) and not m.tool_calls for m in messages[1:])
    if route == "refine":
        assert [m.content for m in messages[1:]] == ["draft 0", "fix it", "draft 1", "APPROVE"]
        assert writer.requests[0][-1].content == "Write REWRITTEN"
        assert result["answer"] == "APPROVE"
    else:
        assert [m.name for m in messages[1:]] == ["p1", "p2"]
        assert all(req[-1].content == "REWRITTEN" for req in pm.requests)


# -- 5. agent.as_tool() in a supervisor; the sub-agent interrupts --------------------------------


def test_as_tool_sub_agent_interrupt_resumes_inside_supervisor(tmp_path: Path) -> None:
    url = _url(tmp_path)
    pre, ask = _Counter("pre done"), _Counter(None)

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
    _assert_tool_pairs_intact(messages)
    tool_msg = next(m for m in messages if isinstance(m, ToolMessage))
    assert tool_msg.content == "worker final 0 / Approval: yes"
    # nothing of the worker leaks into the supervisor's state or conversation
    assert not {"pre_out", "approval", "w"} & set(result)
    assert {m.name for m in messages if isinstance(m, AIMessage)} == {"sup"}
    assert set(result["agent_status"]) == {"sup"}


# -- 6. an agent hook that interrupts ------------------------------------------------------------


class _GateHook(AgentHook):
    def __init__(self) -> None:
        self.log: list[str] = []

    def before_agent(self, state: Any, ctx: Any) -> Any:
        self.log.append("before interrupt")
        answer = interrupt({"question": "go?"})
        self.log.append(f"answered {answer}")
        return {"approval": answer}

    def after_agent(self, state: Any, ctx: Any) -> Any:
        self.log.append(f"after {ctx.reason}")
        return None


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_before_agent_hook_interrupt_then_resume(tmp_path: Path, mode: str) -> None:
    url = _url(tmp_path)
    gate = _GateHook()
    model = ScriptedChatModel(fn=lambda m, n: f"answer {n}")
    agent = ReactAgent(
        name="gated",
        model=model,
        hooks=[gate],
        instruction="Approval: {approval?}",
        input_keys=["approval"],
        output_key="out",
    )

    async def arun() -> tuple[dict[str, Any], dict[str, Any]]:
        first = await agent.ainvoke("hi", thread_id="gate", checkpointer=url)
        return first, await agent.aresume("gate", "yes", checkpointer=url)

    if mode == "sync":
        first = agent.invoke("hi", thread_id="gate", checkpointer=url)
        result = agent.resume("gate", "yes", checkpointer=url)
    else:
        first, result = asyncio.run(arun())
    assert "__interrupt__" in first and "out" not in first
    assert result["approval"] == "yes" and result["out"] == "answer 0"
    assert model.calls == 1 and model.requests[0][-1].content == "Approval: yes"
    # LangGraph re-runs the hook node on resume: code before interrupt() runs twice, the update
    # after it once, and the after hook once
    assert gate.log == ["before interrupt", "before interrupt", "answered yes", "after completed"]


# -- 7. the same agent twice on one thread -------------------------------------------------------


def test_second_invocation_on_thread_continues_conversation(tmp_path: Path) -> None:
    url = _url(tmp_path)
    model = ScriptedChatModel(fn=lambda m, n: f"answer {n}")
    agent = ReactAgent(name="chat", model=model, output_key="out")
    agent.invoke("q1", thread_id="conv", checkpointer=url)
    second = agent.invoke("q2", thread_id="conv", checkpointer=url)
    assert [m.content for m in model.requests[1]] == ["q1", "answer 0", "q2"]
    assert second["out"] == "answer 1" and second["input"] == "q2"
    assert second["agent_status"] == {"chat": "completed"}


def test_loop_restarts_iteration_on_second_invocation(tmp_path: Path) -> None:
    url = _url(tmp_path)
    model = ScriptedChatModel(fn=lambda m, n: f"it {n}")
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            ReactAgent(name="b", model=model, instruction="pass {loop_iteration}", output_key="bo")
        ],
        max_iterations=2,
        output_key="lo",
    )
    loop.invoke("x", thread_id="loop-twice", checkpointer=url)
    second = loop.invoke("y", thread_id="loop-twice", checkpointer=url)
    assert [r[-1].content for r in model.requests] == ["pass 0", "pass 1", "pass 0", "pass 1"]
    assert second["lo"] == "it 3" and second["loop_iteration"] == 1
    assert second["agent_status"] == {"loop": "max_iterations", "b": "completed"}


def test_new_invocation_after_failed_parallel_runs_failed_branch_once(tmp_path: Path) -> None:
    url = _url(tmp_path)
    flaky, ok = _Counter("f", fail_first=True), _Counter("o")
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            FunctionAgent(name="br", fn=flaky, output_key="bo"),
            FunctionAgent(name="ok", fn=ok, output_key="oo"),
        ],
        output_key="m",
    )
    with pytest.raises(ParallelBranchError):
        fan.invoke("x", thread_id="fail-then-new", checkpointer=url)
    result = fan.invoke("again", thread_id="fail-then-new", checkpointer=url)
    assert (flaky.calls, ok.calls) == (2, 2)
    assert result["m"] == {"bo": "f", "oo": "o"}


# -- 8. structured output in a parallel branch, through SQLite ----------------------------------


class Spec(BaseModel):
    name: str
    score: int


def test_structured_output_in_parallel_merged_dict_round_trips_sqlite(tmp_path: Path) -> None:
    url = _url(tmp_path)

    def build() -> ParallelAgent:
        model = ScriptedChatModel(replies=[Spec(name="x", score=3)])
        return ParallelAgent(
            name="fan",
            sub_agents=[
                ReactAgent(name="s", model=model, output_schema=Spec, output_key="spec"),
                FunctionAgent(name="f", fn=lambda s: 5, output_key="n"),
            ],
            output_key="merged",
        )

    result = build().invoke("go", thread_id="so", checkpointer=url)
    assert result["merged"] == {"spec": Spec(name="x", score=3), "n": 5}
    values = build().get_state("so", checkpointer=url).values
    assert isinstance(values["merged"]["spec"], Spec)
    assert values["merged"]["spec"] == Spec(name="x", score=3)


# -- 9. FunctionAgent returning messages / None; async functions in a sync parallel ------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_function_agents_in_parallel(mode: str) -> None:
    async def slow(state: Any) -> str:
        await asyncio.sleep(0.01)
        return "async value"

    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            FunctionAgent(name="a1", fn=slow, output_key="ao"),
            FunctionAgent(name="a2", fn=slow, output_key="bo"),
            FunctionAgent(name="nothing", fn=lambda s: None),
            FunctionAgent(
                name="talker",
                fn=lambda s: {"messages": [AIMessage(content="from fn")]},
                writes=["messages"],
            ),
        ],
        output_key="merged",
    )
    if mode == "sync":
        result = fan.invoke("x", checkpointer=False)
    else:
        result = asyncio.run(fan.ainvoke("x", checkpointer=False))
    assert result["merged"] == {"ao": "async value", "bo": "async value"}
    assert [m.content for m in result["messages"]] == ["x", "from fn"]
    assert result["agent_status"]["nothing"] == "completed"


# -- 10. build-time errors name agents and keys and say how to fix -------------------------------


def _react(name: str, **kw: Any) -> ReactAgent:
    return ReactAgent(name=name, model=ScriptedChatModel(replies=["x"]), **kw)


@pytest.mark.parametrize(
    ("build", "must"),
    [
        (
            lambda: SequentialAgent(name="s", sub_agents=[_react("a"), _react("a")]),
            ["`a`", "unique", "rename"],
        ),
        (
            lambda: SequentialAgent(name="s", sub_agents=[_react("a", instruction="Use {nope}.")]),
            ["`a`", "{nope}", "Fix", "nope?"],
        ),
        (
            lambda: ParallelAgent(
                name="p", sub_agents=[_react("a", output_key="k"), _react("b", output_key="k")]
            ),
            ["`a`", "`b`", "`k`", "rename"],
        ),
        (
            lambda: SequentialAgent(name="s", sub_agents=[_react("a", tools=[exit_loop])]),
            ["`a`", "exit_loop", "LoopAgent"],
        ),
        (
            lambda: SequentialAgent(name="s", sub_agents=[_react("a", output_key="model")]),
            ["'model'", "'a'", "rename"],
        ),
        (
            lambda: SequentialAgent(
                name="s", sub_agents=[_react("a", output_key="b"), _react("b")]
            ),
            ["'b'", "rename"],
        ),
    ],
)
def test_build_errors_name_agent_key_and_fix(build: Any, must: list[str]) -> None:
    with pytest.raises((DataflowError, GraphflowConfigError)) as err:
        build().to_graph()
    for part in must:
        assert part in str(err.value), (part, str(err.value))


# -- 11. a failing branch of a nested parallel ---------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_nested_parallel_failure_names_inner_branch_and_resume_reruns_only_it(
    tmp_path: Path, mode: str
) -> None:
    url = _url(tmp_path)
    top, broken, fine = _Counter("a"), _Counter("b", fail_first=True), _Counter("c")
    model = ScriptedChatModel(fn=lambda m, n: f"inner react {n}")
    outer = ParallelAgent(
        name="outer",
        sub_agents=[
            FunctionAgent(name="top", fn=top, output_key="ao"),
            ParallelAgent(
                name="inner",
                sub_agents=[
                    FunctionAgent(name="broken", fn=broken, output_key="bo"),
                    FunctionAgent(name="fine", fn=fine, output_key="co"),
                    ReactAgent(name="talker", model=model, output_key="to"),
                ],
                output_key="inner_m",
            ),
        ],
        output_key="om",
    )

    async def arun() -> dict[str, Any]:
        with pytest.raises(ParallelBranchError) as err:
            await outer.ainvoke("x", thread_id="nested", checkpointer=url)
        assert "`broken`" in str(err.value) and "`inner`" in str(err.value)
        return await outer.aresume("nested", checkpointer=url)

    if mode == "sync":
        with pytest.raises(ParallelBranchError) as err:
            outer.invoke("x", thread_id="nested", checkpointer=url)
        assert "`broken`" in str(err.value) and "`inner`" in str(err.value)
        assert set(err.value.errors) == {"inner"}
        snapshot = outer.get_state("nested", checkpointer=url)
        assert snapshot.values["ao"] == "a"  # the outer sibling's output is kept
        # the inner sibling's output is kept in the inner parallel's own checkpoint
        inner = next(t for t in snapshot.tasks if t.name == "inner")
        assert inner.state.values["co"] == "c"
        result = outer.resume("nested", checkpointer=url)
    else:
        result = asyncio.run(arun())
    assert (top.calls, broken.calls, fine.calls, model.calls) == (1, 2, 1, 1)
    assert result["om"] == {
        "ao": "a",
        "inner_m": {"bo": "b", "co": "c", "to": "inner react 0"},
    }
    assert result["agent_status"]["outer"] == "completed"


# -- 12. max_iterations=1 with a tool call ------------------------------------------------------


def test_max_iterations_one_with_tool_call_hands_back_stop_message() -> None:
    model = ScriptedChatModel(replies=[tool_call("search", {"query": "q"})])
    ran: list[str] = []

    @tool
    def probe(query: str) -> str:
        """Probe."""
        ran.append(query)
        return "probed"

    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(
                name="r", model=model, tools=[search, probe], max_iterations=1, output_key="ro"
            )
        ],
    )
    model.replies = [tool_call("probe", {"query": "q"})]
    result = seq.invoke("go", checkpointer=False)
    assert ran == ["q"]  # the tool ran
    assert model.calls == 1
    assert result["agent_status"]["r"] == "max_iterations"
    last = result["messages"][-1]
    assert isinstance(last, AIMessage) and last.name == "r"
    assert "max_iterations=1" in last.content
    assert result["ro"] == last.content
    assert len(result["messages"]) == 2  # user message + the stop message only
