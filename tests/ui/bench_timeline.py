"""Measure the run page's reads: the timeline and one invocation of a long stored run.

    PYTHONPATH=$PWD .venv/bin/python tests/ui/bench_timeline.py --passes 50 --branches 8

The run: a loop of `--passes` passes of a ReAct writer (one model call each), then a parallel
agent of `--branches` ReAct branches (a tool call each). Each read is timed through the app
(Starlette's TestClient, no network) on a new app, `--repeat` times: the timeline's first read,
the same read again (the run has not moved: kept), and one invocation's panel.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from langchain_core.messages import ToolMessage
from starlette.testclient import TestClient

from graphflow import LoopAgent, ParallelAgent, ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.ui import create_app
from tests.ui.run_targets import lookup


def team(passes: int, branches: int) -> SequentialAgent:
    def check(messages, n):
        if isinstance(messages[-1], ToolMessage):
            return "checked"
        return tool_call("lookup", {"code": f"c{n}"})

    return SequentialAgent(
        name="long",
        sub_agents=[
            LoopAgent(
                name="refine",
                sub_agents=[
                    ReactAgent(
                        name="writer",
                        model=ScriptedChatModel(fn=lambda m, n: f"draft {n}"),
                        instruction="Write draft {input}.",
                        output_key="draft",
                    )
                ],
                max_iterations=passes,
            ),
            ParallelAgent(
                name="fan",
                sub_agents=[
                    ReactAgent(
                        name=f"b{i}",
                        model=ScriptedChatModel(fn=check),
                        tools=[lookup],
                        output_key=f"out{i}",
                    )
                    for i in range(branches)
                ],
            ),
        ],
    )


def timed(client: TestClient, path: str, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = client.get(path)
        out.append(time.perf_counter() - start)
        assert response.status_code == 200, response.text
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passes", type=int, default=50)
    parser.add_argument("--branches", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'runs.db'}"
        agent = team(args.passes, args.branches)
        agent.invoke("go", thread_id="long-1", checkpointer=url)
        cold, warm, one = [], [], []
        for _ in range(args.repeat):  # a new app each time: nothing read before
            app = create_app({"long": agent}, url)
            with TestClient(app, base_url="http://127.0.0.1") as c:
                assert c.get("/api/run/long-1").status_code == 200  # (compiles the team)
                cold += timed(c, "/api/run/long-1/timeline", 1)
                warm += timed(c, "/api/run/long-1/timeline", 1)
                rows = c.get("/api/run/long-1/timeline").json()["invocations"]
                last = next(r for r in reversed(rows) if r["agent"] == "writer")
                one += timed(c, "/api/run/long-1/invocations/" + quote(last["id"], safe=""), 1)
        for name, times in (
            (f"timeline, first read ({len(rows)} invocations)", cold),
            ("timeline, read again (the run has not moved)", warm),
            ("one invocation (the last writer pass)", one),
        ):
            print(
                f"{name}: median {statistics.median(times) * 1000:.0f} ms, "
                f"slowest {max(times) * 1000:.0f} ms over {args.repeat}"
            )


if __name__ == "__main__":
    main()
