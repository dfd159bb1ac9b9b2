"""Overhead of graphflow against hand-written LangGraph doing the same work, as a ratio.

All run a three-step pipeline (researcher → writer → reviewer), each step one scripted model
call with no latency, on an in-memory checkpointer with durability="sync". Two baselines:

* `plain`: one LangGraph node per step calling the model — the least a hand-written graph does;
* `subgraphs`: LangGraph's prebuilt `create_react_agent` per step, each a subgraph called from
  a node that hands back only its final message — what hand-written LangGraph needs to give
  the same per-agent history, hand-off and resumability as graphflow.

The ratios, not the seconds, are the figures: the machine is shared and noisy.

    python scripts/bench_overhead.py [runs]
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from graphflow import ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel

STEPS = ("research", "draft", "review")


class State(TypedDict, total=False):
    """The hand-written baselines' state."""

    input: str
    messages: Annotated[list[AnyMessage], add_messages]
    research: str
    draft: str
    review: str


def _runner(builder: StateGraph) -> Any:
    graph = builder.compile(checkpointer=InMemorySaver())

    def run() -> Any:
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        return graph.invoke(
            {"input": "topic", "messages": [HumanMessage("topic")]}, config, durability="sync"
        )

    return run, graph


def scripted() -> ScriptedChatModel:
    """A scripted model that never runs out of replies."""
    return ScriptedChatModel(fn=lambda messages, n: f"reply {n}")


def graphflow_pipeline() -> Any:
    """The pipeline as graphflow agents; returns (run, graph)."""
    agents = [
        ReactAgent(
            name=f"{step}er", model=scripted(), instruction=f"{step} {{input}}", output_key=step
        )
        for step in STEPS
    ]
    pipeline = SequentialAgent(name="pipeline", sub_agents=agents)
    graph = pipeline.compile()
    return lambda: pipeline.invoke("topic", thread_id=str(uuid.uuid4())), graph


def langgraph_pipeline() -> Any:
    """The plain hand-written LangGraph baseline; returns (run, graph)."""
    builder = StateGraph(State)
    previous = START
    for step in STEPS:
        model = scripted()

        def node(
            state: State, step: str = step, model: ScriptedChatModel = model
        ) -> dict[str, Any]:
            reply = model.invoke([*state["messages"], HumanMessage(f"{step} {state['input']}")])
            return {"messages": [reply], step: reply.text}

        builder.add_node(f"{step}er", node)
        builder.add_edge(previous, f"{step}er")
        previous = f"{step}er"
    builder.add_edge(previous, END)
    return _runner(builder)


def subgraph_pipeline() -> Any:
    """Hand-written LangGraph with a prebuilt ReAct subgraph per step; returns (run, graph)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

    builder = StateGraph(State)
    previous = START
    for step in STEPS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agent = create_react_agent(scripted(), tools=[])

        def node(state: State, step: str = step, agent: Any = agent) -> dict[str, Any]:
            sent = [*state["messages"], HumanMessage(f"{step} {state['input']}")]
            final = agent.invoke({"messages": sent})["messages"][-1]
            return {"messages": [final], step: final.text}

        builder.add_node(f"{step}er", node)
        builder.add_edge(previous, f"{step}er")
        previous = f"{step}er"
    builder.add_edge(previous, END)
    return _runner(builder)


def measure(run: Any, runs: int) -> float:
    """Median seconds per run, after one warm-up run."""
    run()  # warm up
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(argv: list[str]) -> int:
    """Print the medians and the ratios."""
    runs = int(argv[1]) if len(argv) > 1 else 30
    gf = measure(graphflow_pipeline()[0], runs)
    plain = measure(langgraph_pipeline()[0], runs)
    sub = measure(subgraph_pipeline()[0], runs)
    print(
        f"runs={runs} medians: graphflow {gf * 1000:.1f} ms, langgraph plain {plain * 1000:.1f} ms, "
        f"langgraph subgraphs {sub * 1000:.1f} ms"
    )
    print(f"ratio graphflow/plain = {gf / plain:.2f}; graphflow/subgraphs = {gf / sub:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
