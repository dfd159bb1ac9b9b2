"""A process killed in the middle of a turn's tool calls: the resumed run re-runs only the rest."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Each child script defines `tools` and `reply` (the model) between these two parts, and is run
# as `child.py DB LOG PHASE API`: PHASE `run` dies inside a call, `resume` finishes the run.
PRELUDE = textwrap.dedent(
    """
    import asyncio, os, sys, time
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from graphflow import ReactAgent
    from graphflow.testing import ScriptedChatModel, tool_calls
    from graphflow.tools import ToolPolicy

    db, log_path, phase, api = sys.argv[1:5]

    def log(line):
        with open(log_path, "a") as f:
            f.write(line + "\\n")
    """
)
EPILOGUE = textwrap.dedent(
    """
    agent = ReactAgent(name="worker", model=ScriptedChatModel(fn=reply), tools=tools,
                       tool_policies=policies, output_key="out")
    url = f"sqlite:///{db}"
    if phase == "run":
        if api == "sync":
            agent.invoke("go", thread_id="job", checkpointer=url)
        else:
            asyncio.run(agent.ainvoke("go", thread_id="job", checkpointer=url))
    else:
        result = (agent.resume("job", checkpointer=url) if api == "sync"
                  else asyncio.run(agent.aresume("job", checkpointer=url)))
        log("results " + ",".join(m.content for m in result["messages"]
                                   if isinstance(m, ToolMessage)))
        log("out " + result["out"])
    """
)


class Child:
    """A child script that logs each tool call to a file; run it with `child(phase)`."""

    def __init__(self, tmp_path: Path, body: str, api: str) -> None:
        self.script = tmp_path / "child.py"
        self.script.write_text(PRELUDE + textwrap.dedent(body) + EPILOGUE)
        self.db, self.log, self.api = tmp_path / "runs.db", tmp_path / "calls.log", api

    def __call__(self, phase: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(self.script), str(self.db), str(self.log), phase, self.api],
            capture_output=True,
            text=True,
            timeout=60,
        )

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines()


MIXED_TURN = """
    @tool
    def read(n: int) -> str:
        \"\"\"Read part n.\"\"\"
        log(f"read {n}")
        return f"part {n}"

    @tool
    def write(n: int) -> str:
        \"\"\"Write part n.\"\"\"
        log(f"write {n}")
        if phase == "run" and n == 4:
            os._exit(1)  # the process dies inside the fourth call
        return f"wrote {n}"

    def reply(messages, n):
        if isinstance(messages[-1], ToolMessage):
            return "finished"
        return tool_calls(("read", {"n": 1}), ("read", {"n": 2}), ("write", {"n": 3}),
                          ("write", {"n": 4}), ("read", {"n": 5}))

    tools, policies = [read, write], {"read": ToolPolicy(parallel_safe=True)}
"""


def test_a_crash_mid_turn_reruns_only_the_unfinished_calls(tmp_path):
    child = Child(tmp_path, MIXED_TURN, "sync")
    crashed = child("run")
    assert crashed.returncode == 1 and "Traceback" not in crashed.stderr, crashed.stderr
    lines = child.lines()
    assert sorted(lines[:2]) == ["read 1", "read 2"] and lines[2:] == ["write 3", "write 4"]

    resumed = child("resume")
    assert resumed.returncode == 0, resumed.stderr
    assert child.lines()[4:] == [
        "write 4",  # 1-3 finished before the crash: not run again
        "read 5",
        "results part 1,part 2,wrote 3,wrote 4,part 5",
        "out finished",
    ]


PARALLEL_BATCH = """
    @tool
    def fetch(n: int) -> str:
        \"\"\"Fetch page n.\"\"\"
        log(f"start {n}")
        if n == 3:
            time.sleep(1.0)  # the other calls of the batch finish meanwhile
            if phase == "run":
                os._exit(1)  # the process dies inside the third call of the batch
        else:
            time.sleep(0.1)
        log(f"end {n}")
        return f"page {n}"

    def reply(messages, n):
        if isinstance(messages[-1], ToolMessage):
            return "finished"
        return tool_calls(*[("fetch", {"n": i}) for i in (1, 2, 3, 4)])

    tools, policies = [fetch], {"fetch": ToolPolicy(parallel_safe=True)}
"""


@pytest.mark.parametrize("api", ["sync", "async"])
def test_a_crash_inside_a_parallel_batch_reruns_only_the_unfinished_call(tmp_path, api):
    child = Child(tmp_path, PARALLEL_BATCH, api)
    crashed = child("run")
    assert crashed.returncode == 1 and "Traceback" not in crashed.stderr, crashed.stderr
    assert sorted(child.lines()) == [
        "end 1",
        "end 2",
        "end 4",
        "start 1",
        "start 2",
        "start 3",
        "start 4",
    ]

    resumed = child("resume")
    assert resumed.returncode == 0, resumed.stderr
    assert child.lines()[7:] == [
        "start 3",  # only the call that had not finished runs again
        "end 3",
        "results page 1,page 2,page 3,page 4",
        "out finished",
    ]
