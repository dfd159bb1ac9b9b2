"""Hook semantics: once per agent / model call / tool call, order, reasons, sync and async."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import interrupt

from graphflow import (
    AgentHook,
    DataflowError,
    FunctionAgent,
    HookResult,
    LlmRoutingAgent,
    LoopAgent,
    ModelHook,
    ParallelAgent,
    ParallelBranchError,
    ReactAgent,
    SequentialAgent,
    ToolHook,
)
from graphflow.testing import ScriptedChatModel, tool_call, tool_calls
from tests.support.helpers import add, sqlite_url


def five_tool_rounds() -> ScriptedChatModel:
    """6 model calls, 5 tool calls."""
    return ScriptedChatModel(
        replies=[tool_call("add", {"a": i, "b": 1}) for i in range(5)] + ["done"]
    )


class CountingHook(AgentHook, ModelHook, ToolHook):
    def __init__(self, label: str = "h", log: list | None = None) -> None:
        self.label = label
        self.counts: Counter[str] = Counter()
        self.reasons: list[str | None] = []
        self.log = log if log is not None else []

    @property
    def name(self) -> str:
        return f"Counting_{self.label}"

    def before_agent(self, state, ctx):
        self.counts["before_agent"] += 1
        self.log.append(f"{self.label}.before_agent")

    def after_agent(self, state, ctx):
        self.counts["after_agent"] += 1
        self.reasons.append(ctx.reason)
        self.log.append(f"{self.label}.after_agent")

    def before_model(self, request):
        self.counts["before_model"] += 1
        self.log.append(f"{self.label}.before_model")

    def after_model(self, request, response):
        self.counts["after_model"] += 1
        self.log.append(f"{self.label}.after_model")

    def wrap_model_call(self, request, handler):
        self.counts["wrap_model_call"] += 1
        self.log.append(f"{self.label}.wrap_model>")
        try:
            return handler(request)
        finally:
            self.log.append(f"{self.label}.wrap_model<")

    def wrap_tool_call(self, request, handler):
        self.counts["wrap_tool_call"] += 1
        return handler(request)


class AsyncOnlyHook(AgentHook, ModelHook, ToolHook):
    """Defines only the async twins."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    async def abefore_agent(self, state, ctx):
        self.counts["before_agent"] += 1

    async def aafter_agent(self, state, ctx):
        self.counts["after_agent"] += 1

    async def abefore_model(self, request):
        self.counts["before_model"] += 1

    async def aafter_model(self, request, response):
        self.counts["after_model"] += 1

    async def awrap_model_call(self, request, handler):
        self.counts["wrap_model_call"] += 1
        return await handler(request)

    async def awrap_tool_call(self, request, handler):
        self.counts["wrap_tool_call"] += 1
        return await handler(request)


EXPECTED = {
    "before_agent": 1,
    "after_agent": 1,
    "before_model": 6,
    "after_model": 6,
    "wrap_model_call": 6,
    "wrap_tool_call": 5,
}


@pytest.mark.parametrize("kind", [CountingHook, AsyncOnlyHook])
def test_react_hooks_fire_once_per_agent_model_call_and_tool_call(run_mode, kind):
    hook = kind()
    agent = ReactAgent(name="calc", model=five_tool_rounds(), tools=[add], hooks=[hook])
    result = run_mode.invoke(agent, "go")
    assert result["messages"][-1].content == "done"
    assert dict(hook.counts) == EXPECTED


def test_agent_hooks_fire_once_per_pass_inside_a_loop(run_mode):
    hook = CountingHook()
    model = ScriptedChatModel(
        fn=lambda messages, n: tool_call("add", {"a": n, "b": 1}) if n % 2 == 0 else "ok"
    )
    inner = ReactAgent(name="worker", model=model, tools=[add], hooks=[hook])
    loop = LoopAgent(name="loop", sub_agents=[inner], max_iterations=3)
    run_mode.invoke(loop, "go")
    assert hook.counts["before_agent"] == 3
    assert hook.counts["after_agent"] == 3
    assert hook.counts["before_model"] == 6
    assert hook.counts["wrap_tool_call"] == 3
    assert hook.reasons == ["completed"] * 3


