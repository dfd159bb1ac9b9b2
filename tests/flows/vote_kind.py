"""A kind graphflow does not ship, built from outside the package: judges vote in rounds.

Every judge runs concurrently (one branch each); a tally takes the majority, or sends the judges
round again (up to `max_rounds`). The strategy answers what graphflow asks of any kind: how to
build it, where its result is (`verdict_key`, not `output_key`), what its judges' events carry
(their branch, the round as the iteration), how it is drawn and which details it shows, and how
its rounds are read back from a run's checkpoints. `team` is a tree for `graphflow` commands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph
from pydantic import Field

from graphflow import Agent, BuildContext, FlowGraphBuildingStrategy, ReactAgent, register_strategy
from graphflow.state import AGENT_STATUS
from graphflow.strategies import ChildRole, Ports, RunCounts
from graphflow.testing import ScriptedChatModel

ROUND = "gf_vote_round"


class VoteAgent(Agent):
    """Judges answer concurrently; the majority answer is the verdict."""

    sub_agents: list[Agent] = Field(min_length=1)
    verdict_key: str
    """Where the verdict goes."""
    max_rounds: int = 3
    """Rounds without a majority before the most common answer wins anyway."""


class VoteStrategy(FlowGraphBuildingStrategy):
    """Builds, describes and draws a `VoteAgent`."""

    def own_writes(self, agent: Any) -> set[str]:
        return {agent.verdict_key}

    def output_key(self, agent: Any) -> str | None:
        return agent.verdict_key

    def check_dataflow(
        self, agent: Any, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        ctx.builder.check_distinct_writes(agent.sub_agents, f"VoteAgent `{agent.name}` judges")
        after = available
        for judge in agent.sub_agents:  # every judge starts from the same state
            after = after | ctx.builder.check(judge, available, ctx.child(judge))
        return after | self.own_writes(agent)

    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph = StateGraph(ctx.schema({ROUND: int}))
        names = [j.name for j in agent.sub_agents]
        keys = [ctx.builder.result_key(j) for j in agent.sub_agents]

        def ballot(state: Mapping[str, Any]) -> dict[str, Any]:
            return {ROUND: 0, AGENT_STATUS: {agent.name: "running"}}

        def tally(state: Mapping[str, Any]) -> dict[str, Any]:
            votes = [str(state.get(k)) for k in keys]
            top = max(sorted(set(votes)), key=votes.count)
            round_ = int(state.get(ROUND) or 0)
            if votes.count(top) * 2 > len(votes) or round_ + 1 >= agent.max_rounds:
                return {agent.verdict_key: top, AGENT_STATUS: {agent.name: "completed"}}
            return {ROUND: round_ + 1}

        def again(state: Mapping[str, Any]) -> Any:
            done = (state.get(AGENT_STATUS) or {}).get(agent.name) == "completed"
            return END if done else names

        graph.add_node("ballot", ballot)
        graph.add_node("tally", tally)
        graph.add_edge(START, "ballot")
        for judge in agent.sub_agents:
            graph.add_node(judge.name, ctx.builder.child_node(judge, ctx.child(judge), owner=agent))
            graph.add_edge("ballot", judge.name)
        graph.add_edge(names, "tally")
        graph.add_conditional_edges("tally", again, [*names, END])
        return graph

    # -- what graphflow asks of the kind beyond building it -------------------------------------

    def details(self, agent: Any) -> dict[str, Any]:
        return {
            "rule": "majority",
            "max_rounds": agent.max_rounds,
            "verdict_key": agent.verdict_key,
        }

    def child_role(self, agent: Any, child: Any, task_input: Mapping[str, Any] | None) -> ChildRole:
        return ChildRole(branch=child.name, iteration=(task_input or {}).get(ROUND))

    def draw(self, agent: Any, ctx: Any) -> Ports:
        ctx.kind = "vote"
        ballot = ctx.node("ballot", "ballot", kind="fork")
        tally = ctx.node("tally", f"tally: majority → {agent.verdict_key}", kind="join")
        for judge in agent.sub_agents:
            ports = ctx.child(judge)
            ctx.edge(ballot, ports.entry)
            ctx.edge(ports.exit, tally, label="vote")
        ctx.edge(tally, ballot, kind="loop", label=f"no majority · ≤ {agent.max_rounds} rounds")
        return Ports(entry=ballot, exit=tally)

    def read_run(self, agent: Any, invocations: Sequence[Sequence[Any]]) -> RunCounts:
        rounds = 0
        for tuples in invocations:
            seen = [t.checkpoint["channel_values"].get(ROUND) for t in tuples]
            rounds += max((r for r in seen if r is not None), default=-1) + 1
        return RunCounts(loop_passes=rounds, outcome=f"verdict after {rounds} round(s)")


register_strategy(VoteAgent, VoteStrategy())


def judges(*scripts: list[str]) -> list[Agent]:
    """A ReAct judge per script of answers (one answer per round)."""
    return [
        ReactAgent(
            name=f"judge_{i}",
            model=ScriptedChatModel(replies=list(script)),
            instruction="Is {input} true?",
            output_key=f"vote_{i}",
        )
        for i, script in enumerate(scripts)
    ]


team = VoteAgent(
    name="panel",
    sub_agents=judges(["yes", "yes"], ["no", "yes"], ["maybe", "no"]),
    verdict_key="verdict",
    description="three judges, majority wins",
)

AYE = ScriptedChatModel(fn=lambda messages, n: "yes")
"""A judge's model that always agrees (module level: a spec refers to it by import path)."""
NAY = ScriptedChatModel(fn=lambda messages, n: "no")
"""A judge's model that never does."""

spec_team = VoteAgent(
    name="panel",
    sub_agents=[
        ReactAgent(name=f"judge_{i}", model=m, instruction="Is {input} true?", output_key=f"v{i}")
        for i, m in enumerate((AYE, NAY, AYE))
    ],
    verdict_key="verdict",
    max_rounds=2,
)
"""A tree whose parts all have import paths, for the spec round trip."""
