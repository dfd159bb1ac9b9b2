"""Run overlay from checkpoints: a run killed in its loop, a failed parallel branch, an interrupt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.types import interrupt

from graphflow import (
    FunctionAgent,
    LlmRoutingAgent,
    LoopAgent,
    ParallelAgent,
    ParallelBranchError,
    ReactAgent,
    SequentialAgent,
    ToolPolicy,
)
from graphflow.exceptions import RunNotFoundError
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.visualize import build_drawing, draw
from tests.visualize.viz_support import REPO

# The README team, with a writer whose model kills its process on the first call (os._exit:
# no exception, no cleanup, nothing more written) — a crash in the middle of the loop.
KILL_IN_LOOP = """
import os, sys
from examples import competitive_analysis as team
from graphflow.testing import ScriptedChatModel, tool_call

def die(messages, n):
    os._exit(17)

team.writer.model = ScriptedChatModel(fn=die)
team.pipeline.invoke("Huawei Pura X", thread_id="killed", checkpointer=sys.argv[1])
"""


def _runs(drawing: Any) -> dict[str, Any]:
    return {a.id: a.run for a in drawing.agents}


def test_run_killed_in_its_loop(tmp_path: Path) -> None:
    from examples.competitive_analysis import pipeline

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("OPENAI_API_KEY", None)
    out = subprocess.run(
        [sys.executable, "-c", KILL_IN_LOOP, url],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 17, out.stderr
    runs = _runs(build_drawing(pipeline, thread_id="killed", checkpointer=url))
    assert runs["researcher"].status == "done"
    assert (runs["researcher"].model_calls, runs["researcher"].tool_calls) == (2, 1)
    assert runs["refine"].status == "running" and runs["refine"].loop_passes == 1
    assert runs["writer"].status == "running" and runs["writer"].model_calls == 0
    assert runs["reviewer"].status == "not_reached"
    assert runs["competitive_analysis"].status == "running"
    # every format carries the overlay
    mermaid = str(draw(pipeline, "mermaid", thread_id="killed", checkpointer=url))
    assert "▶ running · passes 1" in mermaid and "○ not reached" in mermaid
    assert "✔ done · model calls 2 · tool calls 1" in mermaid
    assert "classDef not_reached" in mermaid and "style c_refine fill:#cfe2ff" in mermaid
    ascii_tree = str(draw(pipeline, "ascii", thread_id="killed", checkpointer=url))
    assert "reviewer · react → review_feedback  [○ not reached · model calls 0" in ascii_tree
    data = json.loads(str(draw(pipeline, "json", thread_id="killed", checkpointer=url)))
    assert data["options"]["thread_id"] == "killed"
    refine = next(a for a in data["agents"] if a["id"] == "refine")
    assert refine["run"]["status"] == "running" and refine["run"]["loop_passes"] == 1
    assert "#d4edda" in str(draw(pipeline, "dot", thread_id="killed", checkpointer=url))

    # the same thread after resuming to the end: all done, the loop's passes counted
    pipeline.resume("killed", checkpointer=url)
    done = _runs(build_drawing(pipeline, thread_id="killed", checkpointer=url))
    assert all(r.status == "done" for r in done.values()), done
    assert done["refine"].loop_passes == 2 and done["refine"].detail == "until"
    assert done["writer"].model_calls == 2 and done["reviewer"].model_calls == 2
    assert done["researcher"].model_calls == 2  # not counted twice after the resume


def _boom(messages: Any, n: int) -> str:
    raise ValueError("search backend is down")


def test_failed_parallel_branch(tmp_path: Path) -> None:
    par = ParallelAgent(
        name="fanout",
        sub_agents=[
            ReactAgent(name="ok_branch", model=ScriptedChatModel(replies=["one"]), output_key="o1"),
            ReactAgent(name="bad_branch", model=ScriptedChatModel(fn=_boom), output_key="o2"),
            FunctionAgent(name="fn_branch", fn=lambda s: "three", output_key="o3"),
        ],
    )
    team = SequentialAgent(
        name="team",
        sub_agents=[FunctionAgent(name="prep", fn=lambda s: 1, output_key="p"), par],
    )
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with pytest.raises(ParallelBranchError):
        team.invoke("go", thread_id="t", checkpointer=url)
    runs = _runs(build_drawing(team, thread_id="t", checkpointer=url))
    assert runs["bad_branch"].status == "failed"
    assert runs["bad_branch"].detail == "ValueError: search backend is down"
    assert runs["ok_branch"].status == "done" and runs["ok_branch"].model_calls == 1
    assert runs["fn_branch"].status == "done" and runs["fn_branch"].model_calls is None
    assert runs["prep"].status == "done"
    assert runs["fanout"].status == "failed" and runs["team"].status == "failed"
    html = str(draw(team, "html", thread_id="t", checkpointer=url))
    assert '"status": "failed"' in html and "search backend is down" in html


def _ask(state: Any) -> str:
    return str(interrupt({"question": "publish?"}))


def test_interrupted_agent_shows_what_is_pending(tmp_path: Path) -> None:
    team = SequentialAgent(
        name="team",
        sub_agents=[
            ReactAgent(name="drafter", model=ScriptedChatModel(replies=["d"]), output_key="d"),
            FunctionAgent(name="approve", fn=_ask, output_key="ok"),
            FunctionAgent(name="publish", fn=lambda s: "sent", output_key="sent"),
        ],
    )
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    team.invoke("go", thread_id="t", checkpointer=url)
    runs = _runs(build_drawing(team, thread_id="t", checkpointer=url))
    assert runs["approve"].status == "interrupted" and runs["approve"].detail == "publish?"
    assert runs["drafter"].status == "done" and runs["publish"].status == "not_reached"


@tool
def delete(path: str) -> str:
    """Delete a file."""
    raise PermissionError(f"{path} is read-only")


def test_a_tool_waiting_for_approval_says_which_call(tmp_path: Path) -> None:
    janitor = ReactAgent(
        name="janitor",
        model=ScriptedChatModel(replies=[tool_call("delete", {"path": "/a"}), "cleaned"]),
        tools=[delete],
        tool_policies={"delete": ToolPolicy(requires_approval=True)},
        output_key="answer",
    )
    team = SequentialAgent(
        name="team", sub_agents=[LoopAgent(name="sweep", max_iterations=2, sub_agents=[janitor])]
    )
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    team.invoke("go", thread_id="t", checkpointer=url)
    runs = _runs(build_drawing(team, thread_id="t", checkpointer=url))
    waiting = 'approve delete({"path": "/a"}) — PERMISSION_DENIED: PermissionError: /a is read-only'
    assert (runs["janitor"].status, runs["janitor"].detail) == ("interrupted", waiting)
    assert runs["janitor"].tool_calls == 1 and runs["sweep"].status == "interrupted"


def test_unknown_thread_is_a_clear_error(tmp_path: Path) -> None:
    from examples.competitive_analysis import pipeline

    with pytest.raises(RunNotFoundError, match="no run is stored under thread 'nope'"):
        draw(pipeline, thread_id="nope", checkpointer=f"sqlite:///{tmp_path / 'x.db'}")


def test_counts_are_the_agents_own_calls(tmp_path: Path) -> None:
    # the second agent is handed the first one's answer (include_contents="default"): that
    # message is in its conversation but is not a call it made
    team = SequentialAgent(
        name="team",
        sub_agents=[
            ReactAgent(name="first", model=ScriptedChatModel(replies=["one"]), output_key="a"),
            ReactAgent(name="second", model=ScriptedChatModel(replies=["two"]), output_key="b"),
        ],
    )
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    team.invoke("go", thread_id="t", checkpointer=url)
    runs = _runs(build_drawing(team, thread_id="t", checkpointer=url))
    assert (runs["first"].model_calls, runs["second"].model_calls) == (1, 1)


def test_a_router_shows_its_choice_and_its_model_calls(tmp_path: Path) -> None:
    def route(name: str) -> ReactAgent:
        return ReactAgent(
            name=name,
            description=f"{name} questions",
            model=ScriptedChatModel(replies=[name] * 3),
            output_key=f"{name}_answer",
        )

    # first pass: one invalid answer, then beta; second pass: alpha at once
    chooser = ScriptedChatModel(
        replies=['{"agent": "nobody"}', '{"agent": "beta"}', '{"agent": "alpha"}']
    )
    router = LlmRoutingAgent(
        name="router", model=chooser, sub_agents=[route("alpha"), route("beta")]
    )
    team = LoopAgent(name="again", max_iterations=2, sub_agents=[router])
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    team.invoke("go", thread_id="t", checkpointer=url)
    runs = _runs(build_drawing(team, thread_id="t", checkpointer=url))
    assert (runs["router"].status, runs["router"].detail) == ("done", "→ alpha")
    assert runs["router"].model_calls == 3 and runs["router"].tool_calls is None
    assert runs["alpha"].model_calls == 1 and runs["beta"].model_calls == 1
    assert "✔ done (→ alpha) · model calls 3" in str(
        draw(team, "ascii", thread_id="t", checkpointer=url)
    )


def test_a_root_loop_and_a_root_react_agent_have_their_counts(tmp_path: Path) -> None:
    from graphflow import FunctionAgent, LoopAgent, ReactAgent
    from graphflow.testing import ScriptedChatModel
    from graphflow.visualize import build_drawing

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    loop = LoopAgent(
        name="again",
        sub_agents=[FunctionAgent(name="step", fn=lambda s: 1, output_key="x")],
        max_iterations=3,
    )
    loop.invoke("go", thread_id="l1", checkpointer=db)
    run = build_drawing(loop, thread_id="l1", checkpointer=db).agent("again").run
    assert run is not None and (run.status, run.loop_passes) == ("done", 3)
    solo = ReactAgent(name="solo", model=ScriptedChatModel(replies=["hi"]), output_key="out")
    solo.invoke("go", thread_id="r1", checkpointer=db)
    run = build_drawing(solo, thread_id="r1", checkpointer=db).agent("solo").run
    assert run is not None and (run.model_calls, run.tool_calls) == (1, 0)
