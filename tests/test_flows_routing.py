"""LlmRoutingAgent: what the model sees, single/multi choice, query rewriting, retries, fallback."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from graphflow import (
    DataflowError,
    FunctionAgent,
    LlmRoutingAgent,
    ReactAgent,
    RoutingError,
    SequentialAgent,
)
from graphflow.messages import is_instruction
from graphflow.testing import ScriptedChatModel


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
