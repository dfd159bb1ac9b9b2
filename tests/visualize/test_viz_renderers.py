"""Every text format through its real renderer: dot, plantuml, and Mermaid in headless Chromium."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from examples.competitive_analysis import pipeline
from graphflow.exceptions import RendererMissingError
from graphflow.visualize import draw, draw_to
from tests.visualize.viz_support import program
from tests.visualize.viz_trees import six_level_tree

VARIANTS = [{}, {"dataflow": True}, {"xray": True}]


def _trees() -> list[Any]:
    return [pipeline, six_level_tree()]


@pytest.mark.parametrize("options", VARIANTS, ids=["plain", "dataflow", "xray"])
def test_dot_accepts_the_dot(options: dict[str, Any]) -> None:
    dot = program("dot")
    for tree in _trees():
        source = str(draw(tree, "dot", **options))
        out = subprocess.run(
            [dot, "-Tsvg"], input=source, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert "<svg" in out.stdout and "Warning" not in out.stderr, out.stderr
        for agent in tree.walk():
            assert f">{agent.name}<" in out.stdout or f">{agent.name} " in out.stdout


def test_plantuml_accepts_the_plantuml() -> None:
    plantuml = program("plantuml")
    # one JVM for every diagram: -pipe renders each @startuml block in turn
    sources = [str(draw(t, "plantuml", **o)) for o in VARIANTS for t in _trees()]
    out = subprocess.run(
        [plantuml, "-tsvg", "-pipe"],
        input="".join(sources),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr
    assert out.stdout.count("<svg") == len(sources) and "Syntax Error" not in out.stdout
    for tree in _trees():
        for agent in tree.walk():
            assert agent.name in out.stdout


def test_plantuml_check_catches_errors() -> None:
    # the check above can fail: PlantUML rejects a broken diagram with a non-zero status
    plantuml = program("plantuml")
    broken = '@startuml\nrectangle "a" as x {\n x --> \n@enduml\n'
    out = subprocess.run([plantuml, "-tsvg", "-pipe"], input=broken, capture_output=True, text=True)
    assert out.returncode != 0


MERMAID_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<div id="out"></div></body></html>"""

RENDER = """async (text) => {
  mermaid.initialize({startOnLoad: false, securityLevel: "strict", flowchart: {htmlLabels: true}});
  try {
    await mermaid.parse(text);
    const {svg} = await mermaid.render("gfdiagram", text);
    return {ok: true, svg};
  } catch (e) {
    return {ok: false, error: String(e && e.message || e)};
  }
}"""


@pytest.fixture(scope="module")
def mermaid_page(browser: Any, mermaid_js: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    page_file = tmp_path_factory.mktemp("mermaid") / "mermaid.html"
    page_file.write_text(MERMAID_PAGE)
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_file.as_uri())
    page.add_script_tag(path=str(mermaid_js))
    yield page
    assert all(u.startswith("file:") for u in requests), requests  # mermaid came from disk
    page.close()


@pytest.mark.parametrize("options", VARIANTS, ids=["plain", "dataflow", "xray"])
def test_mermaid_renders_in_chromium(mermaid_page: Any, options: dict[str, Any]) -> None:
    for tree in _trees():
        text = str(draw(tree, "mermaid", **options))
        result = mermaid_page.evaluate(RENDER, text)
        assert result["ok"], result.get("error")
        for agent in tree.walk():
            assert agent.name in result["svg"]


def test_mermaid_check_catches_errors(mermaid_page: Any) -> None:
    result = mermaid_page.evaluate(RENDER, 'flowchart TB\n  a["x"] --> \n  subgraph')
    assert not result["ok"] and result["error"]


def test_svg_and_png_bytes(tmp_path: Path) -> None:
    program("dot")
    svg = draw(pipeline, "svg")
    assert isinstance(svg, bytes) and b"<svg" in svg and b"researcher" in svg
    png = draw(pipeline, "png")
    assert isinstance(png, bytes) and png.startswith(b"\x89PNG")
    written = draw_to(pipeline, tmp_path / "team.svg", dataflow=True)
    assert b"{research_data}" in written.read_bytes()
    assert json.loads((draw_to(pipeline, tmp_path / "team.json")).read_text())["root"] == (
        "competitive_analysis"
    )


def test_missing_dot_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RendererMissingError) as err:
        draw(pipeline, "svg")
    assert "apt-get install graphviz" in str(err.value) and "`dot`" in str(err.value)
    assert "digraph" in str(draw(pipeline, "dot"))  # DOT text needs no program


def test_format_errors() -> None:
    from graphflow.exceptions import GraphflowConfigError

    with pytest.raises(GraphflowConfigError, match="unknown format 'gif'"):
        draw(pipeline, "gif")
    with pytest.raises(GraphflowConfigError, match="suffix '.gif'"):
        draw_to(pipeline, "team.gif")


