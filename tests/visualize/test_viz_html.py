"""The HTML viewer in headless Chromium: drawn, one DOM node per agent, details on click, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphflow.visualize import draw
from tests.visualize.viz_trees import SIX_LEVELS, six_level_tree

SIX_NAMES = [name for names in SIX_LEVELS.values() for name in names]


@pytest.fixture
def viewer(browser: Any, tmp_path: Path) -> Any:
    path = tmp_path / "six.html"
    path.write_text(str(draw(six_level_tree(), "html", dataflow=True)), encoding="utf-8")
    page = browser.new_page()
    page.set_viewport_size({"width": 1400, "height": 1000})
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.requests, page.errors = requests, errors  # type: ignore[attr-defined]
    yield page
    page.close()


def test_page_draws_every_agent(viewer: Any, tmp_path: Path) -> None:
    assert viewer.errors == []
    agents = viewer.eval_on_selector_all(
        "#gf-viewport [data-agent]", "els => [...new Set(els.map(e => e.dataset.agent))]"
    )
    assert set(agents) == {*SIX_NAMES, "specialist.analyst"}
    # drawn bottom up: frames, edges, cards (a card hides an edge passing behind it), labels
    layers = viewer.eval_on_selector_all("#gf-viewport > g", "gs => gs.map(g => g.id)")
    assert layers == ["gf-frames", "gf-edges", "gf-boxes", "gf-edge-labels"]
    # every agent's name is drawn as text inside its node
    texts = viewer.eval_on_selector_all("#gf-viewport text", "els => els.map(e => e.textContent)")
    for name in SIX_NAMES:
        assert any(name in t for t in texts), name
    shot = tmp_path / "shot.png"
    viewer.screenshot(path=str(shot))
    colours = viewer.evaluate(
        """async (src) => {
            const img = new Image(); img.src = src; await img.decode();
            const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
            const g = c.getContext('2d'); g.drawImage(img, 0, 0);
            const d = g.getImageData(0, 0, c.width, c.height).data, seen = new Set();
            let dark = 0;
            for (let i = 0; i < d.length; i += 16) {
                seen.add((d[i] >> 4) << 8 | (d[i + 1] >> 4) << 4 | (d[i + 2] >> 4));
                if (d[i] + d[i + 1] + d[i + 2] < 200) dark++;
            }
            return {distinct: seen.size, dark};
        }""",
        "data:image/png;base64," + __import__("base64").b64encode(shot.read_bytes()).decode(),
    )
    assert colours["distinct"] > 20 and colours["dark"] > 500  # not a blank page


def test_click_shows_details(viewer: Any) -> None:
    viewer.click('#gf-viewport g.gf-node[data-agent="specialist"]')
    panel = viewer.inner_text("#gf-panel")
    assert "specialist" in panel and "react" in panel
    assert "Pass {loop_iteration}: dig into {brief}." in panel  # the instruction template
    assert "exit_loop" in panel and "analyst" in panel  # tools
    assert "special_notes" in panel and "Trim (model)" in panel  # output_key, hooks
    viewer.click('#gf-viewport g.gf-box[data-agent="deepdive"] > .gf-title')
    panel = viewer.inner_text("#gf-panel")
    assert "loop" in panel and "max_iterations" in panel and "_verdict_given" in panel
    viewer.click('#gf-viewport g.gf-box[data-agent="dispatch"] > .gf-title')
    panel = viewer.inner_text("#gf-panel")
    assert "fallback" in panel and "generalist" in panel and "Deep technical questions" in panel


def test_collapse_hides_nested_agents(viewer: Any) -> None:
    def drawn() -> set[str]:
        return set(
            viewer.eval_on_selector_all(
                "#gf-viewport [data-agent]", "els => els.map(e => e.dataset.agent)"
            )
        )

    assert "drafter" in drawn()
    viewer.click('#gf-viewport g.gf-box[data-agent="deepdive"] > rect.gf-toggle')
    after = drawn()
    assert "deepdive" in after and "drafter" not in after and "dispatch" not in after
    assert "scout" in after
    viewer.click('#gf-viewport g.gf-box[data-agent="deepdive"] > rect.gf-toggle')
    assert "drafter" in drawn()


def test_pan_and_zoom(viewer: Any) -> None:
    def transform() -> str:
        return str(viewer.get_attribute("#gf-viewport", "transform"))

    before = transform()
    viewer.mouse.move(300, 400)
    viewer.mouse.wheel(0, -400)
    zoomed = transform()
    assert zoomed != before
    viewer.mouse.move(100, 900)
    viewer.mouse.down()
    viewer.mouse.move(200, 950)
    viewer.mouse.up()
    assert transform() != zoomed


def test_no_network(viewer: Any) -> None:
    viewer.click('#gf-viewport g.gf-node[data-agent="editor"]')
    assert viewer.requests == [viewer.url]  # only the file itself
    html = str(draw(six_level_tree(), "html"))
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html and "default-src 'none'" in html


def _rects(page: Any, selector: str) -> list[dict[str, float]]:
    return list(
        page.eval_on_selector_all(
            selector,
            "els => els.map(e => { const r = e.getBoundingClientRect();"
            " return {x: r.x, y: r.y, r: r.right, b: r.bottom}; })",
        )
    )


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x"] < b["r"] and b["x"] < a["r"] and a["y"] < b["b"] and b["y"] < a["b"]


@pytest.mark.parametrize("tree", ["team", "six"])
def test_fit_shows_all_and_loop_labels_stay_clear(browser: Any, tmp_path: Path, tree: str) -> None:
    from examples.competitive_analysis import pipeline

    path = tmp_path / f"{tree}.html"
    path.write_text(str(draw(pipeline if tree == "team" else six_level_tree(), "html")))
    page = browser.new_page()
    page.set_viewport_size({"width": 1200, "height": 900})
    page.goto(path.as_uri())
    canvas = _rects(page, "#gf-canvas")[0]
    drawn = _rects(page, "#gf-viewport text") + _rects(page, "#gf-viewport .gf-node")
    inside = [
        r
        for r in drawn
        if canvas["x"] <= r["x"] and r["r"] <= canvas["r"] and canvas["y"] <= r["y"]
        if r["b"] <= canvas["b"]
    ]
    assert len(inside) == len(drawn)  # "fit" shows every label, edge labels included
    loop_labels = _rects(page, 'text.gf-edge-label[data-edge="loop"]')
    tool_labels = _rects(page, 'text.gf-edge-label[data-edge="tool"]')
    assert loop_labels and (tool_labels or tree == "team")
    cards = _rects(page, "#gf-viewport .gf-node")
    assert not [c for c in cards for t in loop_labels + tool_labels if _overlap(c, t)]
    if tree == "six":  # an agent used as a tool sits on its caller's row
        caller, tool = (
            _rects(page, f'g.gf-node[data-agent="{a}"] > rect')[0]
            for a in ("specialist", "specialist.analyst")
        )
        assert abs((caller["y"] + caller["b"]) - (tool["y"] + tool["b"])) < 2
        assert tool["x"] > caller["r"]
    page.close()


def test_function_agents_are_step_boxes(viewer: Any) -> None:
    rx = viewer.eval_on_selector_all(
        "#gf-viewport g.gf-agent > rect",
        "els => Object.fromEntries(els.map(e => [e.parentNode.dataset.agent,"
        " getComputedStyle(e).rx]))",
    )
    assert rx["intake"] in ("0", "0px") and rx["tidy"] in ("0", "0px")
    assert rx["editor"] not in ("0", "0px", "auto")


def test_branches_side_by_side_in_declared_order(browser: Any, tmp_path: Path) -> None:
    from graphflow import FunctionAgent, ParallelAgent, SequentialAgent

    def step(name: str) -> FunctionAgent:
        return FunctionAgent(name=name, fn=lambda s: 1, output_key=f"{name}_out")

    flow = SequentialAgent(name="flow", sub_agents=[step("first"), step("second")])
    par = ParallelAgent(name="par", sub_agents=[flow, step("solo"), step("last")])
    path = tmp_path / "par.html"
    path.write_text(str(draw(par, "html")))
    page = browser.new_page()
    page.goto(path.as_uri())
    flow_box, solo, last = (
        _rects(page, selector)[0]
        for selector in (
            'rect.gf-frame[data-agent="flow"]',
            'g.gf-node[data-agent="solo"] > rect',
            'g.gf-node[data-agent="last"] > rect',
        )
    )
    assert flow_box["r"] < solo["x"] < last["x"]
    page.close()


def test_a_one_agent_loop_has_its_back_edge(browser: Any, tmp_path: Path) -> None:
    from graphflow import LoopAgent, ReactAgent, SequentialAgent, exit_loop
    from graphflow.testing import ScriptedChatModel

    worker = ReactAgent(
        name="worker", model=ScriptedChatModel(replies=["x"]), tools=[exit_loop], output_key="out"
    )
    team = SequentialAgent(name="team", sub_agents=[LoopAgent(name="grind", sub_agents=[worker])])
    path = tmp_path / "grind.html"
    path.write_text(str(draw(team, "html")))
    page = browser.new_page()
    page.goto(path.as_uri())
    assert page.locator('path[data-edge="loop"]').count() == 1  # from the card back to itself
    labels = page.eval_on_selector_all(
        'text.gf-edge-label[data-edge="loop"]', "els => els.map(e => e.textContent)"
    )
    assert labels == ["repeat · exit_loop", "or ≤ 3 passes"]
    page.close()
