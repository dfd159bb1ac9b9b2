"""Every user string is escaped in every format: descriptions, instructions and names of
functions reach drawings as text, never as markup (DOT's HTML-like labels, the HTML viewer's
embedded JSON)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from graphflow import FunctionAgent, LlmRoutingAgent, ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel
from graphflow.visualize import draw
from tests.visualize.viz_support import program

NASTY = 'a <!-- b </script> c & d "e" \\n {f} <g>'


def _tree() -> SequentialAgent:
    model = ScriptedChatModel(replies=["x"])
    urgent = ReactAgent(name="urgent", model=model, description="<urgent>", output_key="u")
    calm = ReactAgent(name="calm", model=model, description=NASTY, output_key="c")
    router = LlmRoutingAgent(name="triage", model=model, sub_agents=[urgent, calm])
    writer = ReactAgent(
        name="writer",
        model=model,
        instruction="Write <!-- this </script><script>alert(1)</script> & that",
        system_prompt=NASTY,
        output_key="draft",
    )
    return SequentialAgent(
        name="team",
        sub_agents=[router, writer, FunctionAgent(name="tidy", fn=lambda s: 1, output_key="t")],
    )


def test_dot_quotes_a_label_that_looks_like_html() -> None:
    source = str(draw(_tree(), "dot"))
    assert 'label="<urgent>"' in source  # quoted: Graphviz reads it as text, not an HTML label
    assert "label=<urgent>" not in source
    assert "c &amp; d" in source  # Graphviz reads entities in labels: & is written as one


def test_svg_of_a_tree_with_markup_in_its_strings() -> None:
    program("dot")
    svg = draw(_tree(), "svg")
    assert isinstance(svg, bytes)
    text = svg.decode()
    assert "&lt;urgent&gt;" in text  # the description, shown as written
    import xml.dom.minidom

    xml.dom.minidom.parseString(svg)
    source = str(draw(_tree(), "dot"))
    out = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "Warning" not in out.stderr and "Error" not in out.stderr


def _embedded(page: str) -> str:
    match = re.search(
        r'<script type="application/json" id="graphflow-drawing">(.*?)</script>', page, re.S
    )
    assert match is not None
    return match.group(1)


def test_html_embeds_json_that_no_string_can_break() -> None:
    tree = _tree()
    page = str(draw(tree, "html"))
    data = _embedded(page)
    # nothing in the data can end the script element or switch the parser's state
    assert "<" not in data and ">" not in data
    from graphflow.visualize import build_drawing

    assert json.loads(data) == build_drawing(tree).to_dict()
    assert page.count("</script>") == 2  # the data's and the viewer's


def test_html_viewer_shows_a_tree_with_markup_in_its_strings(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "team.html"
    path.write_text(str(draw(_tree(), "html")), encoding="utf-8")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    agents = page.eval_on_selector_all(
        "#gf-viewport [data-agent]", "els => [...new Set(els.map(e => e.dataset.agent))]"
    )
    page.click('g.gf-node[data-agent="writer"]')
    panel = page.inner_text("#gf-panel")
    page.close()
    assert errors == [] and dialogs == []
    assert {"team", "triage", "urgent", "calm", "writer", "tidy"} <= set(agents)
    assert "<!-- this </script><script>alert(1)</script> & that" in panel


def test_plantuml_of_a_tree_with_markup_in_its_strings() -> None:
    plantuml = program("plantuml")
    source = str(draw(_tree(), "plantuml"))
    out = subprocess.run(
        [plantuml, "-tsvg", "-pipe"], input=source, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr
    assert "<svg" in out.stdout and "Syntax Error" not in out.stdout


@pytest.mark.parametrize("fmt", ["mermaid", "ascii", "json"])
def test_text_formats_keep_markup_out(fmt: str) -> None:
    text = str(draw(_tree(), fmt))
    if fmt == "mermaid":
        assert "<urgent>" not in text and "#lt;urgent#gt;" in text
    if fmt == "json":
        assert json.loads(text)["agents"][2]["description"] == "<urgent>"