def test_same_react_agent_with_six_model_calls_in_a_loop_of_three():
    hook = CountingHook()
    model = ScriptedChatModel(
        fn=lambda messages, n: "done" if n % 6 == 5 else tool_call("add", {"a": n, "b": 1})
    )
    inner = ReactAgent(name="calc", model=model, tools=[add], hooks=[hook])
    LoopAgent(name="loop", sub_agents=[inner], max_iterations=3).invoke("go")
    assert hook.counts["before_agent"] == 3
    assert hook.counts["after_agent"] == 3
    assert hook.counts["before_model"] == 18
    assert hook.counts["wrap_tool_call"] == 15


def test_agent_hooks_fire_once_for_every_agent_kind(run_mode):
    hooks = {name: CountingHook(name) for name in ["fn", "seq", "par", "loop", "router", "r"]}
    fn = FunctionAgent(name="fn", fn=lambda state: "v", output_key="fn_out", hooks=[hooks["fn"]])
    react = ReactAgent(
        name="r", model=ScriptedChatModel(replies=["hi"]), output_key="r_out", hooks=[hooks["r"]]
    )
    par = ParallelAgent(name="par", sub_agents=[react], hooks=[hooks["par"]])
    router = LlmRoutingAgent(
        name="router",
        model=ScriptedChatModel(replies=['{"agent": "par"}']),
        sub_agents=[par],
        hooks=[hooks["router"]],
    )
    loop = LoopAgent(name="loop", sub_agents=[fn], max_iterations=1, hooks=[hooks["loop"]])
    seq = SequentialAgent(name="seq", sub_agents=[loop, router], hooks=[hooks["seq"]])
    run_mode.invoke(seq, "go")
    for name, hook in hooks.items():
        assert hook.counts["before_agent"] == 1, name
        assert hook.counts["after_agent"] == 1, name


def test_order_list_order_before_reverse_after_and_same_class_twice(run_mode):
    log: list[str] = []
    first, second = CountingHook("a", log), CountingHook("b", log)
    agent = ReactAgent(name="solo", model=ScriptedChatModel(replies=["x"]), hooks=[first, second])
    run_mode.invoke(agent, "go")
    assert log == [
        "a.before_agent",
        "b.before_agent",
        "a.before_model",
        "b.before_model",
        "a.wrap_model>",
        "b.wrap_model>",
        "b.wrap_model<",
        "a.wrap_model<",
        "b.after_model",
        "a.after_model",
        "b.after_agent",
        "a.after_agent",
    ]


def test_several_instances_of_one_class_get_their_own_nodes_in_the_drawing():
    class Plain(AgentHook):
        pass

    agent = ReactAgent(
        name="solo", model=ScriptedChatModel(replies=["x"]), hooks=[Plain(), Plain()]
    )
    seq = SequentialAgent(name="outer", sub_agents=[agent], hooks=[Plain()])
    ids = set(seq.compile(False).graph.get_graph(xray=True).nodes)
    assert {
        "before_agent.Plain",
        "after_agent.Plain",
        "solo:before_agent.Plain",
        "solo:before_agent.Plain_2",
        "solo:after_agent.Plain",
        "solo:after_agent.Plain_2",
    } <= ids
    assert "before Plain" in seq.draw("mermaid")


# -- after_agent reasons -----------------------------------------------------------------------


class ReasonHook(AgentHook):
    def __init__(self, skip: bool = False) -> None:
        self.skip = skip
        self.seen: list[tuple[str | None, BaseException | None]] = []

    def before_agent(self, state, ctx):
        if self.skip:
            return HookResult(jump_to="end", update={"answer": "cached"})
        return None

    def after_agent(self, state, ctx):
        self.seen.append((ctx.reason, ctx.error))


def test_after_agent_reason_skipped(run_mode):
    hook = ReasonHook(skip=True)
    model = ScriptedChatModel(replies=["never"])
    agent = ReactAgent(name="a", model=model, hooks=[hook], output_key="answer")
    result = run_mode.invoke(agent, "go")
    assert result["answer"] == "cached"
    assert model.calls == 0
    assert hook.seen == [("skipped", None)]


