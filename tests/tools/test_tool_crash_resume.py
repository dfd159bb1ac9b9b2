"""A process killed in the middle of a turn's tool calls: the resumed run re-runs only the rest."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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
