"""`graphflow draw TARGET [-f FORMAT] [-o FILE] [--xray | --xray-depth N] [--dataflow] [--thread ID]`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphflow.cli import main
from tests.visualize.viz_support import REPO, program

TARGET = f"{REPO / 'examples' / 'competitive_analysis.py'}:pipeline"


def test_draw_to_svg_file(tmp_path: Path) -> None:
    program("dot")
    out = tmp_path / "team.svg"
    assert main(["draw", TARGET, "-o", str(out)]) == 0
    svg = out.read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "researcher" in svg
    import xml.dom.minidom

    xml.dom.minidom.parseString(svg)  # well-formed


def test_format_follows_the_suffix_and_flags(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "team.json"
    assert main(["draw", TARGET, "-o", str(out), "--dataflow", "--xray"]) == 0
    data = json.loads(out.read_text())
    assert data["options"]["dataflow"] is True and data["options"]["xray"] is True
    assert any(n["kind"] == "xray" for n in data["nodes"])
    assert main(["draw", TARGET, "-f", "ascii"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("competitive_analysis · sequential") and "└── 2. refine · loop" in text
    assert main(["draw", TARGET]) == 0
    assert capsys.readouterr().out.startswith("%% graphflow drawing of competitive_analysis")


def test_draw_a_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    assert main(["--checkpointer", db, "run", TARGET, "Huawei Pura X", "--thread-id", "r1"]) == 0
    capsys.readouterr()
    assert main(["--checkpointer", db, "draw", TARGET, "-f", "ascii", "--thread", "r1"]) == 0
    text = capsys.readouterr().out
    assert "refine · loop" in text and "✔ done (until) · passes 2" in text
    assert main(["draw", TARGET, "-f", "json", "--thread", "r1", "--checkpointer", db]) == 0
    assert '"status": "done"' in capsys.readouterr().out
    assert main(["--checkpointer", db, "draw", TARGET, "--thread", "missing"]) == 2
    assert "RunNotFoundError" in capsys.readouterr().err


def test_xray_depth_and_no_blank_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["draw", TARGET, "-f", "json", "--xray-depth", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["options"]["xray"] == 1
    owners = {n["owner"] for n in data["nodes"] if n["kind"] == "xray"}
    assert "researcher" in owners  # a level-1 agent is opened …
    assert not owners & {"writer", "reviewer"}  # … the agents inside the loop are not
    assert main(["draw", TARGET, "-f", "ascii"]) == 0
    text = capsys.readouterr().out
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert main(["draw", TARGET, "--xray-depth", "0"]) == 2
    assert "--xray-depth takes a whole number" in capsys.readouterr().err


BROKEN_TEAM = """
from graphflow import ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel

model = ScriptedChatModel(replies=["x"])
team = SequentialAgent(
    name="team",
    sub_agents=[ReactAgent(name="writer", model=model, instruction="Write {nowhere}")],
)
"""


def test_draw_refuses_a_tree_that_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # drawing validates the tree as `graphflow run` does: an unknown placeholder is an error
    (tmp_path / "broken_team.py").write_text(BROKEN_TEAM)
    target = f"{tmp_path / 'broken_team.py'}:team"
    assert main(["run", target, "go"]) == 2
    run_err = capsys.readouterr().err
    for fmt in ("mermaid", "json", "html"):
        assert main(["draw", target, "-f", fmt]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert "{nowhere}" in captured.err and "DataflowError" in captured.err
    assert "{nowhere}" in run_err
    assert main(["draw", target, "-o", str(tmp_path / "team.svg")]) == 2
    assert not (tmp_path / "team.svg").exists()