def test_after_agent_reason_max_iterations(run_mode):
    hook = ReasonHook()
    model = ScriptedChatModel(fn=lambda m, n: tool_call("add", {"a": 1, "b": 2}))
    agent = ReactAgent(name="a", model=model, tools=[add], hooks=[hook], max_iterations=2)
    run_mode.invoke(agent, "go")
    assert hook.seen == [("max_iterations", None)]


def test_after_agent_reason_error(run_mode):
    hook = ReasonHook()
    agent = ReactAgent(
        name="a", model=ScriptedChatModel(replies=[RuntimeError("boom")]), hooks=[hook]
    )
    with pytest.raises(RuntimeError, match="boom"):
        run_mode.invoke(agent, "go")
    assert len(hook.seen) == 1
    reason, error = hook.seen[0]
    assert reason == "error"
    assert isinstance(error, RuntimeError)


def test_after_agent_reason_error_for_function_agent_and_its_parent():
    inner, outer = ReasonHook(), ReasonHook()
    fn = FunctionAgent(name="fn", fn=lambda state: 1 / 0, output_key="out", hooks=[inner])
    seq = SequentialAgent(name="seq", sub_agents=[fn], hooks=[outer])
    with pytest.raises(ZeroDivisionError):
        seq.invoke("go")
    assert [r for r, _ in inner.seen] == ["error"]
    assert [r for r, _ in outer.seen] == ["error"]


def test_before_agent_update_reaches_the_agent():
    class Setter(AgentHook):
        def before_agent(self, state, ctx):
            return {"topic": "from hook"}

    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=["x"]),
        instruction="Talk about {topic}.",
        input_keys=["topic"],
        hooks=[Setter()],
    )
    model = agent.model
    agent.invoke({"input": "go", "topic": "from caller"})
    assert "from hook" in str(model.requests[0])


# -- model hooks ----------------------------------------------------------------------------------


def test_before_model_rewrites_messages_tools_and_settings(run_mode):
    class Rewrite(ModelHook):
        def before_model(self, request):
            return request.override(
                messages=[SystemMessage(content="rewritten"), *request.messages],
                tools=[],
                settings={"temperature": 0},
            )

    model = ScriptedChatModel(replies=["x"])
    agent = ReactAgent(name="a", model=model, tools=[add], hooks=[Rewrite()])
    run_mode.invoke(agent, "go")
    assert model.requests[0][0].content == "rewritten"
    assert model.request_tools[0] == []


def test_before_model_short_circuits_with_an_ai_message(run_mode):
    class Canned(ModelHook):
        async def abefore_model(self, request):
            return AIMessage(content="canned")

    model = ScriptedChatModel(replies=["never"])
    agent = ReactAgent(name="a", model=model, hooks=[Canned()], output_key="out")
    result = run_mode.invoke(agent, "go")
    assert result["out"] == "canned"
    assert model.calls == 0


def test_after_model_replaces_the_response(run_mode):
    class Upper(ModelHook):
        def after_model(self, request, response):
            return AIMessage(content=response.text.upper())

    agent = ReactAgent(
        name="a", model=ScriptedChatModel(replies=["quiet"]), hooks=[Upper()], output_key="out"
    )
    assert run_mode.invoke(agent, "go")["out"] == "QUIET"


def test_wrap_model_call_retries_once_per_model_call(run_mode):
    class Retry(ModelHook):
        def __init__(self) -> None:
            self.calls = 0

        def wrap_model_call(self, request, handler):
            self.calls += 1
            try:
                return handler(request)
            except ValueError:
                return handler(request)

    hook = Retry()
    model = ScriptedChatModel(replies=[ValueError("flaky"), "ok"])
    agent = ReactAgent(name="a", model=model, hooks=[hook], output_key="out")
    assert run_mode.invoke(agent, "go")["out"] == "ok"
    assert hook.calls == 1
    assert model.calls == 2


# -- tool hooks -----------------------------------------------------------------------------------


