"""Drawing formats are one registry: a format registered from outside is drawn by `draw`, written
by `draw_to` (its suffix), offered by `graphflow draw -f` and listed in its help."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphflow import FunctionAgent, SequentialAgent
from graphflow.cli import main
from graphflow.exceptions import GraphflowConfigError
from graphflow.visualize import (
    Drawing,
    draw,
    draw_to,
    format_for_path,
    register_format,
    registered_formats,
)
from graphflow.visualize import formats as formats_module
from tests.visualize.viz_support import REPO

TARGET = f"{REPO / 'examples' / 'competitive_analysis.py'}:pipeline"


def _edges(drawing: Drawing) -> str:
    return "".join(f"{e.source} -> {e.target}\n" for e in drawing.edges)


@pytest.fixture
def edge_list() -> Iterator[None]:
    register_format("t-edges", _edges, suffixes=(".tedges",), description="one edge a line")
    yield
    formats_module._FORMATS.pop("t-edges", None)


def _team() -> SequentialAgent:
    return SequentialAgent(
        name="team",
        sub_agents=[
            FunctionAgent(name="a", fn=lambda s: 1, output_key="x"),
            FunctionAgent(name="b", fn=lambda s: 2, output_key="y"),
        ],
    )


def test_a_registered_format_is_drawn_and_written(edge_list: None, tmp_path: Path) -> None:
    assert draw(_team(), "t-edges") == "a -> b\n"
    assert _team().draw("t-edges") == "a -> b\n"  # through the agent's facade too
    assert format_for_path("out.TEDGES") == "t-edges"
    written = draw_to(_team(), tmp_path / "team.tedges")
    assert written.read_text() == "a -> b\n"
    assert _team().draw_to(tmp_path / "t2.tedges").read_text() == "a -> b\n"


def test_a_registered_format_is_offered_by_the_cli(
    edge_list: None, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["draw", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "t-edges" in help_text and "mermaid (default)" in help_text and "png" in help_text
    assert main(["draw", TARGET, "-f", "t-edges"]) == 0
    assert "researcher -> " in capsys.readouterr().out
    out = tmp_path / "team.tedges"
    assert main(["draw", TARGET, "-o", str(out)]) == 0
    assert "researcher -> " in out.read_text()


def test_the_builtin_formats_are_in_the_registry() -> None:
    assert list(registered_formats())[:8] == [
        "mermaid",
        "dot",
        "plantuml",
        "ascii",
        "json",
        "html",
        "svg",
        "png",
    ]
    assert registered_formats()["svg"].binary and not registered_formats()["dot"].binary
    assert registered_formats()["dot"].suffixes == (".dot", ".gv")
    from graphflow import visualize

    assert visualize.SUFFIXES[".puml"] == "plantuml" and "png" in visualize.FORMATS


def test_bad_registrations_are_clear_errors(edge_list: None) -> None:
    with pytest.raises(GraphflowConfigError, match="already registered"):
        register_format("t-edges", _edges)
    with pytest.raises(GraphflowConfigError, match=r"\.svg.*svg"):
        register_format("other", _edges, suffixes=(".svg",))
    with pytest.raises(GraphflowConfigError, match="callable"):
        register_format("nothing", "not a function")  # type: ignore[arg-type]
    with pytest.raises(GraphflowConfigError, match="starts with a dot"):
        register_format("nodot", _edges, suffixes=("txt",))
    with pytest.raises(GraphflowConfigError, match="unknown format 'nope'.*edges"):
        draw(_team(), "nope")
    assert "nodot" not in registered_formats() and "other" not in registered_formats()


def test_replace_takes_a_suffix_over(edge_list: None) -> None:
    register_format("t-edges2", _edges, suffixes=(".tedges",), replace=True)
    try:
        assert format_for_path("x.tedges") == "t-edges2"
        assert registered_formats()["t-edges"].suffixes == ()
    finally:
        formats_module._FORMATS.pop("t-edges2", None)
