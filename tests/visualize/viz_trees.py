"""Agent trees the visualize tests draw: the README team and a six-level tree of every kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from pydantic import Field

from graphflow import (
    Agent,
    AgentHook,
    BuildContext,
    FlowGraphBuildingStrategy,
    FunctionAgent,
    LlmRoutingAgent,
    LoopAgent,
    ModelHook,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
    exit_loop,
    register_strategy,
)
from graphflow.state import AGENT_STATUS
from graphflow.strategies.sequential import SequentialStrategy
from graphflow.testing import ScriptedChatModel
from graphflow.visualize import DrawContext, Ports

# every agent of the six-level tree, by depth (1 = root)
SIX_LEVELS: dict[int, list[str]] = {
    1: ["mission"],
    2: ["intake", "survey", "editor"],
    3: ["scout", "deepdive"],
    4: ["dispatch", "vote"],
    5: ["specialist", "generalist", "judge_a", "judge_b"],
    6: ["drafter", "tidy"],
}


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


class Audit(AgentHook):
    """Writes an audit note before the agent runs."""

    writes = ("audit_note",)

    def before_agent(self, state: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"audit_note": f"started {ctx.agent}"}


class Trim(ModelHook):
    """A model hook (listed on the agent, not drawn as a node)."""


class VoteAgent(Agent):
    """A custom kind: every judge answers, then the majority wins."""

    sub_agents: list[Agent] = Field(min_length=1)


class VoteStrategy(FlowGraphBuildingStrategy):
    """Builds a `VoteAgent` (judges concurrently, then a tally) and draws it."""

    def check_dataflow(
        self, agent: Any, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        after = available
        for child in agent.sub_agents:
            after = after | ctx.builder.check(child, available, ctx.child(child))
        return after | self.own_writes(agent)

    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph = StateGraph(ctx.schema())
        keys = [ctx.builder.result_key(c) for c in agent.sub_agents]

        def tally(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            votes = [str(state.get(k)) for k in keys]
            update: dict[str, Any] = {AGENT_STATUS: {agent.name: "completed"}}
            if agent.output_key:
                update[agent.output_key] = max(sorted(set(votes)), key=votes.count)
            return update

        graph.add_node("tally", tally)
        for child in agent.sub_agents:
            graph.add_node(child.name, ctx.builder.child_node(child, ctx.child(child)))
            graph.add_edge(START, child.name)
            graph.add_edge(child.name, "tally")
        graph.add_edge("tally", END)
        return graph

    def draw(self, agent: Any, ctx: DrawContext) -> Ports:
        ctx.kind = "vote"
        ctx.detail("rule", "majority")
        ballot = ctx.node("ballot", "ballot", kind="fork")
        count = ctx.node("tally", "tally: majority", kind="join")
        for judge in agent.sub_agents:
            ports = ctx.child(judge)
            ctx.edge(ballot, ports.entry)
            ctx.edge(ports.exit, count, label="vote")
        return Ports(entry=ballot, exit=count)


class PlainAgent(Agent):
    """A custom kind whose strategy has no `draw`: drawn by the default (a sequence)."""

    sub_agents: list[Agent] = Field(default_factory=list)


register_strategy(VoteAgent, VoteStrategy())
register_strategy(PlainAgent, SequentialStrategy())


def _brief(state: Mapping[str, Any]) -> str:
    return f"brief on {state.get('input')}"


def _tidy(state: Mapping[str, Any]) -> str:
    return str(state.get("draft", "")).strip()


def six_level_tree(model: Any = None) -> SequentialAgent:
    """mission(1) → survey(2) → deepdive(3) → dispatch(4) → generalist(5) → drafter(6)."""
    model = model or ScriptedChatModel(replies=["ok"] * 50)
    analyst = ReactAgent(
        name="analyst",
        description="Answers one analysis question.",
        model=model,
        instruction="Analyse the request.",
        output_key="analysis",
    )
    specialist = ReactAgent(
        name="specialist",
        description="Deep technical questions",
        model=model,
        tools=[exit_loop, analyst.as_tool()],
        instruction="Pass {loop_iteration}: dig into {brief}.",
        output_key="special_notes",
        hooks=[Trim()],
    )
    generalist = SequentialAgent(
        name="generalist",
        description="Everything else",
        sub_agents=[
            ReactAgent(
                name="drafter",
                model=model,
                instruction="Draft notes on {brief}. Earlier: {special_notes?}",
                output_key="draft",
            ),
            FunctionAgent(name="tidy", fn=_tidy, output_key="general_notes"),
        ],
    )
    dispatch = LlmRoutingAgent(
        name="dispatch",
        model=model,
        sub_agents=[specialist, generalist],
        fallback="generalist",
        instruction="Route {brief}.",
    )
    vote = VoteAgent(
        name="vote",
        sub_agents=[
            ReactAgent(name="judge_a", model=model, instruction="Judge {brief}", output_key="va"),
            ReactAgent(name="judge_b", model=model, instruction="Judge {brief}", output_key="vb"),
        ],
        output_key="verdict",
    )
    deepdive = LoopAgent(
        name="deepdive",
        sub_agents=[dispatch, vote],
        max_iterations=4,
        until=_verdict_given,
        output_key="dive",
    )
    survey = ParallelAgent(
        name="survey",
        sub_agents=[
            ReactAgent(
                name="scout",
                model=model,
                tools=[web_search],
                instruction="Scout {brief}",
                output_key="scouting",
            ),
            deepdive,
        ],
        merge="list",
        merge_output_key="findings",
        max_concurrency=2,
    )
    return SequentialAgent(
        name="mission",
        hooks=[Audit()],
        sub_agents=[
            FunctionAgent(name="intake", fn=_brief, output_key="brief"),
            survey,
            ReactAgent(
                name="editor",
                model=model,
                instruction="Edit {findings} ({audit_note?}).",
                output_key="report",
            ),
        ],
    )


def _verdict_given(state: Mapping[str, Any]) -> bool:
    return bool(state.get("verdict"))
