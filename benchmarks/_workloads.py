"""The workloads of the overhead benchmark, each built three ways on the same scripted model.

* `graphflow` — the workload as graphflow agents;
* `plain` — hand-written LangGraph with one plain async node per step (the least a graph does);
* `subgraphs` — hand-written LangGraph with one compiled subgraph per agent, invoked from a node
  that hands back only the agent's final message: the floor of graphflow's design (own history per
  agent, resumable sub-agents).

Every builder returns a `Workload`: a run coroutine factory and how many model calls one run makes.

Two fake models (`MODEL`, set by `use_model`): `scripted`, `graphflow.testing.ScriptedChatModel`
through LangChain's `BaseChatModel.ainvoke` (callbacks, run managers: ~3.7 M instructions a call,
what any LangChain chat model costs), and `bare`, the same script answering `ainvoke` directly, so
a run costs only the framework around the call (how peers without LangChain models are compared).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from graphflow import LoopAgent, ParallelAgent, ReactAgent, SequentialAgent, output_contains
from graphflow.testing import ScriptedChatModel, tool_call

__all__ = ("MODEL", "WORKLOADS", "BareChatModel", "Workload", "big_tree", "use_model")


@dataclass(frozen=True, kw_only=True)
class Workload:
    """One way of running one workload."""

    arun: Callable[[], Awaitable[Any]]
    model_calls: int


class State(TypedDict, total=False):
    """The hand-written baselines' state."""

    input: str
    messages: Annotated[list[AnyMessage], add_messages]
    research: str
    draft: str
    review: str
    passes: int


class BareChatModel(ScriptedChatModel):
    """`ScriptedChatModel` answering `ainvoke` itself: no callbacks, no run manager."""

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> AIMessage:  # type: ignore[override]
        """The next scripted reply, as an `AIMessage` with an id."""
        if self.latency:
            await asyncio.sleep(self.latency)
        reply = self._to_message(self._next(list(input), kwargs.get("tools")))
        if reply.id is None:
            reply.id = f"run-{uuid.uuid4()}"
        return reply

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """The model itself (the script decides on tool calls)."""
        return self


MODEL = "scripted"
"""Which fake model the builders use: `scripted` or `bare` (see the module docstring)."""


def use_model(kind: str) -> None:
    """Make the builders use the `scripted` or the `bare` fake model."""
    global MODEL
    if kind not in ("scripted", "bare"):
        raise ValueError(f"unknown model kind {kind!r}: scripted or bare")
    MODEL = kind


def _model(latency: float = 0.0, fn: Any = None) -> ScriptedChatModel:
    cls = BareChatModel if MODEL == "bare" else ScriptedChatModel
    return cls(fn=fn or (lambda messages, n: f"reply {n}"), latency=latency)


def _input() -> dict[str, Any]:
    return {"input": "topic", "messages": [HumanMessage("topic")]}


def _lg(builder: StateGraph, checkpointer: Any, calls: int) -> Workload:
    graph = builder.compile(checkpointer=checkpointer)
    durability = "sync" if checkpointer is not None else None

    def cfg() -> dict[str, Any]:
        return {"configurable": {"thread_id": str(uuid.uuid4())}, "recursion_limit": 10_000}

    return Workload(
        arun=lambda: graph.ainvoke(_input(), cfg(), durability=durability),
        model_calls=calls,
    )


def _gf(agent: Any, checkpointer: Any, calls: int) -> Workload:
    cp = checkpointer if checkpointer is not None else False
    agent.compile(cp)
    return Workload(
        arun=lambda: agent.ainvoke("topic", thread_id=str(uuid.uuid4()), checkpointer=cp),
        model_calls=calls,
    )


# -- 1. a 3-agent sequential pipeline, one model call each --------------------------------------

STEPS = ("research", "draft", "review")


def pipeline_graphflow(checkpointer: Any) -> Workload:
    agents = [
        ReactAgent(name=f"{s}er", model=_model(), instruction=f"{s} {{input}}", output_key=s)
        for s in STEPS
    ]
    return _gf(SequentialAgent(name="pipeline", sub_agents=agents), checkpointer, 3)


def pipeline_plain(checkpointer: Any) -> Workload:
    builder = StateGraph(State)
    previous = START
    for step in STEPS:
        model = _model()

        async def node(state: State, step: str = step, model: Any = model) -> dict[str, Any]:
            reply = await model.ainvoke(
                [*state["messages"], HumanMessage(f"{step} {state['input']}")]
            )
            return {"messages": [reply], step: reply.text}

        builder.add_node(f"{step}er", node)
        builder.add_edge(previous, f"{step}er")
        previous = f"{step}er"
    builder.add_edge(previous, END)
    return _lg(builder, checkpointer, 3)


