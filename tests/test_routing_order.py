"""Routes chosen together run concurrently; their answers reach the parent in declaration order."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage

from graphflow import LlmRoutingAgent, ReactAgent
from graphflow.testing import ScriptedChatModel


def _router() -> LlmRoutingAgent:
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


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_multi_route_answers_in_declaration_order(mode: str) -> None:
    router = _router()
    result = (
        router.invoke("both please")
        if mode == "sync"
        else asyncio.run(router.ainvoke("both please"))
    )
    finals = [m for m in result["messages"] if isinstance(m, AIMessage)]
    assert [(m.name, m.text) for m in finals] == [
        ("zeta", "zeta answer"),
        ("alpha", "alpha answer"),
    ]
    assert result["answers"] == {"z": "zeta answer", "a": "alpha answer"}