PLACE = """async ([text, ids]) => {
  mermaid.initialize({startOnLoad: false, securityLevel: "strict"});
  const {svg} = await mermaid.render("gfplaced", text);
  document.getElementById("out").innerHTML = svg;
  const top = id => document.querySelector(`[id*="flowchart-${id}-"]`).getBoundingClientRect().y;
  const loops = [...document.querySelectorAll("path.flowchart-link")]
    .filter(p => p.getAttribute("marker-start"))
    .map(p => getComputedStyle(p).markerEnd);
  return {tops: ids.map(top), loops};
}"""


def test_mermaid_loop_keeps_its_body_top_down(mermaid_page: Any) -> None:
    # the loop's body in declaration order, top down; its back edge has one arrowhead (at the
    # loop's start), though it is declared forward so that Mermaid does not turn the body over
    text = str(draw(six_level_tree(), "mermaid"))
    six = mermaid_page.evaluate(
        PLACE, [text, ["n_dispatch_decide", "n_vote_ballot", "n_vote_tally"]]
    )
    assert six["tops"] == sorted(six["tops"]) and six["loops"] == ["none"], six
    team = mermaid_page.evaluate(
        PLACE, [str(draw(pipeline, "mermaid")), ["n_writer", "n_reviewer"]]
    )
    assert team["tops"] == sorted(team["tops"]) and team["loops"] == ["none"], team


def test_function_agents_are_step_boxes() -> None:
    tree = six_level_tree()
    dot = str(draw(tree, "dot"))
    assert re.search(r'n_intake \[label="intake[^]]*style=filled\]', dot)
    assert re.search(r'n_editor \[label="editor[^]]*style="rounded,filled"\]', dot)
    mermaid = str(draw(tree, "mermaid"))
    assert 'n_intake["intake' in mermaid and 'n_editor("editor' in mermaid
    plantuml = str(draw(tree, "plantuml"))
    assert 'agent "intake' in plantuml and 'rectangle "editor' in plantuml


def test_agent_draw_methods(tmp_path: Path) -> None:
    # Agent.draw / Agent.draw_to take the same options as graphflow.visualize.draw
    assert "xray: __start__" in str(pipeline.draw("ascii", xray=True))
    out = pipeline.draw_to(tmp_path / "team.puml", dataflow=True)
    text = Path(out).read_text(encoding="utf-8")
    assert text.startswith("@startuml competitive_analysis") and "{research_data}" in text


def _boom(messages: Any, n: int) -> str:
    raise ValueError("search backend is down")


def test_run_overlays_pass_the_renderers(mermaid_page: Any, tmp_path: Path) -> None:
    from graphflow import FunctionAgent, LoopAgent, ParallelAgent, ReactAgent, SequentialAgent
    from graphflow.testing import ScriptedChatModel

    body = LoopAgent(
        name="body",
        max_iterations=2,
        sub_agents=[
            ReactAgent(name="good", model=ScriptedChatModel(replies=["a", "b"]), output_key="g"),
            ReactAgent(name="bad", model=ScriptedChatModel(fn=_boom), output_key="b"),
        ],
    )
    fan = ParallelAgent(
        name="fan", sub_agents=[body, FunctionAgent(name="fn", fn=lambda s: 1, output_key="f")]
    )
    team = SequentialAgent(name="team", sub_agents=[fan])
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with pytest.raises(Exception, match="search backend is down"):
        team.invoke("go", thread_id="t", checkpointer=url)
    overlay = {"thread_id": "t", "checkpointer": url}
    mermaid = str(draw(team, "mermaid", **overlay))
    # Mermaid leaves no room for a second title line: a box's run state follows its name
    assert 'subgraph c_body["body · loop · ✖ failed · passes 1"]' in mermaid
    assert "✖ failed (ValueError: search backend is down)" in mermaid  # on the failed card
    result = mermaid_page.evaluate(RENDER, mermaid)
    assert result["ok"], result.get("error")
    dot = subprocess.run(
        [program("dot"), "-Tsvg"],
        input=str(draw(team, "dot", **overlay)),
        capture_output=True,
        text=True,
    )
    assert dot.returncode == 0 and "search backend is down" in dot.stdout, dot.stderr
    puml = subprocess.run(
        [program("plantuml"), "-tsvg", "-pipe"],
        input=str(draw(team, "plantuml", **overlay)),
        capture_output=True,
        text=True,
    )
    assert puml.returncode == 0 and "search backend is down" in puml.stdout, puml.stderr


@pytest.mark.parametrize("format", ["dot", "svg", "png"])
def test_missing_graphviz_package_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, format: str
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "graphviz", None)  # `import graphviz` raises ImportError
    with pytest.raises(ImportError, match=r'pip install "graphflow-agents\[viz\]"'):
        draw(pipeline, format)
