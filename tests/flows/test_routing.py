"""LlmRoutingAgent: what the model sees, single/multi choice, query rewriting, retries, fallback,
routes that are flows, and routing attempts as durable steps."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from graphflow import (
    DataflowError,
    FunctionAgent,
    LlmRoutingAgent,
    LoopAgent,
    ParallelAgent,
    ReactAgent,
    RoutingError,
    SequentialAgent,
)
from graphflow.messages import is_instruction
from graphflow.testing import ScriptedChatModel
from tests.support.helpers import Counted


def _routes() -> dict[str, Any]:
    billing_model = ScriptedChatModel(fn=lambda m, n: f"billing answer {n}")
    tech_model = ScriptedChatModel(fn=lambda m, n: f"tech answer {n}")
    general_model = ScriptedChatModel(fn=lambda m, n: f"general answer {n}")
    return {
        "models": {"billing": billing_model, "tech": tech_model, "general": general_model},
        "agents": [
            ReactAgent(
                name="billing",
                description="Handles invoices, refunds and payment questions.",
                model=billing_model,
                instruction="Billing request: {input}",
                output_key="billing_out",
            ),
            ReactAgent(
                name="tech",
                description="Fixes technical problems with the app.",
                model=tech_model,
                output_key="tech_out",
            ),
            ReactAgent(
                name="general",
                description="Answers anything else.",
                model=general_model,
                output_key="general_out",
            ),
        ],
    }


def test_model_sees_every_route_name_and_description() -> None:
    r = _routes()
    router_model = ScriptedChatModel(replies=[{"agent": "tech"}])
    router = LlmRoutingAgent(name="router", model=router_model, sub_agents=r["agents"])
    router.invoke("my app crashes")
    request = router_model.requests[0]
    system = request[0]
    assert isinstance(system, SystemMessage)
    for agent in r["agents"]:
        assert f"{agent.name}: {agent.description}" in system.content
    assert request[-1].content == "my app crashes"


def test_single_choice_runs_only_that_agent() -> None:
    r = _routes()
    router_model = ScriptedChatModel(replies=['{"agent": "tech"}'])
    router = LlmRoutingAgent(
        name="router", model=router_model, sub_agents=r["agents"], output_key="answer"
    )
    result = router.invoke("my app crashes")
    calls = {k: m.calls for k, m in r["models"].items()}
    assert calls == {"billing": 0, "tech": 1, "general": 0}
    assert result["answer"] == "tech answer 0"
    assert result["tech_out"] == "tech answer 0"
    assert "billing_out" not in result and "general_out" not in result
    assert result["agent_status"]["router"] == "completed"
    # conversation: the user's message and the chosen agent's final answer
    assert [m.content for m in result["messages"]] == ["my app crashes", "tech answer 0"]


def test_rewritten_query_is_delivered_to_chosen_agent() -> None:
    r = _routes()
    router_model = ScriptedChatModel(
        replies=[{"agent": "billing", "query": "Refund order 42 charged twice"}]
    )
    router = LlmRoutingAgent(name="router", model=router_model, sub_agents=r["agents"])
    result = router.invoke("hey, you charged me 2x for #42!!")
    request = r["models"]["billing"].requests[0]
    # its instruction's {input} renders the rewritten query ...
    assert is_instruction(request[-1])
    assert request[-1].content == "Billing request: Refund order 42 charged twice"
    # ... and it receives the query as a user message
    users = [m for m in request if isinstance(m, HumanMessage) and not is_instruction(m)]
    assert users[-1].content == "Refund order 42 charged twice"
    # the caller's input is unchanged and the query message does not leak back
    assert result["input"] == "hey, you charged me 2x for #42!!"
    assert [m.content for m in result["messages"]] == [
        "hey, you charged me 2x for #42!!",
        "billing answer 0",
    ]


def test_multi_runs_several_concurrently() -> None:
    barrier = threading.Barrier(2, timeout=5)
    ran: list[str] = []

    def meet(name: str):
        def fn(state: dict[str, Any]) -> str:
            barrier.wait()  # both must be running at once, or this times out
            ran.append(name)
            return f"{name} done with {state['input']}"

        return fn

    router_model = ScriptedChatModel(
        replies=[{"routes": [{"agent": "a", "query": "qa"}, {"agent": "b"}]}]
    )
    router = LlmRoutingAgent(
        name="router",
        model=router_model,
        multi=True,
        sub_agents=[
            FunctionAgent(name="a", fn=meet("a"), output_key="a_out", description="A"),
            FunctionAgent(name="b", fn=meet("b"), output_key="b_out", description="B"),
            FunctionAgent(name="c", fn=meet("c"), output_key="c_out", description="C"),
        ],
        output_key="answers",
    )
    result = router.invoke("orig")
    assert sorted(ran) == ["a", "b"]
    assert result["answers"] == {"a_out": "a done with qa", "b_out": "b done with orig"}
    assert "routes" in router_model.requests[0][0].content


def test_multi_concurrent_async() -> None:
    in_flight = {"cur": 0, "max": 0}

    async def work(state: dict[str, Any]) -> str:
        in_flight["cur"] += 1
        in_flight["max"] = max(in_flight["max"], in_flight["cur"])
        await asyncio.sleep(0.1)
        in_flight["cur"] -= 1
        return "ok"

    router = LlmRoutingAgent(
        name="router",
        model=ScriptedChatModel(
            replies=[{"routes": [{"agent": "x"}, {"agent": "y"}, {"agent": "z"}]}]
        ),
        multi=True,
        sub_agents=[FunctionAgent(name=n, fn=work, output_key=f"{n}_out") for n in "xyz"],
    )
    result = asyncio.run(router.ainvoke("go"))
    assert in_flight["max"] == 3
    assert result["x_out"] == result["y_out"] == result["z_out"] == "ok"


def test_multi_routes_must_write_distinct_keys() -> None:
    m = ScriptedChatModel(replies=["x"])
    with pytest.raises(DataflowError, match=r"`p`.*`q`.*`same`"):
        LlmRoutingAgent(
            name="router",
            model=m,
            multi=True,
            sub_agents=[
                ReactAgent(name="p", model=m, output_key="same"),
                ReactAgent(name="q", model=m, output_key="same"),
            ],
        ).compile()
    assert m.calls == 0


def test_invalid_choice_retried_with_feedback_then_succeeds() -> None:
    r = _routes()
    router_model = ScriptedChatModel(
        replies=[{"agent": "sales"}, "not json at all", {"agent": "general"}]
    )
    router = LlmRoutingAgent(
        name="router", model=router_model, sub_agents=r["agents"], output_key="answer"
    )
    result = router.invoke("hello")
    assert router_model.calls == 3
    feedback = router_model.requests[1][-1]
    assert isinstance(feedback, HumanMessage)
    assert "invalid" in feedback.content and "billing, tech, general" in feedback.content
    # feedback accumulates: the third request carries both corrections
    assert len(router_model.requests[2]) == len(router_model.requests[0]) + 2
    assert result["answer"] == "general answer 0"


def test_invalid_choices_exhaust_retries_then_fallback() -> None:
    r = _routes()
    router_model = ScriptedChatModel(fn=lambda m, n: {"agent": "nonexistent"})
    router = LlmRoutingAgent(
        name="router",
        model=router_model,
        sub_agents=r["agents"],
        fallback="general",
        output_key="answer",
    )
    result = router.invoke("hello")
    assert router_model.calls == 3  # one try + max_retries=2
    assert {k: m.calls for k, m in r["models"].items()} == {"billing": 0, "tech": 0, "general": 1}
    assert result["answer"] == "general answer 0"


def test_no_fallback_raises_routing_error() -> None:
    r = _routes()
    router_model = ScriptedChatModel(fn=lambda m, n: {"agent": "nonexistent"})
    router = LlmRoutingAgent(name="router", model=router_model, sub_agents=r["agents"])
    with pytest.raises(RoutingError) as err:
        router.invoke("hello")
    assert err.value.agent == "router"
    assert "router" in str(err.value) and "billing, tech, general" in str(err.value)
    assert router_model.calls == 3
    assert all(m.calls == 0 for m in r["models"].values())


def test_no_fallback_raises_routing_error_async() -> None:
    r = _routes()
    router_model = ScriptedChatModel(fn=lambda m, n: "garbage")
    router = LlmRoutingAgent(
        name="router", model=router_model, sub_agents=r["agents"], max_retries=1
    )
    with pytest.raises(RoutingError):
        asyncio.run(router.ainvoke("hello"))
    assert router_model.calls == 2


def test_fallback_must_be_a_route() -> None:
    r = _routes()
    with pytest.raises(ValueError, match="fallback"):
        LlmRoutingAgent(
            name="router", model=ScriptedChatModel(), sub_agents=r["agents"], fallback="x"
        )


def test_any_agent_kind_as_route() -> None:
    m1 = ScriptedChatModel(replies=["researched"])
    m2 = ScriptedChatModel(replies=["written"])
    pipeline = SequentialAgent(
        name="pipeline",
        description="Research, then write.",
        sub_agents=[
            ReactAgent(name="researcher", model=m1, output_key="research"),
            ReactAgent(
                name="writer", model=m2, instruction="Write from {research}", output_key="article"
            ),
        ],
        output_key="pipeline_out",
    )
    quick = FunctionAgent(
        name="quick", description="Instant answers.", fn=lambda s: "quick", output_key="q"
    )
    router_model = ScriptedChatModel(
        replies=[{"agent": "pipeline", "query": "Write about foldables"}]
    )
    router = LlmRoutingAgent(
        name="router", model=router_model, sub_agents=[quick, pipeline], output_key="answer"
    )
    result = router.invoke("foldables?")
    assert "pipeline: Research, then write." in router_model.requests[0][0].content
    assert m1.requests[0][-1].content == "Write about foldables"
    assert m2.requests[0][-1].content == "Write from researched"
    assert result["answer"] == "written"
    assert "q" not in result


def test_async_single_choice_with_query() -> None:
    r = _routes()
    router_model = ScriptedChatModel(replies=[{"agent": "billing", "query": "refund"}])
    router = LlmRoutingAgent(
        name="router", model=router_model, sub_agents=r["agents"], output_key="answer"
    )
    result = asyncio.run(router.ainvoke("money back pls"))
    assert result["answer"] == "billing answer 0"
    assert r["models"]["billing"].requests[0][-1].content == "Billing request: refund"


# -- several routes: answers in declaration order ------------------------------------------------


def _zeta_alpha_router() -> LlmRoutingAgent:
    # `zeta` is declared first but answers last
    zeta = ReactAgent(
        name="zeta",
        description="slow",
        model=ScriptedChatModel(replies=["zeta answer"], latency=0.2),
        output_key="z",
    )
    alpha = ReactAgent(
        name="alpha",
        description="fast",
        model=ScriptedChatModel(replies=["alpha answer"]),
        output_key="a",
    )
    chooser = ScriptedChatModel(
        replies=[{"routes": [{"agent": "alpha"}, {"agent": "zeta"}]}],
    )
    return LlmRoutingAgent(
        name="router", model=chooser, sub_agents=[zeta, alpha], multi=True, output_key="answers"
    )


def test_multi_route_answers_in_declaration_order(run_mode) -> None:
    router = _zeta_alpha_router()
    result = run_mode.invoke(router, "both please")
    finals = [m for m in result["messages"] if isinstance(m, AIMessage)]
    assert [(m.name, m.text) for m in finals] == [
        ("zeta", "zeta answer"),
        ("alpha", "alpha answer"),
    ]
    assert result["answers"] == {"z": "zeta answer", "a": "alpha answer"}


# -- a route that is a flow, with a rewritten query ----------------------------------------------


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


# -- attempts: per pass of a loop, each its own durable step -------------------------------------


def test_router_in_loop_resets_attempts_each_pass() -> None:
    replies = iter([{"agent": "zzz"}, {"agent": "x"}] * 3)
    model = ScriptedChatModel(fn=lambda messages, n: next(replies))
    ran: list[str] = []

    def route_fn(name: str) -> Any:
        def fn(state: dict[str, Any]) -> str:
            ran.append(name)
            return name

        return fn

    router = LlmRoutingAgent(
        name="router",
        model=model,
        sub_agents=[
            FunctionAgent(name=n, fn=route_fn(n), output_key=f"{n}_out", description=n)
            for n in ("x", "y")
        ],
        output_key="res",
        max_retries=1,
    )
    out = LoopAgent(name="loop", sub_agents=[router], max_iterations=3).invoke("go")
    assert out["res"] == "x" and ran == ["x", "x", "x"]
    assert model.calls == 6
    # each pass's first attempt carries no feedback from the previous pass
    assert not any("invalid" in m.text for m in model.requests[2])


def test_router_model_error_propagates_and_resumes() -> None:
    model = ScriptedChatModel(replies=[ConnectionError("down"), {"agent": "x"}])
    fn = Counted("X")
    router = LlmRoutingAgent(
        name="router",
        model=model,
        sub_agents=[
            FunctionAgent(name="x", fn=fn, output_key="x_out", description="x"),
            FunctionAgent(name="y", fn=Counted("Y"), output_key="y_out", description="y"),
        ],
        output_key="res",
    )
    with pytest.raises(ConnectionError):
        router.invoke("go", thread_id="route-err")
    assert router.resume("route-err")["res"] == "X"
    assert (model.calls, fn.calls) == (2, 1)


def test_resume_after_a_failed_second_attempt_does_not_repeat_the_first(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    chooser = ScriptedChatModel(
        replies=[
            '{"agent": "nobody"}',  # invalid: fed back
            ConnectionError("router endpoint reset"),  # the run fails here
            '{"agent": "billing"}',  # after resume
            '{"agent": "support"}',  # a later, separate invocation on the thread
        ]
    )
    billing = FunctionAgent(name="billing", fn=lambda s: "refund issued", output_key="answer")
    support = FunctionAgent(name="support", fn=lambda s: "ticket opened", output_key="answer")
    router = LlmRoutingAgent(name="router", model=chooser, sub_agents=[billing, support])

    with pytest.raises(ConnectionError):
        router.invoke("my card was charged twice", thread_id="t", checkpointer=url)
    result = router.resume("t", checkpointer=url)

    assert result["answer"] == "refund issued"
    assert chooser.calls == 3  # the first (invalid) attempt was not repeated
    resumed_request = chooser.requests[2]
    assert "That choice was invalid" in resumed_request[-1].content
    assert "nobody" in resumed_request[-1].content

    # a new invocation on the same thread starts without the old attempts' feedback
    again = router.invoke("and open a ticket", thread_id="t", checkpointer=url)
    assert again["answer"] == "ticket opened"
    assert all("That choice was invalid" not in m.content for m in chooser.requests[3])
