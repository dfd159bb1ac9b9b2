"""Hooks across crashes and restarts, for real: child processes share a SQLite checkpointer.

* A process killed after `before_agent` completed (inside the first tool call) is resumed by a
  second process: `before_agent` does not fire again and the run completes.
* Human approval: process 1 runs until the approval interrupts and exits; process 2 resumes with
  the decisions (approve, edit, reject, and two pending approvals answered in one resume).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CRASH_CHILD = textwrap.dedent(
    """
    import os, sys
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from graphflow import AgentHook, ReactAgent, SequentialAgent
    from graphflow.testing import ScriptedChatModel, tool_call

    db, log_path, phase, shape = sys.argv[1:5]

    def log(line):
        with open(log_path, "a") as f:
            f.write(line + "\\n")

    class Recorder(AgentHook):
        def __init__(self, label):
            self.label = label

        @property
        def name(self):
            return f"Recorder_{self.label}"

        def before_agent(self, state, ctx):
            log(f"before {self.label}")

        def after_agent(self, state, ctx):
            log(f"after {self.label} {ctx.reason}")

    @tool
    def work(step: int) -> str:
        \"\"\"Do some work.\"\"\"
        log(f"tool {step}")
        if phase == "run":
            os._exit(1)  # the process dies mid-run, after before_agent completed
        return f"worked {step}"

    def reply(messages, n):
        if isinstance(messages[-1], ToolMessage):
            return "finished"
        return tool_call("work", {"step": 1})

    agent = ReactAgent(
        name="worker", model=ScriptedChatModel(fn=reply), tools=[work],
        hooks=[Recorder("inner")], output_key="out",
    )
    if shape == "sequence":
        agent = SequentialAgent(name="outer", sub_agents=[agent], hooks=[Recorder("outer")])

    url = f"sqlite:///{db}"
    if phase == "run":
        agent.invoke("go", thread_id="job", checkpointer=url)
    else:
        result = agent.resume("job", checkpointer=url)
        log("result " + result["out"])
    """
)


def run_child(script: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("shape", ["react", "sequence"])
def test_before_agent_does_not_fire_again_after_a_crash(tmp_path, shape):
    script = tmp_path / "child.py"
    script.write_text(CRASH_CHILD)
    db, log = tmp_path / "runs.db", tmp_path / "hooks.log"

    crashed = run_child(script, db, log, "run", shape)
    assert crashed.returncode == 1, crashed.stderr
    lines = log.read_text().splitlines()
    assert lines[-1] == "tool 1"
    assert lines.count("before inner") == 1

    resumed = run_child(script, db, log, "resume", shape)
    assert resumed.returncode == 0, resumed.stderr
    lines = log.read_text().splitlines()
    assert lines.count("before inner") == 1
    assert lines.count("after inner completed") == 1
    assert lines[-1] == "result finished"
    if shape == "sequence":
        assert lines.count("before outer") == 1
        assert lines.count("after outer completed") == 1
        assert lines.index("before outer") < lines.index("before inner")
        assert lines.index("after inner completed") < lines.index("after outer completed")


APPROVAL_CHILD = textwrap.dedent(
    """
    import json, sys
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from graphflow import HumanApproval, ReactAgent
    from graphflow.testing import ScriptedChatModel, tool_call, tool_calls
    from graphflow.tools import ToolPolicy

    db, phase, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])

    @tool
    def pay(amount: int) -> str:
        \"\"\"Pay an amount.\"\"\"
        return f"paid {amount}"

    def build(calls):
        def reply(messages, n):
            if isinstance(messages[-1], ToolMessage):
                return "done"
            if calls == 1:
                return tool_call("pay", {"amount": 5})
            return tool_calls(("pay", {"amount": 5}), ("pay", {"amount": 7}))

        return ReactAgent(
            name="payer", model=ScriptedChatModel(fn=reply), tools=[pay],
            hooks=[HumanApproval({"pay": "Sends money."})],
            tool_policies={"pay": ToolPolicy(parallel_safe=True)},  # both calls pause at once
        )

    url = f"sqlite:///{db}"
    out = {}
    for thread, spec in plan.items():
        agent = build(spec["calls"])
        if phase == "run":
            result = agent.invoke("go", thread_id=thread, checkpointer=url)
            out[thread] = [
                {"id": i.id, "args": i.value["args"]} for i in result["__interrupt__"]
            ]
        else:
            pending = agent.get_state(thread, checkpointer=url).interrupts
            if len(pending) == 1:
                value = spec["decisions"][0]
            else:
                by_amount = {i.value["args"]["amount"]: i.id for i in pending}
                value = {by_amount[d["amount"]]: d["decision"] for d in spec["decisions"]}
            result = agent.resume(thread, value, checkpointer=url)
            out[thread] = {
                "interrupted": "__interrupt__" in result,
                "final": result["messages"][-1].content,
                "tools": [
                    [m.content, m.status] for m in result["messages"]
                    if isinstance(m, ToolMessage)
                ],
            }
    print(json.dumps(out))
    """
)


def test_human_approval_survives_a_restart(tmp_path):
    script = tmp_path / "approval.py"
    script.write_text(APPROVAL_CHILD)
    db = tmp_path / "runs.db"
    plan = {
        "approve": {"calls": 1, "decisions": [{"decision": "approve"}]},
        "edit": {"calls": 1, "decisions": [{"decision": "edit", "args": {"amount": 2}}]},
        "reject": {"calls": 1, "decisions": [{"decision": "reject", "reason": "over budget"}]},
        "two": {
            "calls": 2,
            "decisions": [
                {"amount": 5, "decision": {"decision": "edit", "args": {"amount": 3}}},
                {"amount": 7, "decision": {"decision": "reject", "reason": "duplicate"}},
            ],
        },
    }

    first = run_child(script, db, "run", json.dumps(plan))
    assert first.returncode == 0, first.stderr
    pending = json.loads(first.stdout.splitlines()[-1])
    assert [p["args"] for p in pending["approve"]] == [{"amount": 5}]
    assert sorted(p["args"]["amount"] for p in pending["two"]) == [5, 7]

    second = run_child(script, db, "resume", json.dumps(plan))
    assert second.returncode == 0, second.stderr
    done = json.loads(second.stdout.splitlines()[-1])
    assert not any(r["interrupted"] for r in done.values())
    assert all(r["final"] == "done" for r in done.values())
    assert done["approve"]["tools"] == [["paid 5", "success"]]
    assert done["edit"]["tools"] == [["paid 2", "success"]]
    ((content, status),) = done["reject"]["tools"]
    assert status == "error"
    assert "rejected by a human reviewer: over budget" in content
    paid, rejected = done["two"]["tools"]
    assert paid == ["paid 3", "success"]
    assert rejected[1] == "error" and "duplicate" in rejected[0]
