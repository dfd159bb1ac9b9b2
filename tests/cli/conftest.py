"""The `graphflow` command, run as a subprocess on small apps written to a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

APP = textwrap.dedent(
    '''
    import os
    import time
    from pathlib import Path

    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool

    from graphflow import FunctionAgent, HumanApproval, LoopAgent, ReactAgent, SequentialAgent
    from graphflow.testing import ScriptedChatModel, tool_call

    HERE = Path(__file__).parent


    def shout(state):
        with open(HERE / "shout_calls", "a") as f:
            f.write("x\\n")
        return state["input"].upper()


    def slow(state):
        (HERE / "slow_started").write_text("x")
        if os.environ.get("GF_TEST_SLOW"):
            time.sleep(60)
        return state["loud"] + "!"


    app = SequentialAgent(
        name="app",
        sub_agents=[
            FunctionAgent(name="shout", fn=shout, output_key="loud"),
            FunctionAgent(name="mark", fn=slow, output_key="final"),
        ],
    )


    @tool
    def pay(amount: int) -> str:
        """Pay an amount."""
        with open(HERE / "payments", "a") as f:
            f.write(f"{amount}\\n")
        return f"paid {amount}"


    def _payer(messages, n):
        if any(isinstance(m, ToolMessage) for m in messages):
            return "done: " + messages[-1].text
        return tool_call("pay", {"amount": 5})


    payer = ReactAgent(
        name="payer",
        model=ScriptedChatModel(fn=_payer),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="receipt",
    )
    billing = SequentialAgent(name="billing", sub_agents=[payer])

    writer = ReactAgent(
        name="writer",
        model=ScriptedChatModel(fn=lambda m, n: "a short streamed answer", latency=0.6),
        output_key="text",
    )
    polish = ReactAgent(
        name="polish",
        model=ScriptedChatModel(fn=lambda m, n: "polished", latency=0.6),
        output_key="final_text",
    )
    story = SequentialAgent(name="story", sub_agents=[writer, polish])


    def flaky(state):
        if not os.environ.get("GF_TEST_FIXED"):
            raise RuntimeError("the disk is full")
        return "stored"


    fragile = SequentialAgent(
        name="fragile",
        sub_agents=[
            FunctionAgent(name="prep", fn=shout, output_key="loud"),
            FunctionAgent(name="store", fn=flaky, output_key="stored"),
        ],
    )
    not_an_agent = 42


    def _draft(messages, n):
        if n >= 1:  # the second pass hangs, until Ctrl-C
            (HERE / "second_pass").write_text("x")
            time.sleep(60)
        return f"draft {n + 1}"


    drafter = ReactAgent(name="drafter", model=ScriptedChatModel(fn=_draft), output_key="draft")
    checker = ReactAgent(
        name="checker", model=ScriptedChatModel(fn=lambda m, n: "again"), output_key="verdict"
    )
    looped = LoopAgent(name="looped", sub_agents=[drafter, checker], max_iterations=3)
    '''
)


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "cli_app.py").write_text(APP)
    return tmp_path


def cli_env(app_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHFLOW_")}
    env.pop("OPENAI_API_KEY", None)
    env.update(extra)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    # as in an activated virtualenv: `graphflow` on PATH is this Python's console script
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def graphflow(
    app_dir: Path, *args: str, stdin: str = "", **env: str
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphflow.cli", *args],
        cwd=app_dir,
        env=cli_env(app_dir, **env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def run_cli():
    """Run `graphflow ARGS...` in a folder; the completed process."""
    return graphflow


@pytest.fixture
def env_for():
    """The environment a `graphflow` subprocess runs with."""
    return cli_env