def test_wrap_tool_call_changes_args_short_circuits_and_retries(run_mode):
    attempts: Counter[str] = Counter()

    @tool
    def flaky(x: int) -> str:
        """Fails the first time."""
        attempts["flaky"] += 1
        if attempts["flaky"] == 1:
            raise LookupError("first time")  # RESOURCE_NOT_FOUND: returned, not fatal
        return f"flaky {x}"

    class Tools(ToolHook):
        def wrap_tool_call(self, request, handler):
            name = request.tool_call["name"]
            if name == "add":
                request = request.override(
                    tool_call={**request.tool_call, "args": {"a": 100, "b": 1}}
                )
                return handler(request)
            if name == "secret":
                return ToolMessage(
                    content="answered by hook", tool_call_id=request.tool_call["id"], name=name
                )
            result = handler(request)
            return handler(request) if result.status == "error" else result

    model = ScriptedChatModel(
        replies=[
            tool_calls(("add", {"a": 1, "b": 1}), ("secret", {}), ("flaky", {"x": 7})),
            "done",
        ]
    )
    agent = ReactAgent(name="a", model=model, tools=[add, flaky], hooks=[Tools()])
    result = run_mode.invoke(agent, "go")
    contents = {m.name: m.content for m in result["messages"] if isinstance(m, ToolMessage)}
    assert contents == {"add": "101", "secret": "answered by hook", "flaky": "flaky 7"}
    assert attempts["flaky"] == 2


def test_one_twin_tool_hook_may_interrupt_under_both_apis(run_mode):
    from langgraph.types import interrupt

    class SyncOnly(ToolHook):
        def wrap_tool_call(self, request, handler):
            if interrupt("ok?") != "yes":
                raise AssertionError("unexpected resume value")
            return handler(request)

    class AsyncOnly(ToolHook):
        async def awrap_tool_call(self, request, handler):
            if interrupt("sure?") != "yes":
                raise AssertionError("unexpected resume value")
            return await handler(request)

    model = ScriptedChatModel(
        fn=lambda messages, n: (
            "done" if isinstance(messages[-1], ToolMessage) else tool_call("add", {"a": 1, "b": 2})
        )
    )
    agent = ReactAgent(name="a", model=model, tools=[add], hooks=[SyncOnly(), AsyncOnly()])
    first = run_mode.invoke(agent, "go", thread_id="t")
    assert [i.value for i in first["__interrupt__"]] == ["ok?"]
    second = run_mode.resume(agent, "t", "yes")
    assert [i.value for i in second["__interrupt__"]] == ["sure?"]
    third = run_mode.resume(agent, "t", "yes")
    assert third["messages"][-1].content == "done"
    assert [m.content for m in third["messages"] if isinstance(m, ToolMessage)] == ["3"]


# -- agent hooks at the root of every agent kind -------------------------------------------------


class BeforeAfterLog(AgentHook):
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str | None]] = []

    def before_agent(self, state, ctx):
        self.events.append(("before", ctx.agent, None))

    def after_agent(self, state, ctx):
        self.events.append(("after", ctx.agent, ctx.reason))


def _kinds(hook):
    fn = FunctionAgent(name="fn", fn=lambda s: 1, output_key="f", hooks=[hook])
    par = ParallelAgent(
        name="par",
        sub_agents=[
            FunctionAgent(name="p1", fn=lambda s: 1, output_key="p1o"),
            FunctionAgent(name="p2", fn=lambda s: 2, output_key="p2o"),
        ],
        hooks=[hook],
    )
    loop = LoopAgent(
        name="loop",
        sub_agents=[FunctionAgent(name="body", fn=lambda s: 1, output_key="b")],
        max_iterations=3,
        hooks=[hook],
    )
    router = LlmRoutingAgent(
        name="router",
        model=ScriptedChatModel(replies=[{"agent": "r1"}]),
        sub_agents=[
            FunctionAgent(name="r1", fn=lambda s: "r1", output_key="r1o"),
            FunctionAgent(name="r2", fn=lambda s: "r2", output_key="r2o"),
        ],
        hooks=[hook],
    )
    return [fn, par, loop, router]


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_agent_hooks_fire_once_per_invocation(run_mode, index):
    hook = BeforeAfterLog()
    agent = _kinds(hook)[index]
    run_mode.invoke(agent, "go")
    assert [e[0] for e in hook.events] == ["before", "after"], hook.events
    assert hook.events[1][2] in ("completed", "max_iterations")


