"""A process killed in the middle of a turn's tool calls: the resumed run re-runs only the rest."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import os, sys
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from graphflow import ReactAgent
    from graphflow.testing import ScriptedChatModel, tool_calls
    from graphflow.tools import ToolPolicy

    db, log_path, phase = sys.argv[1:4]

    def log(line):
        with open(log_path, "a") as f:
            f.write(line + "\\n")

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

    agent = ReactAgent(name="copier", model=ScriptedChatModel(fn=reply), tools=[read, write],
                       tool_policies={"read": ToolPolicy(parallel_safe=True)}, output_key="out")
    url = f"sqlite:///{db}"
    if phase == "run":
        agent.invoke("go", thread_id="job", checkpointer=url)
    else:
        result = agent.resume("job", checkpointer=url)
        log("results " + ",".join(m.content for m in result["messages"]
                                   if isinstance(m, ToolMessage)))
        log("out " + result["out"])
    """
)


def test_a_crash_mid_turn_reruns_only_the_unfinished_calls(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    db, log = tmp_path / "runs.db", tmp_path / "calls.log"

    def child(phase):
        return subprocess.run(
            [sys.executable, str(script), str(db), str(log), phase],
            capture_output=True,
            text=True,
            timeout=60,
        )

    crashed = child("run")
    assert crashed.returncode == 1, crashed.stderr
    lines = log.read_text().splitlines()
    assert sorted(lines[:2]) == ["read 1", "read 2"] and lines[2:] == ["write 3", "write 4"]

    resumed = child("resume")
    assert resumed.returncode == 0, resumed.stderr
    lines = log.read_text().splitlines()[4:]
    assert lines[:2] == ["write 4", "read 5"]  # 1-3 finished before the crash: not run again
    assert lines[2] == "results part 1,part 2,wrote 3,wrote 4,part 5"
    assert lines[3] == "out finished"


BATCH_CHILD = textwrap.dedent(
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

    agent = ReactAgent(name="reader", model=ScriptedChatModel(fn=reply), tools=[fetch],
                       default_tool_policy=ToolPolicy(parallel_safe=True), output_key="out")
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


@pytest.mark.parametrize("api", ["sync", "async"])
def test_a_crash_inside_a_parallel_batch_reruns_only_the_unfinished_call(tmp_path, api):
    script = tmp_path / "child.py"
    script.write_text(BATCH_CHILD)
    db, log = tmp_path / "runs.db", tmp_path / "calls.log"

    def child(phase):
        return subprocess.run(
            [sys.executable, str(script), str(db), str(log), phase, api],
            capture_output=True,
            text=True,
            timeout=60,
        )

    crashed = child("run")
    assert crashed.returncode == 1, crashed.stderr
    lines = log.read_text().splitlines()
    assert sorted(lines) == ["end 1", "end 2", "end 4", "start 1", "start 2", "start 3", "start 4"]

    resumed = child("resume")
    assert resumed.returncode == 0, resumed.stderr
    assert log.read_text().splitlines()[7:] == [
        "start 3",  # only the call that had not finished runs again
        "end 3",
        "results page 1,page 2,page 3,page 4",
        "out finished",
    ]
