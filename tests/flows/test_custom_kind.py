"""A kind registered from outside the package gets what a built-in kind gets, with no edit to
graphflow: typed events with its branch and iteration, its drawing with details in every format,
counts in the run overlay of a stopped run, `graphflow show` outputs, and a spec round trip.

The kind (`vote_kind.VoteAgent`) votes in rounds: its judges are its branches, its rounds their
iteration, and its result goes to its own `verdict_key`.
"""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from graphflow import Agent, FunctionAgent, SequentialAgent, events
from graphflow.cli import main
from graphflow.visualize import build_drawing, draw
from tests.flows.vote_kind import VoteAgent, judges

VOTE_KIND = Path(__file__).parent / "vote_kind.py"


def _panel() -> VoteAgent:
    return VoteAgent(
        name="panel",
        sub_agents=judges(["yes", "yes"], ["no", "yes"], ["maybe", "no"]),
        verdict_key="verdict",
    )


def test_it_runs_round_after_round() -> None:
    result = _panel().invoke("the claim")
    assert result["verdict"] == "yes"
    assert [result["vote_0"], result["vote_1"], result["vote_2"]] == ["yes", "yes", "no"]


def test_its_events_carry_branch_and_round() -> None:
    seen = list(_panel().stream("the claim", events=(events.AgentStarted, events.AgentFinished)))
    started = [
        (e.agent_path[-1], e.branch, e.iteration)
        for e in seen
        if isinstance(e, events.AgentStarted) and e.agent_path[-1].startswith("judge")
    ]
    assert sorted(started) == [(f"judge_{i}", f"judge_{i}", r) for i in range(3) for r in (0, 1)]
    finished = [e for e in seen if isinstance(e, events.AgentFinished)]
    panel = finished[-1]
    assert panel.agent_path == ("panel",) and panel.branch is None
    assert (panel.output_key, panel.value) == ("verdict", "yes")  # its own result key
    judge = next(e for e in finished if e.agent_path[-1] == "judge_1" and e.iteration == 1)
    assert (judge.branch, judge.output_key, judge.value) == ("judge_1", "vote_1", "yes")


def test_it_is_drawn_with_its_details_in_every_format(tmp_path: Path) -> None:
    tree = SequentialAgent(
        name="review",
        sub_agents=[
            _panel(),
            FunctionAgent(name="publish", fn=lambda s: s["verdict"], output_key="out"),
        ],
    )
    drawing = build_drawing(tree)
    box = drawing.agent("panel")
    assert box.kind == "vote" and box.boxed
    assert box.details["rule"] == "majority" and box.details["max_rounds"] == 3
    assert box.details["verdict_key"] == "verdict"
    assert (box.entry, box.exit) == ("panel.ballot", "panel.tally")
    assert box.children == ("judge_0", "judge_1", "judge_2")
    loops = [(e.source, e.target) for e in drawing.edges if e.kind == "loop"]
    assert loops == [("panel.tally", "panel.ballot")]
    for fmt in ("mermaid", "dot", "plantuml"):
        text = str(draw(tree, fmt))
        assert "tally: majority → verdict" in text and "≤ 3 rounds" in text, fmt
    ascii_tree = str(draw(tree, "ascii"))
    assert "panel · vote" in ascii_tree and "judge_2" in ascii_tree
    data = json.loads(str(draw(tree, "json")))
    assert next(a for a in data["agents"] if a["id"] == "panel")["details"]["rule"] == "majority"
    page = str(draw(tree, "html"))
    assert "max_rounds" in page and "tally: majority" in page
    if shutil.which("dot"):
        svg = draw(tree, "svg")
        assert isinstance(svg, bytes) and b"tally: majority" in svg
        assert bytes(draw(tree, "png")).startswith(b"\x89PNG")


def test_the_overlay_counts_its_rounds_on_a_stopped_run(tmp_path: Path) -> None:
    calls = []

    def flaky(state: dict[str, Any]) -> str:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("judge fell asleep")
        return "maybe"

    panel = VoteAgent(
        name="panel",
        sub_agents=[
            *judges(["yes", "yes"], ["no", "yes"]),
            FunctionAgent(name="judge_2", fn=flaky, output_key="vote_2"),
        ],
        verdict_key="verdict",
    )
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with pytest.raises(Exception, match="fell asleep"):
        panel.invoke("the claim", thread_id="t1", checkpointer=db)
    runs = {a.id: a.run for a in build_drawing(panel, thread_id="t1", checkpointer=db).agents}
    assert runs["panel"] is not None and runs["panel"].status == "failed"
    assert runs["panel"].loop_passes == 2  # its own count, read by its strategy
    assert runs["judge_2"].status == "failed" and "fell asleep" in runs["judge_2"].detail
    assert runs["judge_0"].model_calls == 2 and runs["judge_0"].tool_calls == 0
    assert runs["judge_2"].model_calls is None  # a function makes no model calls
    text = str(draw(panel, "ascii", thread_id="t1", checkpointer=db))
    assert "passes 2" in text
    # the same run, once finished, shows what the kind says it did
    panel.resume("t1", checkpointer=db)
    done = build_drawing(panel, thread_id="t1", checkpointer=db).agent("panel").run
    assert done is not None and done.status == "done"
    assert done.detail == "verdict after 2 round(s)"


def test_graphflow_show_prints_its_result(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    target = f"{VOTE_KIND}:team"
    assert main(["--checkpointer", db, "run", target, "the claim", "--thread-id", "v1"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{") :])["verdict"] == "yes"  # its result among the outputs
    assert main(["--checkpointer", db, "show", target, "v1"]) == 0
    shown = capsys.readouterr().out
    line = next(x for x in shown.splitlines() if x.strip().startswith("panel "))
    assert "verdict = yes" in line
    assert main(["--checkpointer", db, "draw", target, "-f", "ascii"]) == 0
    assert "panel · vote" in capsys.readouterr().out


def test_its_spec_round_trips() -> None:
    # the module as imported now (`graphflow run file.py:team` above imports it anew)
    kind = importlib.import_module("vote_kind")
    spec = kind.spec_team.to_spec()
    text = yaml.safe_dump(spec, sort_keys=False)
    assert "vote_kind:VoteAgent" in text and "verdict_key: verdict" in text
    assert "max_rounds: 2" in text and "vote_kind:AYE" in text
    back = Agent.from_spec(yaml.safe_load(text))
    assert isinstance(back, kind.VoteAgent) and back.to_spec() == spec
    assert back.invoke("the claim")["verdict"] == "yes"
