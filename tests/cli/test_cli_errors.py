"""Issue 9, point 10 (and the CLI half of point 6): every bad command line is one clear line on
stderr with the documented exit code (0 done, 1 failed, 2 bad usage/target/input/thread,
3 interrupted) and no traceback; a failed run prints the `graphflow resume` command.

Runs `python -m graphflow.cli` as a subprocess in a temporary folder holding a small app.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.models.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]

APP = textwrap.dedent(
    """
    import os
    from pathlib import Path

    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool

    from graphflow import FunctionAgent, HumanApproval, ReactAgent, SequentialAgent
    from graphflow.testing import ScriptedChatModel, tool_call

    HERE = Path(__file__).parent


    def prep(state):
        with open(HERE / "prep.calls", "a") as f:
            f.write("x")
        return state["input"].upper()


    team = SequentialAgent(name="team", sub_agents=[FunctionAgent(name="prep", fn=prep, output_key="loud")])


    @tool
    def pay(amount: int) -> str:
        \"\"\"Pay an amount.\"\"\"
        return f"paid {amount}"


    def _payer(messages, n):
        if any(isinstance(m, ToolMessage) for m in messages):
            return "done: " + messages[-1].text
        return tool_call("pay", {"amount": 5})


    billing = SequentialAgent(name="billing", sub_agents=[ReactAgent(
        name="payer", model=ScriptedChatModel(fn=_payer), tools=[pay],
        hooks=[HumanApproval(["pay"])], output_key="receipt",
    )])

    remote = SequentialAgent(name="remote", sub_agents=[
        FunctionAgent(name="prep", fn=prep, output_key="loud"),
        ReactAgent(name="writer", model="openai:gpt-4o-mini", instruction="Write {loud}.",
                   model_settings={"base_url": os.environ.get("GF_MODEL_URL", "http://127.0.0.1:9/v1"),
                                   "api_key": "sk-test", "max_retries": 0},
                   output_key="text"),
    ])
    """
)


@pytest.fixture
def app(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


def graphflow(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHFLOW_", "OPENAI_"))}
    environ.update(env, PYTHONPATH=str(ROOT), NO_PROXY="127.0.0.1,localhost")
    return subprocess.run(
        [sys.executable, "-m", "graphflow.cli", *args],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def outputs(result: subprocess.CompletedProcess) -> dict:
    """The final state a finished run prints last (a JSON object after the progress lines)."""
    out = result.stdout
    return json.loads(out if out.startswith("{") else out[out.index("\n{") + 1 :])


def one_clear_line(result: subprocess.CompletedProcess, code: int, says: str) -> str:
    """The error line of a command that failed with `code`, after checking its shape."""
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if line.startswith("graphflow: ")]
    errors = [line for line in lines if not line.startswith("graphflow: thread ")]
    assert errors and len(errors) <= 2, result.stderr
    assert says in errors[0], result.stderr
    return errors[0]


def test_a_target_without_that_attribute(app: Path) -> None:
    line = one_clear_line(graphflow(app, "run", "app.py:missing", "x"), 2, "has no attribute")
    assert line == (
        "graphflow: app.py has no attribute 'missing'; its agents: billing, remote, team"
    )


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("no_such_module_x:team", "cannot import module 'no_such_module_x'"),
        ("nofile.py:team", "no file nofile.py"),
        ("app.py", "should look like app.py:team"),
    ],
)
def test_a_target_that_cannot_be_loaded(app: Path, target: str, says: str) -> None:
    one_clear_line(graphflow(app, "run", target, "x"), 2, says)


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("{oops", "the input looks like JSON but is not valid"),
        ('{"inptu": "x"}', "InputError: input key(s) ['inptu'] are not state keys"),
        ("{}", "the input dict is empty"),
        ("[]", "the input list is empty"),
        ("[1, 2]", "cannot run an agent on list"),
    ],
)
def test_bad_input(app: Path, given: str, says: str) -> None:
    one_clear_line(graphflow(app, "run", "app.py:team", given), 2, says)
    assert not (app / "prep.calls").exists()  # nothing ran


def test_bad_answers_to_a_paused_run(app: Path) -> None:
    paused = graphflow(app, "run", "app.py:billing", "pay the bill", "--thread-id", "p1")
    assert paused.returncode == 3, paused.stderr
    assert "graphflow approve p1" in paused.stderr
    one_clear_line(
        graphflow(app, "resume", "p1", "--answer", "{not json"), 2, "--answer is not valid JSON"
    )
    wrong = graphflow(app, "resume", "p1", "--answer", '{"decision": "perhaps"}')
    line = one_clear_line(wrong, 2, "perhaps")
    assert "approve" in line  # names what an answer may say
    done = graphflow(app, "resume", "p1", "--answer", '{"decision": "approve"}')
    assert done.returncode == 0, done.stderr
    assert outputs(done)["receipt"] == "done: paid 5"


def test_runs_on_a_missing_database_creates_nothing(app: Path) -> None:
    for args in (["runs"], ["runs", "app.py:team"], ["--checkpointer", "sqlite:///x/y.db", "runs"]):
        one_clear_line(graphflow(app, *args), 2, "no run store at")
    assert not (app / "runs.db").exists() and not (app / "x").exists()


def test_resume_and_show_of_unknown_threads(app: Path) -> None:
    assert graphflow(app, "run", "app.py:team", "hi", "--thread-id", "t1").returncode == 0
    one_clear_line(graphflow(app, "resume", "ghost"), 2, "no run is stored under thread 'ghost'")
    one_clear_line(graphflow(app, "show", "ghost"), 2, "'ghost'")
    one_clear_line(graphflow(app, "resume", "t1"), 2, "nothing to resume")
    assert (app / "prep.calls").read_text() == "x"


@pytest.mark.parametrize(
    "args",
    [
        ["--checkpointer", "sqlite:///other.db", "run", "app.py:team", "hi", "--thread-id", "o1"],
        ["run", "app.py:team", "hi", "--thread-id", "o1", "--checkpointer", "sqlite:///other.db"],
        ["run", "--checkpointer", "sqlite:///other.db", "app.py:team", "hi", "--thread-id", "o1"],
    ],
    ids=["before", "after", "between"],
)
def test_options_before_or_after_the_subcommand(app: Path, args: list[str]) -> None:
    done = graphflow(app, *args)
    assert done.returncode == 0, done.stderr
    assert (app / "other.db").exists() and not (app / "runs.db").exists()
    listed = graphflow(app, "runs", "--checkpointer", "sqlite:///other.db")
    assert listed.returncode == 0 and listed.stdout.splitlines()[1].split()[:3] == [
        "o1",
        "team",
        "done",
    ]
    assert "graphflow resume o1 --checkpointer sqlite:///other.db" in done.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback_wherever_it_is_given(app: Path, where: str) -> None:
    args = ["run", "app.py:team", "{oops"]
    args = ["--debug", *args] if where == "before" else [*args, "--debug"]
    result = graphflow(app, *args)
    assert result.returncode == 2
    quiet = graphflow(app, "run", "app.py:team", '{"inptu": 1}')
    assert "Traceback" not in quiet.stderr and "--debug shows the traceback" in quiet.stderr
    loud = graphflow(
        app,
        *(["--debug"] if where == "before" else []),
        "run",
        "app.py:team",
        '{"inptu": 1}',
        *(["--debug"] if where == "after" else []),
    )
    assert loud.returncode == 2 and "Traceback" in loud.stderr


def test_a_model_error_is_one_line_with_the_resume_command_and_the_run_resumes(app: Path) -> None:
    server = OpenAIServer("openai_strict").start()
    url = server.base_url
    server.stop()  # the endpoint is down (its port stays reserved for the restart)
    try:
        failed = graphflow(app, "run", "app.py:remote", "hi", "--thread-id", "m1", GF_MODEL_URL=url)
        line = one_clear_line(failed, 1, "ModelConnectionError: Agent `writer`: cannot reach")
        assert f"at {url}" in line
        last = failed.stderr.strip().splitlines()[-1]
        assert last.startswith("graphflow: the run can continue: ")
        assert last.endswith("graphflow resume m1")  # the console script's path: no venv on PATH
        server.start()
        resumed = graphflow(app, "resume", "m1", GF_MODEL_URL=url)
        assert resumed.returncode == 0, resumed.stderr
        out = outputs(resumed)
        assert out["text"].startswith("gpt-4o-mini answers: Write HI.")
        assert (app / "prep.calls").read_text() == "x"  # not run again
        assert len(server.answered) == 1
    finally:
        server.stop()


def test_runs_lists_a_damaged_thread_as_unreadable_and_the_others_as_usual(app: Path) -> None:
    import sqlite3

    for thread in ("t1", "t2"):
        assert graphflow(app, "run", "app.py:team", "hi", "--thread-id", thread).returncode == 0
    with sqlite3.connect(app / "runs.db") as conn:
        conn.execute("UPDATE checkpoints SET checkpoint = X'c1c1c1' WHERE thread_id = 't1'")
    listed = graphflow(app, "runs")
    assert listed.returncode == 0, listed.stderr  # (one damaged thread failed the whole listing)
    rows = {line.split()[0]: line.split()[1:3] for line in listed.stdout.splitlines()[1:]}
    assert rows["t1"][1] == "unreadable" and rows["t2"] == ["team", "done"]
    resumed = graphflow(app, "resume", "app.py:team", "t1")
    line = one_clear_line(resumed, 1, "a checkpoint of thread 't1' cannot be loaded")
    assert "new thread id" in line
    assert "the run can continue" not in resumed.stderr  # there is nothing to continue


def test_a_store_that_never_opened_offers_no_resume(app: Path) -> None:
    failed = graphflow(
        app, "run", "app.py:team", "hi", "--checkpointer", "postgresql://u@127.0.0.1:9/db"
    )
    one_clear_line(failed, 1, "PostgreSQL cannot be reached")
    # nothing was stored to continue: no thread is announced, no resume command offered
    assert "resume" not in failed.stderr.replace("GRAPHFLOW_PG_CONNECT_TIMEOUT", "")
    assert not (app / "prep.calls").exists()


@pytest.mark.parametrize("thread", ["", "  "])
def test_an_empty_thread_id_is_refused(app: Path, thread: str) -> None:
    refused = graphflow(app, "run", "app.py:team", "hi", "--thread-id", thread)
    one_clear_line(refused, 2, f"--thread-id {thread!r} cannot name a run")
    assert not (app / "prep.calls").exists()  # (it ran on a new generated thread instead)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["ab\udcffcd"], "the input is not valid UTF-8 (byte 0xff at character 2)"),
        (['{"input": "ab\\udcffcd"}'], "InputError: the input's input: text holding a lone"),
        (["hi", "--thread-id", "t\udcff"], "--thread-id 't\\udcff' is not valid Unicode"),
        (
            ["hi", "--thread-id", "a\x1b[31mb"],
            "--thread-id 'a\\x1b[31mb' holds a control character",
        ),
        (["hi", "--thread-id", "x" * 300], "--thread-id 'xxxx"),
    ],
    ids=["input-bytes", "input-json-escape", "thread-bytes", "thread-escape", "thread-long"],
)
def test_input_and_thread_ids_no_store_can_hold_are_refused(
    app: Path, args: list[str], says: str
) -> None:
    # (a str with lone surrogates reaches the process as the bytes it stands for, as from a shell)
    refused = graphflow(app, "run", "app.py:team", *args)
    one_clear_line(refused, 2, says)
    assert "resume" not in refused.stderr  # no thread was announced for a run that never began
    assert not (app / "prep.calls").exists()


@pytest.mark.parametrize("view", ["--plain", "--json"])
def test_a_key_in_an_endpoints_query_is_never_printed(app: Path, view: str) -> None:
    # (gateways that take the key as `?api_key=` / `?key=`: the error names the endpoint)
    url = "http://127.0.0.1:9/v1?api_key=QSECRET1&key=QSECRET2"
    failed = graphflow(app, "run", "app.py:remote", "hi", view, GF_MODEL_URL=url)
    assert failed.returncode == 1, failed.stderr
    assert "cannot reach the model endpoint" in failed.stderr
    assert "api_key=***&key=***" in failed.stderr + failed.stdout
    assert "QSECRET" not in failed.stderr + failed.stdout


def test_a_store_password_in_the_query_is_left_out_and_the_message_stays_whole(app: Path) -> None:
    failed = graphflow(
        app,
        "run",
        "app.py:team",
        "hi",
        "--checkpointer",
        "postgresql://u@127.0.0.1:9/db?password=QS",
    )
    line = one_clear_line(failed, 1, "PostgreSQL cannot be reached")
    assert "QS" not in failed.stderr
    # (the password was dropped from the message as from a URL: it ate the quote and colon)
    assert "checkpointer 'postgresql://u@127.0.0.1:9/db': PostgreSQL cannot be reached" in line
