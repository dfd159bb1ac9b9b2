"""Custom kinds draw themselves (a strategy `draw` method) or get the default; as_tool agents."""

from __future__ import annotations

from typing import Any

import pytest

from graphflow import Agent, FunctionAgent, ReactAgent, SequentialAgent
from graphflow.exceptions import GraphflowConfigError
from graphflow.runtime.as_tool import AgentTool
from graphflow.testing import ScriptedChatModel
from graphflow.visualize import DrawContext, DrawingStrategy, Ports, build_drawing, draw
from tests.visualize.viz_trees import PlainAgent, VoteAgent, six_level_tree


def _judges() -> list[Agent]:
    model = ScriptedChatModel(replies=["yes", "no", "yes"])
    return [
        ReactAgent(name=f"judge_{i}", model=model, instruction="Judge {input}", output_key=f"v{i}")
        for i in range(3)
    ]


def test_strategy_draw_method_is_used() -> None:
    from graphflow.strategies import strategy_for

    vote = VoteAgent(name="vote", sub_agents=_judges(), output_key="verdict")
    assert isinstance(strategy_for(vote), DrawingStrategy)
    drawing = build_drawing(SequentialAgent(name="panel", sub_agents=[vote]))
    box = drawing.agent("vote")
    assert box.kind == "vote" and box.details["rule"] == "majority"
    assert box.details["output_key"] == "verdict"
    assert (box.entry, box.exit) == ("vote.ballot", "vote.tally")
    edges = {(e.source, e.target, e.label) for e in drawing.edges}
    for i in range(3):
        assert ("vote.ballot", f"judge_{i}", "") in edges
        assert (f"judge_{i}", "vote.tally", "vote") in edges
    # the custom drawing renders everywhere, and the agent really runs as drawn
    for fmt in ("mermaid", "dot", "plantuml", "ascii"):
        assert "tally: majority" in str(draw(vote, fmt)) or fmt == "ascii"
    result = SequentialAgent(name="panel", sub_agents=[vote]).invoke("the claim")
    assert result["verdict"] == "yes"


def test_default_drawing_for_a_kind_without_draw() -> None:
    plain = PlainAgent(
        name="plain",
        sub_agents=[
            FunctionAgent(name="first", fn=lambda s: 1, output_key="a"),
            FunctionAgent(name="second", fn=lambda s: 2, output_key="b"),
        ],
        output_key="b",
    )
    drawing = build_drawing(plain)
    box = drawing.agent("plain")
    assert box.kind == "plain" and box.boxed and box.children == ("first", "second")
    assert [(e.source, e.target) for e in drawing.edges] == [("first", "second")]
    assert plain.invoke("x")["b"] == 2  # drawn as what its (sequential) strategy runs
    leaf = build_drawing(PlainAgent(name="solo"))
    assert leaf.agent("solo").kind == "plain" and not leaf.agent("solo").boxed
    assert leaf.node("solo").label == "solo\nplain"


class Unregistered(Agent):
    pass


def test_unregistered_kind_is_not_drawn_as_if_it_could_run() -> None:
    # drawing validates the tree as a run does: a kind without a strategy cannot run
    for fmt in ("mermaid", "json"):
        with pytest.raises(GraphflowConfigError, match=r"register_strategy\(Unregistered"):
            draw(Unregistered(name="mystery"), fmt)
    with pytest.raises(GraphflowConfigError, match="register_strategy"):
        build_drawing(SequentialAgent(name="seq", sub_agents=[Unregistered(name="inner")]))


class _BadStrategy:
    def draw(self, agent: Any, ctx: DrawContext) -> Ports:
        ctx.node("x", "one")
        ctx.node("x", "two")
        return Ports(entry="a", exit="a")


def test_duplicate_node_roles_are_a_clear_error() -> None:
    ctx_owner = VoteAgent(name="v", sub_agents=_judges())
    from graphflow.visualize._canvas import Canvas

    canvas = Canvas()
    canvas.agents.clear()
    with pytest.raises(GraphflowConfigError, match="distinct role"):
        ctx = DrawContext(canvas, ctx_owner, "v", "vote")
        _BadStrategy().draw(ctx_owner, ctx)


def test_as_tool_agent_is_recognised_and_drawn_beside_its_caller() -> None:
    tree = six_level_tree()
    specialist = next(a for a in tree.walk() if a.name == "specialist")
    tool = next(t for t in specialist.tool_objects() if t.name == "analyst")  # type: ignore[attr-defined]
    assert isinstance(tool, AgentTool) and tool.graphflow_agent.name == "analyst"
    assert "graphflow_agent" not in tool.model_dump()  # not serialised with the tool
    drawing = build_drawing(tree)
    analyst = drawing.agent("specialist.analyst")
    assert analyst.parent == drawing.agent("specialist").parent  # same box as the caller
    assert analyst.tool_of == "specialist" and analyst.kind == "react"
    # a flow used as a tool is drawn with its own sub-agents, ids prefixed by the caller
    inner = SequentialAgent(
        name="helpers",
        sub_agents=[FunctionAgent(name="lookup", fn=lambda s: "x", output_key="found")],
    )
    boss = ReactAgent(name="boss", model=ScriptedChatModel(replies=["ok"]), tools=[inner.as_tool()])
    team = SequentialAgent(name="team", sub_agents=[boss])
    drawing = build_drawing(team)
    assert drawing.agent("boss.helpers").boxed
    assert drawing.agent("boss.lookup").parent == "boss.helpers"
    tool_edges = [(e.source, e.target) for e in drawing.edges if e.kind == "tool"]
    assert tool_edges == [("boss", "boss.lookup")]  # into the flow's entry


class _EmptySequence:
    def draw(self, agent: Any, ctx: DrawContext) -> Ports:
        return ctx.sequence([])


def test_an_empty_sequence_is_a_clear_error() -> None:
    from graphflow.visualize._canvas import Canvas

    solo = PlainAgent(name="solo")
    with pytest.raises(GraphflowConfigError, match=r"`solo`: ctx.sequence\(\) got no agents"):
        _EmptySequence().draw(solo, DrawContext(Canvas(), solo, "solo", "plain"))


def test_details_leave_out_fields_the_kind_does_not_use() -> None:
    from graphflow import LlmRoutingAgent, ParallelAgent

    model = ScriptedChatModel(replies=["x"])
    react = ReactAgent(
        name="r",
        model=model,
        include_contents="none",
        instruction="Go",
        return_reasoning_contents=True,
    )
    step = FunctionAgent(name="f", fn=lambda s: 1, output_key="o")
    flow = ParallelAgent(name="p", sub_agents=[react, step])  # a flow takes neither field
    router = LlmRoutingAgent(
        name="route",
        model=model,
        sub_agents=[flow],
        include_contents="none",
        return_reasoning_contents=True,
    )
    drawing = build_drawing(router)
    assert drawing.agent("r").details["include_contents"] == "none"
    assert drawing.agent("r").details["return_reasoning_contents"] is True
    assert "include_contents" not in drawing.agent("p").details
    assert "return_reasoning_contents" not in drawing.agent("p").details
    assert drawing.agent("route").details["include_contents"] == "none"
    assert "return_reasoning_contents" not in drawing.agent("route").details
