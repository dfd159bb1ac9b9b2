"""A user-defined agent kind: an Agent subclass plus a registered FlowGraphBuildingStrategy."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from pydantic import Field

from graphflow import (
    Agent,
    BuildContext,
    FlowGraphBuildingStrategy,
    FunctionAgent,
    GraphflowConfigError,
    ReactAgent,
    SequentialAgent,
    register_strategy,
)
from graphflow.state import AGENT_STATUS
from graphflow.strategies import registry as registry_module
from graphflow.testing import ScriptedChatModel


class MapReduceAgent(Agent):
    """Runs every mapper concurrently, then reduces their results with `reduce`."""

    sub_agents: list[Agent] = Field(min_length=1)
    reduce: Callable[[list[Any]], Any]


class MapReduceStrategy(FlowGraphBuildingStrategy):
    def check_dataflow(
        self, agent: Any, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        ctx.builder.check_placeholders(agent, available, ctx)
        after = available
        for child in agent.sub_agents:  # mappers all start from the same state
            after = after | ctx.builder.check(child, available, ctx.child(child))
        return after | self.own_writes(agent)

    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph = StateGraph(ctx.schema())
        keys = [ctx.builder.result_key(c) for c in agent.sub_agents]

        def reduce(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            update: dict[str, Any] = {AGENT_STATUS: {agent.name: "completed"}}
            if agent.output_key:
                update[agent.output_key] = agent.reduce([state.get(k) for k in keys])
            return update

        graph.add_node("gf_reduce", reduce)
        for child in agent.sub_agents:
            graph.add_node(child.name, ctx.builder.child_node(child, ctx.child(child), owner=agent))
            graph.add_edge(START, child.name)
            graph.add_edge(child.name, "gf_reduce")
        graph.add_edge("gf_reduce", END)
        return graph


class UnregisteredAgent(Agent):
    pass


@pytest.fixture
def registered() -> Iterator[None]:
    register_strategy(MapReduceAgent, MapReduceStrategy())
    yield
    registry_module._REGISTRY.pop(MapReduceAgent, None)


def _pipeline() -> tuple[SequentialAgent, ScriptedChatModel, ScriptedChatModel]:
    mapper_model = ScriptedChatModel(fn=lambda m, n: f"len={len(m[-1].content)}")
    final_model = ScriptedChatModel(replies=["report done"])
    mr = MapReduceAgent(
        name="mapreduce",
        sub_agents=[
            ReactAgent(name="m1", model=mapper_model, instruction="count {doc_a}", output_key="r1"),
            ReactAgent(
                name="m2", model=mapper_model, instruction="count {doc_b}!", output_key="r2"
            ),
            FunctionAgent(name="m3", fn=lambda s: "len=fn", output_key="r3"),
        ],
        reduce=lambda results: " + ".join(sorted(results)),
        output_key="reduced",
    )
    prep = FunctionAgent(
        name="prep", fn=lambda s: {"doc_a": "aaa", "doc_b": "bbbbb"}, writes=["doc_a", "doc_b"]
    )
    final = ReactAgent(
        name="final", model=final_model, instruction="Report on {reduced}", output_key="report"
    )
    return SequentialAgent(name="seq", sub_agents=[prep, mr, final]), mapper_model, final_model


def test_custom_strategy_runs_inside_sequential(registered: None) -> None:
    seq, mapper_model, final_model = _pipeline()
    result = seq.invoke("go")
    assert mapper_model.calls == 2
    assert result["r1"] == "len=9" and result["r2"] == "len=12" and result["r3"] == "len=fn"
    assert result["reduced"] == "len=12 + len=9 + len=fn"
    assert final_model.requests[0][-1].content == "Report on len=12 + len=9 + len=fn"
    assert result["report"] == "report done"
    assert result["agent_status"]["mapreduce"] == "completed"
    nodes = set(seq.compile().graph.get_graph(xray=True).nodes)
    assert "mapreduce:gf_reduce" in nodes and "mapreduce:m1:model" in nodes


def test_custom_strategy_async(registered: None) -> None:
    seq, _, _ = _pipeline()
    result = asyncio.run(seq.ainvoke("go"))
    assert result["reduced"] == "len=12 + len=9 + len=fn"


def test_custom_agent_dataflow_is_checked(registered: None) -> None:
    model = ScriptedChatModel(replies=["x"])
    mr = MapReduceAgent(
        name="mr",
        sub_agents=[ReactAgent(name="m1", model=model, instruction="{missing}", output_key="r1")],
        reduce=list,
        output_key="out",
    )
    with pytest.raises(GraphflowConfigError, match="missing"):
        SequentialAgent(name="seq", sub_agents=[mr]).invoke("go")
    assert model.calls == 0


def test_unregistered_agent_subclass_is_config_error() -> None:
    agent = UnregisteredAgent(name="mystery")
    with pytest.raises(GraphflowConfigError) as err:
        agent.compile()
    assert "register_strategy" in str(err.value) and "UnregisteredAgent" in str(err.value)
    nested = SequentialAgent(name="seq", sub_agents=[UnregisteredAgent(name="inner")])
    with pytest.raises(GraphflowConfigError, match="register_strategy"):
        nested.invoke("go")


def test_register_strategy_validates_arguments() -> None:
    with pytest.raises(GraphflowConfigError):
        register_strategy(dict, MapReduceStrategy())  # type: ignore[arg-type]
    with pytest.raises(GraphflowConfigError):
        register_strategy(MapReduceAgent, object())  # type: ignore[arg-type]


def test_registering_first_in_a_fresh_process_keeps_builtins() -> None:
    # registering before any agent is built must not hide the built-in strategies
    code = textwrap.dedent(
        """
        from graphflow import Agent, FunctionAgent, SequentialAgent, register_strategy
        from graphflow.strategies.sequential import SequentialStrategy

        class Mine(Agent):
            sub_agents: list[Agent]

        register_strategy(Mine, SequentialStrategy())
        seq = SequentialAgent(name="s", sub_agents=[FunctionAgent(name="f", fn=lambda s: 7, output_key="o")])
        print(seq.invoke("x")["o"])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "7"
