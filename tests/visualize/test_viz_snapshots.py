"""Snapshots of every text format, for the README team and a six-level tree of every kind."""

from __future__ import annotations

import json
import re

import pytest

from examples.competitive_analysis import pipeline
from graphflow import FunctionAgent
from graphflow.visualize import build_drawing, draw
from tests.visualize.viz_support import check_snapshot
from tests.visualize.viz_trees import SIX_LEVELS, six_level_tree

TEXT_FORMATS = {"mermaid": "mmd", "dot": "dot", "plantuml": "puml", "ascii": "txt", "json": "json"}
TEAM_NAMES = ["competitive_analysis", "researcher", "refine", "writer", "reviewer"]
SIX_NAMES = [name for names in SIX_LEVELS.values() for name in names]


@pytest.mark.parametrize("format", TEXT_FORMATS)
def test_team_snapshot(format: str) -> None:
    text = draw(pipeline, format)
    assert isinstance(text, str)
    check_snapshot(f"competitive_analysis.{TEXT_FORMATS[format]}", text)
    for name in TEAM_NAMES:
        assert name in text
    assert not re.search(r"\bgf_", text)


@pytest.mark.parametrize("format", TEXT_FORMATS)
def test_six_level_snapshot(format: str) -> None:
    text = draw(six_level_tree(), format)
    assert isinstance(text, str)
    check_snapshot(f"six_levels.{TEXT_FORMATS[format]}", text)
    for name in SIX_NAMES:
        assert re.search(rf"\b{name}\b", text), name
    assert not re.search(r"\bgf_", text)
    assert "analyst" in text  # the as_tool agent, beside its caller


@pytest.mark.parametrize("format", ["mermaid", "dot", "plantuml", "ascii"])
def test_dataflow_and_xray_snapshots(format: str) -> None:
    tree = six_level_tree()
    check_snapshot(
        f"six_levels.dataflow.{TEXT_FORMATS[format]}", str(draw(tree, format, dataflow=True))
    )
    xray = str(draw(tree, format, xray=True))
    check_snapshot(f"six_levels.xray.{TEXT_FORMATS[format]}", xray)
    assert re.search(r"\bgf_", xray)  # LangGraph's own nodes appear only with xray


def test_model_depths_and_nesting() -> None:
    drawing = build_drawing(six_level_tree())
    depths = {a.id: a.depth for a in drawing.agents}
    for depth, names in SIX_LEVELS.items():
        for name in names:
            assert depths[name] == depth, name
    assert drawing.agent("drafter").parent == "generalist"
    assert drawing.agent("generalist").parent == "dispatch"
    tool = drawing.agent("specialist.analyst")
    assert tool.tool_of == "specialist" and tool.parent == "dispatch" and tool.depth == 5
    assert any(
        e.kind == "tool" and e.source == "specialist" and e.target == "specialist.analyst"
        for e in drawing.edges
    )
    # sequential: arrows in order; parallel: fork -> branches -> join; loop: a back edge
    edges = {(e.source, e.target, e.kind) for e in drawing.edges}
    assert ("mission.before.Audit", "intake", "flow") in edges
    assert ("intake", "survey.fork", "flow") in edges
    assert ("survey.fork", "scout", "flow") in edges and ("scout", "survey.join", "flow") in edges
    assert ("survey.join", "editor", "flow") in edges
    assert ("editor", "mission.after.Audit", "flow") in edges
    assert ("drafter", "tidy", "flow") in edges
    loop = [e for e in drawing.edges if e.kind == "loop"]
    assert [(e.source, e.target) for e in loop] == [("vote.tally", "dispatch.decide")]
    assert "until=_verdict_given" in loop[0].label and "exit_loop" in loop[0].label
    assert "≤ 4 passes" in loop[0].label
    routes = [(e.target, e.label, e.style) for e in drawing.edges if e.source == "dispatch.decide"]
    assert ("specialist", "Deep technical questions", "solid") in routes
    assert ("drafter", "Everything else", "solid") in routes
    assert ("drafter", "fallback", "dashed") in routes
    assert drawing.node("survey.join").label == "join · merge=list → findings"
    assert drawing.node("survey.fork").label == "fork · max_concurrency=2"