def test_after_agent_error_reason_and_original_error(run_mode):
    hook = BeforeAfterLog()

    def boom(state):
        raise KeyError("nope")

    agent = FunctionAgent(name="fn", fn=boom, output_key="f", hooks=[hook])
    with pytest.raises(KeyError, match="nope"):
        run_mode.invoke(agent, "go")
    assert hook.events == [("before", "fn", None), ("after", "fn", "error")]

    hook = BeforeAfterLog()
    inner = FunctionAgent(name="bad", fn=boom, output_key="x", hooks=[hook])
    par = ParallelAgent(
        name="par", sub_agents=[inner, FunctionAgent(name="ok", fn=lambda s: 1, output_key="y")]
    )
    with pytest.raises(ParallelBranchError, match="nope"):
        run_mode.invoke(par, "go")
    assert hook.events == [("before", "bad", None), ("after", "bad", "error")]


# -- an agent hook that interrupts ---------------------------------------------------------------


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


def test_before_agent_hook_interrupt_then_resume(tmp_path: Path, run_mode) -> None:
    url = sqlite_url(tmp_path)
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

    if not run_mode.is_async:
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


# -- keys a hook declares it writes --------------------------------------------------------------


class Ticket(AgentHook):
    writes = ("ticket",)

    def before_agent(self, state: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"ticket": f"T-{ctx.agent}"}


def test_a_nested_agents_hook_key_reaches_the_parent_and_later_instructions() -> None:
    first = ReactAgent(
        name="first",
        model=ScriptedChatModel(replies=["ok"]),
        hooks=[Ticket()],
        instruction="Work on {ticket}.",  # a before_agent hook's key is available to its agent
        output_key="first_out",
    )
    later_model = ScriptedChatModel(replies=["done"])
    later = ReactAgent(
        name="later", model=later_model, instruction="Close {ticket}.", output_key="later_out"
    )
    result = SequentialAgent(name="flow", sub_agents=[first, later]).invoke("go")
    assert result["ticket"] == "T-first"
    assert later_model.requests[0][-1].content == "Close T-first."


def test_without_declared_writes_the_key_is_unknown_at_build_time() -> None:
    class Quiet(AgentHook):
        def before_agent(self, state: dict[str, Any], ctx: Any) -> dict[str, Any]:
            return {}

    model = ScriptedChatModel(replies=["x"])
    first = ReactAgent(name="first", model=model, hooks=[Quiet()], output_key="a")
    later = ReactAgent(name="later", model=model, instruction="Close {ticket}.")
    with pytest.raises(DataflowError, match="ticket"):
        SequentialAgent(name="flow", sub_agents=[first, later]).compile()
    assert model.calls == 0


def test_bad_hook_write_key_is_a_build_error() -> None:
    class Bad(AgentHook):
        writes = ("messages",)

    agent = ReactAgent(name="a", model=ScriptedChatModel(replies=["x"]), hooks=[Bad()])
    with pytest.raises(DataflowError, match="writes='messages'"):
        agent.compile()


# -- a model hook's update -----------------------------------------------------------------------


def test_before_model_update_without_jump_continues_the_call() -> None:
    from graphflow import HookResult, ModelHook, ReactAgent
    from graphflow.testing import ScriptedChatModel

    class Note(ModelHook):
        def before_model(self, request):
            return HookResult(update={"note": f"call {request.call_number}"})

    model = ScriptedChatModel(replies=["done"])
    agent = ReactAgent(name="a", model=model, hooks=[Note()], output_key="out", input_keys=["note"])
    result = agent.invoke("hi")
    assert model.calls == 1
    assert result["out"] == "done"
    assert result["note"] == "call 0"
