"""Parallel fan-out: 64 branches whose model call takes 0.2 s each, against hand-written LangGraph.

graphflow builds a `ParallelAgent` of 64 ReAct branches; the baseline is a hand-written
`StateGraph` with 64 nodes from START joined by one node, each node calling the same scripted
model. Both run through `ainvoke` (async nodes: all branches wait at once) and through sync
`invoke` (LangGraph runs one superstep's tasks on its thread pool). It prints wall seconds
(medians), the wall time over one branch's latency (1.0 = perfect overlap; 64 = serial) and
graphflow over the baseline.

    python benchmarks/fanout.py             # 64 branches × 0.2 s, 5 runs
    python benchmarks/fanout.py --quick     # 16 branches, 1 run (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from graphflow import ParallelAgent, ReactAgent
from graphflow.testing import ScriptedChatModel

LATENCY = 0.2


class State(TypedDict, total=False):
    """The baseline's state."""

    input: str
    messages: Annotated[list[AnyMessage], add_messages]


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(fn=lambda messages, n: f"angle {n}", latency=LATENCY)


def graphflow_fanout(branches: int) -> Any:
    """A ParallelAgent of `branches` ReAct agents."""
    agents = [
        ReactAgent(
            name=f"b{i}", model=_model(), instruction=f"angle {i} on {{input}}", output_key=f"o{i}"
        )
        for i in range(branches)
    ]
    return ParallelAgent(name="fan", sub_agents=agents).compile(checkpointer=False).graph


def langgraph_fanout(branches: int, *, sync: bool) -> Any:
    """The same fan-out, hand-written: one node per branch calling its model, then a join."""
    builder = StateGraph(State)
    names = []
    for i in range(branches):
        model = _model()
        if sync:

            def node(state: State, model: Any = model, i: int = i) -> dict[str, Any]:
                return {"messages": [model.invoke([HumanMessage(f"angle {i}")])]}

        else:

            async def node(state: State, model: Any = model, i: int = i) -> dict[str, Any]:  # type: ignore[misc]
                return {"messages": [await model.ainvoke([HumanMessage(f"angle {i}")])]}

        builder.add_node(f"b{i}", node)
        builder.add_edge(START, f"b{i}")
        names.append(f"b{i}")
    builder.add_node("join", lambda state: {})
    builder.add_edge(names, "join")
    builder.add_edge("join", END)
    return builder.compile()


def _input() -> dict[str, Any]:
    return {"input": "Pura X", "messages": [HumanMessage("Pura X")]}


def _wall(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(branches: int, runs: int) -> dict[str, float]:
    """Median wall seconds of each variant."""
    gf = graphflow_fanout(branches)
    lg_async = langgraph_fanout(branches, sync=False)
    lg_sync = langgraph_fanout(branches, sync=True)
    variants: dict[str, Callable[[], Any]] = {
        "graphflow async": lambda: asyncio.run(gf.ainvoke(_input())),
        "langgraph async": lambda: asyncio.run(lg_async.ainvoke(_input())),
        "graphflow sync": lambda: gf.invoke(_input()),
        "langgraph sync": lambda: lg_sync.invoke(_input()),
    }
    for run in variants.values():  # warm up
        run()
    samples: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(runs):
        for name, run in variants.items():  # interleaved: noise hits every variant alike
            samples[name].append(_wall(run))
    return {k: statistics.median(v) for k, v in samples.items()}


def main(argv: list[str] | None = None) -> int:
    """Run the fan-out and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 branches, 1 run (CI)")
    parser.add_argument("--branches", type=int, default=None)
    parser.add_argument("--runs", type=int, default=None)
    args = parser.parse_args(argv)
    branches = args.branches or (16 if args.quick else 64)
    runs = args.runs or (1 if args.quick else 5)
    r = measure(branches, runs)
    print(f"fan-out: {branches} branches × {LATENCY} s model latency, median of {runs} runs")
    print(f"{'variant':<17}{'wall s':>8}{'wall/latency':>14}{'gf/langgraph':>14}")
    for mode in ("async", "sync"):
        for who in ("graphflow", "langgraph"):
            wall = r[f"{who} {mode}"]
            ratio = wall / r[f"langgraph {mode}"]
            print(f"{who + ' ' + mode:<17}{wall:>8.2f}{wall / LATENCY:>14.2f}{ratio:>14.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