def test_json_is_the_model() -> None:
    data = json.loads(str(draw(six_level_tree(), "json")))
    assert data["schema"] == "graphflow.drawing" and data["version"] == 1
    assert data["root"] == "mission"
    assert {a["id"] for a in data["agents"]} == {*SIX_NAMES, "specialist.analyst"}
    specialist = next(a for a in data["agents"] if a["id"] == "specialist")
    assert specialist["details"]["tools"] == ["exit_loop", "analyst"]
    assert specialist["details"]["hooks"] == [{"name": "Trim", "kinds": ["model"], "writes": []}]
    assert specialist["details"]["reads"] == [
        {"key": "loop_iteration", "optional": False},
        {"key": "brief", "optional": False},
    ]
    dispatch = next(a for a in data["agents"] if a["id"] == "dispatch")
    assert dispatch["details"]["fallback"] == "generalist"
    assert dispatch["details"]["routes"][0] == {
        "name": "specialist",
        "description": "Deep technical questions",
    }
    ids = {n["id"] for n in data["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in data["edges"])


def test_xray_keeps_every_level_six_deep() -> None:
    tree = six_level_tree()
    drawing = build_drawing(tree, xray=True)
    owners = {n.owner for n in drawing.nodes if n.kind == "xray"}
    # every agent with a graph of its own, at every depth, has its LangGraph nodes (a
    # FunctionAgent without hooks runs inline: it is one node of its parent's graph)
    inline = {a.name for a in tree.walk() if isinstance(a, FunctionAgent) and not a.hooks}
    assert inline and owners == set(SIX_NAMES) - inline
    drafter = {n.label for n in drawing.nodes if n.kind == "xray" and n.owner == "drafter"}
    # what LangGraph reports for the depth-6 agent, grouped by its prefix
    lg_ids = set(tree.compile(False).graph.get_graph(xray=True).nodes)
    expected = {
        i.split(":")[-1]
        for i in lg_ids
        if i.startswith("survey:deepdive:dispatch:generalist:drafter:")
    }
    assert drafter == expected and expected
    assert all(drawing.agent(a).boxed for a in owners)
    shallow = build_drawing(tree, xray=1)
    assert {n.owner for n in shallow.nodes if n.kind == "xray"} < set(SIX_NAMES)


def test_dataflow_edges() -> None:
    drawing = build_drawing(pipeline, dataflow=True)
    data = {(e.source, e.target, e.label, e.style) for e in drawing.edges if e.kind == "data"}
    assert data == {
        ("input", "researcher", "{input}", "dashed"),
        ("input", "writer", "{input}", "dashed"),
        ("researcher", "writer", "{research_data}", "dashed"),
        ("reviewer", "writer", "{review_feedback?}", "dotted"),
        ("writer", "reviewer", "{draft_article}", "dashed"),
    }
    # Mermaid has one broken line for both: the optional read's is dotted by its link style
    mermaid = str(draw(pipeline, "mermaid", dataflow=True)).splitlines()
    links = [line for line in mermaid if "-.->" in line or "<==>" in line or "-->" in line]
    optional = next(i for i, line in enumerate(links) if "{review_feedback?}" in line)
    assert f"  linkStyle {optional} stroke-dasharray:1 4" in mermaid
    six = build_drawing(six_level_tree(), dataflow=True)
    sources = {e.source for e in six.edges if e.kind == "data" and "audit_note" in e.label}
    assert sources == {"mission.before.Audit"}  # a hook's declared writes come from the hook
    assert any(
        e.source == "survey.join" and e.target == "editor" for e in six.edges if e.kind == "data"
    )
