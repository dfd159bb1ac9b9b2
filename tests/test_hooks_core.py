"""Hook semantics: once per agent / model call / tool call, order, reasons, sync and async."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from graphflow import (
    AgentHook,
    FunctionAgent,
    HookResult,
    LlmRoutingAgent,
    LoopAgent,
    ModelHook,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
    ToolHook,
)
from graphflow.testing import ScriptedChatModel, tool_call, tool_calls


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


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


def run(agent, input, mode, **kwargs):
    if mode == "sync":
        return agent.invoke(input, **kwargs)
    return asyncio.run(agent.ainvoke(input, **kwargs))


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", [CountingHook, AsyncOnlyHook])
def test_react_hooks_fire_once_per_agent_model_call_and_tool_call(mode, kind):
    hook = kind()
    agent = ReactAgent(name="calc", model=five_tool_rounds(), tools=[add], hooks=[hook])
    result = run(agent, "go", mode)
    assert result["messages"][-1].content == "done"
    assert dict(hook.counts) == EXPECTED


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_agent_hooks_fire_once_per_pass_inside_a_loop(mode):
    hook = CountingHook()
    model = ScriptedChatModel(
        fn=lambda messages, n: tool_call("add", {"a": n, "b": 1}) if n % 2 == 0 else "ok"
    )
    inner = ReactAgent(name="worker", model=model, tools=[add], hooks=[hook])
    loop = LoopAgent(name="loop", sub_agents=[inner], max_iterations=3)
    run(loop, "go", mode)
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


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_agent_hooks_fire_once_for_every_agent_kind(mode):
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
    run(seq, "go", mode)
    for name, hook in hooks.items():
        assert hook.counts["before_agent"] == 1, name
        assert hook.counts["after_agent"] == 1, name


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_order_list_order_before_reverse_after_and_same_class_twice(mode):
    log: list[str] = []
    first, second = CountingHook("a", log), CountingHook("b", log)
    agent = ReactAgent(name="solo", model=ScriptedChatModel(replies=["x"]), hooks=[first, second])
    run(agent, "go", mode)
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
    ids = set(seq.compile(False).get_graph(xray=True).nodes)
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


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_after_agent_reason_skipped(mode):
    hook = ReasonHook(skip=True)
    model = ScriptedChatModel(replies=["never"])
    agent = ReactAgent(name="a", model=model, hooks=[hook], output_key="answer")
    result = run(agent, "go", mode)
    assert result["answer"] == "cached"
    assert model.calls == 0
    assert hook.seen == [("skipped", None)]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_after_agent_reason_max_iterations(mode):
    hook = ReasonHook()
    model = ScriptedChatModel(fn=lambda m, n: tool_call("add", {"a": 1, "b": 2}))
    agent = ReactAgent(name="a", model=model, tools=[add], hooks=[hook], max_iterations=2)
    run(agent, "go", mode)
    assert hook.seen == [("max_iterations", None)]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_after_agent_reason_error(mode):
    hook = ReasonHook()
    agent = ReactAgent(
        name="a", model=ScriptedChatModel(replies=[RuntimeError("boom")]), hooks=[hook]
    )
    with pytest.raises(RuntimeError, match="boom"):
        run(agent, "go", mode)
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


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_before_model_rewrites_messages_tools_and_settings(mode):
    class Rewrite(ModelHook):
        def before_model(self, request):
            return request.override(
                messages=[SystemMessage(content="rewritten"), *request.messages],
                tools=[],
                settings={"temperature": 0},
            )

    model = ScriptedChatModel(replies=["x"])
    agent = ReactAgent(name="a", model=model, tools=[add], hooks=[Rewrite()])
    run(agent, "go", mode)
    assert model.requests[0][0].content == "rewritten"
    assert model.request_tools[0] == []


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_before_model_short_circuits_with_an_ai_message(mode):
    class Canned(ModelHook):
        async def abefore_model(self, request):
            return AIMessage(content="canned")

    model = ScriptedChatModel(replies=["never"])
    agent = ReactAgent(name="a", model=model, hooks=[Canned()], output_key="out")
    result = run(agent, "go", mode)
    assert result["out"] == "canned"
    assert model.calls == 0


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_after_model_replaces_the_response(mode):
    class Upper(ModelHook):
        def after_model(self, request, response):
            return AIMessage(content=response.text.upper())

    agent = ReactAgent(
        name="a", model=ScriptedChatModel(replies=["quiet"]), hooks=[Upper()], output_key="out"
    )
    assert run(agent, "go", mode)["out"] == "QUIET"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_wrap_model_call_retries_once_per_model_call(mode):
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
    assert run(agent, "go", mode)["out"] == "ok"
    assert hook.calls == 1
    assert model.calls == 2


# -- tool hooks -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_wrap_tool_call_changes_args_short_circuits_and_retries(mode):
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
    result = run(agent, "go", mode)
    contents = {m.name: m.content for m in result["messages"] if isinstance(m, ToolMessage)}
    assert contents == {"add": "101", "secret": "answered by hook", "flaky": "flaky 7"}
    assert attempts["flaky"] == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_one_twin_tool_hook_may_interrupt_under_both_apis(mode):
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
    first = run(agent, "go", mode, thread_id="t")
    assert [i.value for i in first["__interrupt__"]] == ["ok?"]
    resume = agent.resume if mode == "sync" else lambda *a: asyncio.run(agent.aresume(*a))
    second = resume("t", "yes")
    assert [i.value for i in second["__interrupt__"]] == ["sure?"]
    third = resume("t", "yes")
    assert third["messages"][-1].content == "done"
    assert [m.content for m in third["messages"] if isinstance(m, ToolMessage)] == ["3"]
