"""The `graphflow` command: run, draw, runs, resume."""

from __future__ import annotations

import json
import textwrap

import pytest

from graphflow.cli import main

APP = textwrap.dedent(
    """
    from graphflow import FunctionAgent, SequentialAgent

    shout = FunctionAgent(name="shout", fn=lambda s: s["input"].upper(), output_key="loud")
    mark = FunctionAgent(name="mark", fn=lambda s: s["loud"] + "!", output_key="final")
    app = SequentialAgent(name="app", sub_agents=[shout, mark])
    not_an_agent = 42
    """
)


@pytest.fixture
def app_file(tmp_path):
    path = tmp_path / "cli_app.py"
    path.write_text(APP)
    return path


def test_run_draw_runs_resume(app_file, tmp_path, capsys) -> None:
    db = f"sqlite:///{tmp_path}/runs.db"
    target = f"{app_file}:app"
    assert main(["--checkpointer", db, "run", target, "hello", "--thread-id", "t1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["final"] == "HELLO!"
    assert "gf_exit_loop" not in out

    assert main(["draw", target]) == 0
    assert "shout" in capsys.readouterr().out

    assert main(["--checkpointer", db, "runs", target]) == 0
    listed = capsys.readouterr().out
    assert "t1" in listed and "done" in listed

    assert main(["--checkpointer", db, "resume", target, "t1"]) == 0
    assert json.loads(capsys.readouterr().out)["final"] == "HELLO!"


def test_json_input_and_bad_targets(app_file, capsys) -> None:
    assert main(["--checkpointer", "memory:", "run", f"{app_file}:app", '{"input": "hi"}']) == 0
    assert json.loads(capsys.readouterr().out)["final"] == "HI!"
    with pytest.raises(SystemExit, match="not a graphflow Agent"):
        main(["draw", f"{app_file}:not_an_agent"])
    with pytest.raises(SystemExit, match="should look like"):
        main(["draw", "no-colon"])