class AgentState(TypedDict, total=False):
    """A sub-agent's own state in the subgraph baselines."""

    messages: Annotated[list[AnyMessage], add_messages]


def _agent_subgraph(model: Any, tools: list[Any] | None = None) -> Any:
    """A compiled ReAct subgraph: model ⇄ tools, async nodes and router."""
    bound = model.bind_tools(tools) if tools else model
    by_name = {t.name: t for t in tools or []}
    sub = StateGraph(AgentState)

    async def call_model(state: AgentState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    async def call_tools(state: AgentState) -> dict[str, Any]:
        last = state["messages"][-1]
        out = []
        for tc in last.tool_calls:
            out.append(await by_name[tc["name"]].ainvoke({**tc, "type": "tool_call"}))
        return {"messages": out}

    async def route(state: AgentState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    sub.add_node("model", call_model)
    sub.add_edge(START, "model")
    if tools:
        sub.add_node("tools", call_tools)
        sub.add_conditional_edges("model", route, ["tools", END])
        sub.add_edge("tools", "model")
    else:
        sub.add_edge("model", END)
    return sub.compile(checkpointer=None)


def pipeline_subgraphs(checkpointer: Any) -> Workload:
    builder = StateGraph(State)
    previous = START
    for step in STEPS:
        agent = _agent_subgraph(_model())

        async def node(state: State, step: str = step, agent: Any = agent) -> dict[str, Any]:
            sent = [*state["messages"], HumanMessage(f"{step} {state['input']}")]
            final = (await agent.ainvoke({"messages": sent}))["messages"][-1]
            return {"messages": [final], step: final.text}

        builder.add_node(f"{step}er", node)
        builder.add_edge(previous, f"{step}er")
        previous = f"{step}er"
    builder.add_edge(previous, END)
    return _lg(builder, checkpointer, 3)


# -- 2. one ReAct agent making 50 tool calls ----------------------------------------------------

TOOL_CALLS = 50


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"result for {query}"


def _react_script(messages: list[Any], n: int) -> Any:
    # call numbers run on across runs: each run is TOOL_CALLS tool turns, then an answer
    return tool_call("lookup", {"query": f"q{n}"}) if n % (TOOL_CALLS + 1) < TOOL_CALLS else "done"


def react_graphflow(checkpointer: Any) -> Workload:
    agent = ReactAgent(
        name="worker",
        model=_model(fn=_react_script),
        tools=[lookup],
        instruction="Work on {input}.",
        output_key="answer",
        max_iterations=TOOL_CALLS + 5,
    )
    return _gf(agent, checkpointer, TOOL_CALLS + 1)


def _react_nodes(builder: StateGraph, model: Any) -> None:
    bound = model.bind_tools([lookup])

    async def call_model(state: State) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    async def call_tools(state: State) -> dict[str, Any]:
        last = state["messages"][-1]
        out: list[ToolMessage] = []
        for tc in last.tool_calls:
            out.append(await lookup.ainvoke({**tc, "type": "tool_call"}))
        return {"messages": out}

    async def route(state: State) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder.add_node("model", call_model)
    builder.add_node("tools", call_tools)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, ["tools", END])
    builder.add_edge("tools", "model")


def react_plain(checkpointer: Any) -> Workload:
    builder = StateGraph(State)
    _react_nodes(builder, _model(fn=_react_script))
    return _lg(builder, checkpointer, TOOL_CALLS + 1)


def react_subgraphs(checkpointer: Any) -> Workload:
    # a root ReAct agent: the floor is the same graph (there is no parent to hand back to)
    return react_plain(checkpointer)


# -- 3. a writer/reviewer loop, 3 passes --------------------------------------------------------

PASSES = 3


def _reviewer(messages: list[Any], n: int) -> str:
    return "APPROVE" if n % PASSES == PASSES - 1 else f"more detail please ({n})"


def loop_graphflow(checkpointer: Any) -> Workload:
    writer = ReactAgent(
        name="writer", model=_model(), instruction="Write about {input}.", output_key="draft"
    )
    reviewer = ReactAgent(
        name="reviewer",
        model=_model(fn=_reviewer),
        instruction="Review {draft}.",
        output_key="review",
    )
    loop = LoopAgent(
        name="refine",
        sub_agents=[writer, reviewer],
        max_iterations=PASSES + 2,
        until=output_contains("review", "APPROVE"),
    )
    return _gf(loop, checkpointer, 2 * PASSES)


def _loop_builder(make_step: Callable[[str, Any], Any]) -> StateGraph:
    builder = StateGraph(State)
    builder.add_node("writer", make_step("draft", _model()))
    builder.add_node("reviewer", make_step("review", _model(fn=_reviewer)))
    builder.add_edge(START, "writer")
    builder.add_edge("writer", "reviewer")

    async def again(state: State) -> str:
        done = "APPROVE" in state.get("review", "") or state.get("passes", 0) >= PASSES + 2
        return END if done else "writer"

    builder.add_conditional_edges("reviewer", again, ["writer", END])
    return builder


def loop_plain(checkpointer: Any) -> Workload:
    def make_step(key: str, model: Any) -> Any:
        async def node(state: State) -> dict[str, Any]:
            reply = await model.ainvoke([*state["messages"], HumanMessage(f"{key} please")])
            update: dict[str, Any] = {"messages": [reply], key: reply.text}
            if key == "review":
                update["passes"] = state.get("passes", 0) + 1
            return update

        return node

    return _lg(_loop_builder(make_step), checkpointer, 2 * PASSES)


def loop_subgraphs(checkpointer: Any) -> Workload:
    def make_step(key: str, model: Any) -> Any:
        agent = _agent_subgraph(model)

        async def node(state: State) -> dict[str, Any]:
            sent = [*state["messages"], HumanMessage(f"{key} please")]
            final = (await agent.ainvoke({"messages": sent}))["messages"][-1]
            update: dict[str, Any] = {"messages": [final], key: final.text}
            if key == "review":
                update["passes"] = state.get("passes", 0) + 1
            return update

        return node

    return _lg(_loop_builder(make_step), checkpointer, 2 * PASSES)


# -- 4. 8 parallel branches, 0.2 s model latency each -------------------------------------------

BRANCHES = 8
LATENCY = 0.2


def parallel_graphflow(checkpointer: Any) -> Workload:
    branches = [
        ReactAgent(
            name=f"b{i}",
            model=_model(latency=LATENCY),
            instruction=f"angle {i} on {{input}}",
            output_key=f"out{i}",
        )
        for i in range(BRANCHES)
    ]
    return _gf(ParallelAgent(name="fan", sub_agents=branches), checkpointer, BRANCHES)


def parallel_plain(checkpointer: Any) -> Workload:
    builder = StateGraph(State)
    names = []
    for i in range(BRANCHES):
        model = _model(latency=LATENCY)

        async def node(state: State, model: Any = model, i: int = i) -> dict[str, Any]:
            reply = await model.ainvoke([*state["messages"], HumanMessage(f"angle {i}")])
            return {"messages": [reply]}

        builder.add_node(f"b{i}", node)
        builder.add_edge(START, f"b{i}")
        names.append(f"b{i}")

    async def join(state: State) -> dict[str, Any]:
        return {}

    builder.add_node("join", join)
    builder.add_edge(names, "join")
    builder.add_edge("join", END)
    return _lg(builder, checkpointer, BRANCHES)


def parallel_subgraphs(checkpointer: Any) -> Workload:
    builder = StateGraph(State)
    names = []
    for i in range(BRANCHES):
        agent = _agent_subgraph(_model(latency=LATENCY))

        async def node(state: State, agent: Any = agent, i: int = i) -> dict[str, Any]:
            sent = [*state["messages"], HumanMessage(f"angle {i}")]
            final = (await agent.ainvoke({"messages": sent}))["messages"][-1]
            return {"messages": [final]}

        builder.add_node(f"b{i}", node)
        builder.add_edge(START, f"b{i}")
        names.append(f"b{i}")

    async def join(state: State) -> dict[str, Any]:
        return {}

    builder.add_node("join", join)
    builder.add_edge(names, "join")
    builder.add_edge("join", END)
    return _lg(builder, checkpointer, BRANCHES)


WORKLOADS: dict[str, dict[str, Callable[[Any], Workload]]] = {
    "pipeline": {
        "graphflow": pipeline_graphflow,
        "plain": pipeline_plain,
        "subgraphs": pipeline_subgraphs,
    },
    "react": {"graphflow": react_graphflow, "plain": react_plain, "subgraphs": react_subgraphs},
    "loop": {"graphflow": loop_graphflow, "plain": loop_plain, "subgraphs": loop_subgraphs},
    "parallel": {
        "graphflow": parallel_graphflow,
        "plain": parallel_plain,
        "subgraphs": parallel_subgraphs,
    },
}


# -- compile time: 10 flows × 10 ReAct agents ---------------------------------------------------


def big_tree(flows: int = 10, per_flow: int = 10) -> SequentialAgent:
    """A root Sequential of `flows` Sequentials of `per_flow` ReAct agents (with a tool each)."""
    groups = []
    for f in range(flows):
        agents = [
            ReactAgent(
                name=f"a{f}_{i}",
                model=_model(),
                tools=[lookup],
                instruction=f"Step {f}.{i} on {{input}}",
                output_key=f"k{f}_{i}",
            )
            for i in range(per_flow)
        ]
        groups.append(SequentialAgent(name=f"flow{f}", sub_agents=agents))
    return SequentialAgent(name="root", sub_agents=groups)
