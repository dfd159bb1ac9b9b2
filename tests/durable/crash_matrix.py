"""Crash matrix: SIGKILL a durable graphflow run at every point, resume it, compare.

The pipeline is Sequential ⊃ [ReAct with tools, Parallel of two ReAct branches with tools,
Loop(writer, reviewer)], with agent hooks, run in a child process on a SQLite (or PostgreSQL)
checkpointer. Scripted models, tools and hooks append `start`/`end` lines to a log file. For each
kill point the child kills itself with SIGKILL — either inside the k-th call (`call:k`, after
logging its start: the call is in flight) or right after the k-th LangGraph stream event
(`step:k`, between steps while other branches may be running). A new process resumes the thread.
The final state must equal an uninterrupted run's, and the calls executed across both processes
must equal the uninterrupted count plus at most the calls in flight at the kill.

    python tests/durable/crash_matrix.py                  # full matrix, SQLite
    python tests/durable/crash_matrix.py --url postgresql://... --points 6
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUTPUT_KEYS = ("research_data", "market", "tech", "analysis", "draft_article", "review_feedback")
LATENCY = 0.02
MAX_CONCURRENT = 2
"""Most calls that can be running at once (the two parallel branches)."""

# -- the child process ---------------------------------------------------------------------------


class _Recorder:
    """Appends call lines to the log; kills the process at the k-th call start if asked."""

    def __init__(self, log: str, phase: str, kill_call: int | None) -> None:
        self.log = log
        self.phase = phase
        self.kill_call = kill_call
        self.count = 0
        self.lock = threading.Lock()

    def _write(self, line: dict[str, Any]) -> None:
        data = (json.dumps(line) + "\n").encode()
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def start(self, kind: str, name: str) -> str:
        call_id = uuid.uuid4().hex
        with self.lock:
            self.count += 1
            n = self.count
            self._write(
                {"phase": self.phase, "ev": "start", "id": call_id, "kind": kind, "name": name}
            )
            if self.kill_call is not None and n == self.kill_call:
                os.kill(os.getpid(), signal.SIGKILL)
        return call_id

    def end(self, call_id: str, kind: str, name: str) -> None:
        with self.lock:
            self._write(
                {"phase": self.phase, "ev": "end", "id": call_id, "kind": kind, "name": name}
            )


def build_pipeline(rec: _Recorder) -> Any:
    """The pipeline under test; every model, tool and hook call is logged through `rec`."""
    from langchain_core.messages import BaseMessage, ToolMessage
    from langchain_core.tools import tool

    from graphflow import (
        AgentHook,
        LoopAgent,
        ParallelAgent,
        ReactAgent,
        SequentialAgent,
        output_contains,
    )
    from graphflow.messages import instruction_agent
    from graphflow.testing import ScriptedChatModel, tool_call, tool_calls

    def since_instruction(agent: str, messages: list[BaseMessage]) -> tuple[str, list[BaseMessage]]:
        for i in range(len(messages) - 1, -1, -1):
            if instruction_agent(messages[i]) == agent:
                return str(messages[i].content), messages[i + 1 :]
        return "", messages

    def scripted(agent: str, decide: Any) -> ScriptedChatModel:
        def fn(messages: list[BaseMessage], n: int) -> Any:
            call_id = rec.start("model", agent)
            instruction, after = since_instruction(agent, messages)
            results = [str(m.content) for m in after if isinstance(m, ToolMessage)]
            reply = decide(instruction, results)
            time.sleep(LATENCY)
            rec.end(call_id, "model", agent)
            return reply

        return ScriptedChatModel(fn=fn)

    @tool
    def search(query: str) -> str:
        """Search the web."""
        call_id = rec.start("tool", f"search:{query}")
        time.sleep(LATENCY)
        rec.end(call_id, "tool", f"search:{query}")
        return f"found({query})"

    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        call_id = rec.start("tool", f"lookup:{topic}")
        time.sleep(LATENCY)
        rec.end(call_id, "tool", f"lookup:{topic}")
        return f"facts({topic})"

    class LogHook(AgentHook):
        def before_agent(self, state: dict[str, Any], ctx: Any) -> None:
            call_id = rec.start("hook", f"before:{ctx.agent}")
            rec.end(call_id, "hook", f"before:{ctx.agent}")

        def after_agent(self, state: dict[str, Any], ctx: Any) -> None:
            call_id = rec.start("hook", f"after:{ctx.agent}")
            rec.end(call_id, "hook", f"after:{ctx.agent}")

    def researcher_reply(instruction: str, results: list[str]) -> Any:
        if not results:
            return tool_calls(("search", {"query": "specs"}), ("search", {"query": "price"}))
        return "Research: " + ", ".join(sorted(results))

    def branch_reply(topic: str) -> Any:
        def decide(instruction: str, results: list[str]) -> Any:
            if not results:
                return tool_call("lookup", {"topic": topic})
            return f"{topic} analysis of [{instruction}] using {results[0]}"

        return decide

    def writer_reply(instruction: str, results: list[str]) -> Any:
        return "Draft v2 (detailed)" if "more detail" in instruction else "Draft v1"

    def reviewer_reply(instruction: str, results: list[str]) -> Any:
        return "APPROVE" if "v2" in instruction else "Needs more detail"

    researcher = ReactAgent(
        name="researcher",
        model=scripted("researcher", researcher_reply),
        tools=[search],
        instruction="Research {input}.",
        output_key="research_data",
        hooks=[LogHook()],
    )
    market = ReactAgent(
        name="market_analyst",
        model=scripted("market_analyst", branch_reply("market")),
        tools=[lookup],
        instruction="Market view of {research_data}.",
        output_key="market",
    )
    tech = ReactAgent(
        name="tech_analyst",
        model=scripted("tech_analyst", branch_reply("tech")),
        tools=[lookup],
        instruction="Tech view of {research_data}.",
        output_key="tech",
    )
    fanout = ParallelAgent(name="fanout", sub_agents=[market, tech], output_key="analysis")
    writer = ReactAgent(
        name="writer",
        model=scripted("writer", writer_reply),
        instruction="Write from {analysis}. Feedback: {review_feedback?}",
        output_key="draft_article",
        hooks=[LogHook()],
    )
    reviewer = ReactAgent(
        name="reviewer",
        model=scripted("reviewer", reviewer_reply),
        instruction="Review {draft_article}.",
        output_key="review_feedback",
    )
    refine = LoopAgent(
        name="refine",
        sub_agents=[writer, reviewer],
        max_iterations=3,
        until=output_contains("review_feedback", "APPROVE"),
    )
    return SequentialAgent(
        name="pipeline", sub_agents=[researcher, fanout, refine], hooks=[LogHook()]
    )


def final_view(values: dict[str, Any]) -> dict[str, Any]:
    """The comparable part of a final state: output keys, statuses and message texts."""
    view: dict[str, Any] = {k: values.get(k) for k in OUTPUT_KEYS}
    view["agent_status"] = dict(sorted((values.get("agent_status") or {}).items()))
    view["messages"] = [
        [type(m).__name__, m.name, m.content if isinstance(m.content, str) else repr(m.content)]
        for m in values.get("messages") or []
    ]
    return json.loads(json.dumps(view, default=str))


def child_main(argv: Sequence[str]) -> int:
    """`child --url U --thread T --log L --phase run|resume --kill none|call:k|step:k --out F`."""
    parser = argparse.ArgumentParser(prog="crash_matrix child")
    parser.add_argument("--url", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--phase", choices=("run", "resume"), required=True)
    parser.add_argument("--kill", default="none")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    kind, _, num = args.kill.partition(":")
    kill_call = int(num) if kind == "call" else None
    kill_step = int(num) if kind == "step" else None
    rec = _Recorder(args.log, args.phase, kill_call if args.phase == "run" else None)
    pipeline = build_pipeline(rec)
    events = 0
    if args.phase == "run":
        for _event in pipeline.stream(
            "Pura X", thread_id=args.thread, checkpointer=args.url, stream_mode="updates"
        ):
            events += 1
            if kill_step is not None and events == kill_step:
                os.kill(os.getpid(), signal.SIGKILL)
    else:
        pipeline.resume(args.thread, checkpointer=args.url)
    state = pipeline.get_state(args.thread, checkpointer=args.url)
    from graphflow.checkpoint import run_info

    info = run_info(
        pipeline.compile(args.url).graph, args.thread, agents=[a.name for a in pipeline.walk()]
    )
    Path(args.out).write_text(
        json.dumps(
            {
                "final": final_view(state.values),
                "events": events,
                "next": list(state.next),
                "status": info.status if info else None,
            }
        )
    )
    return 0


# -- the parent ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PointResult:
    """One kill point of the matrix."""

    point: str
    killed: bool
    executed: int
    baseline: int
    in_flight: int
    equal: bool
    reexecuted_completed: int
    status_after_kill: str | None
    error: str | None = None

    @property
    def extra(self) -> int:
        """Calls executed beyond the uninterrupted run's."""
        return self.executed - self.baseline

    @property
    def ok(self) -> bool:
        """The point satisfies the durability contract."""
        return (
            self.error is None
            and self.equal
            and self.in_flight <= self.extra <= MAX_CONCURRENT
            and self.extra == self.in_flight + self.reexecuted_completed
        )


def _child(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1", LANGSMITH_TRACING="false")
    return subprocess.run(
        [sys.executable, os.path.abspath(__file__), "child", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def _read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _url_for(base: str, workdir: Path, tag: str) -> str:
    if base == "sqlite":
        return f"sqlite:///{workdir / f'{tag}.db'}"
    return base


def baseline(base_url: str, workdir: Path) -> dict[str, Any]:
    """Run once without a kill: final view, call count, stream events."""
    url = _url_for(base_url, workdir, "baseline")
    log, out = workdir / "baseline.log", workdir / "baseline.json"
    thread = f"baseline-{uuid.uuid4().hex[:8]}"
    proc = _child(
        ["--url", url, "--thread", thread, "--log", str(log), "--phase", "run", "--out", str(out)]
    )
    if proc.returncode != 0:
        raise RuntimeError(f"baseline run failed:\n{proc.stderr[-4000:]}")
    data = json.loads(out.read_text())
    starts = [e for e in _read_log(log) if e["ev"] == "start"]
    data["calls"] = len(starts)
    data["call_names"] = sorted(f"{e['kind']}:{e['name']}" for e in starts)
    return data


def run_point(base_url: str, workdir: Path, point: str, base: dict[str, Any]) -> PointResult:
    """Kill at `point`, resume in a new process, compare with `base`."""
    tag = point.replace(":", "_")
    url = _url_for(base_url, workdir, tag)
    log = workdir / f"{tag}.log"
    thread = f"crash-{tag}-{uuid.uuid4().hex[:8]}"
    common = ["--url", url, "--thread", thread, "--log", str(log)]
    try:
        crash = _child(
            [*common, "--phase", "run", "--kill", point, "--out", str(workdir / f"{tag}.run.json")]
        )
        killed = crash.returncode == -signal.SIGKILL
        if crash.returncode not in (0, -signal.SIGKILL):
            raise RuntimeError(f"crash phase exited {crash.returncode}:\n{crash.stderr[-3000:]}")
        status_proc = _child(
            [*common, "--phase", "resume", "--out", str(workdir / f"{tag}.resume.json")]
        )
        if status_proc.returncode != 0:
            raise RuntimeError(f"resume failed:\n{status_proc.stderr[-3000:]}")
        result = json.loads((workdir / f"{tag}.resume.json").read_text())
    except Exception as exc:  # noqa: BLE001 - reported in the table
        return PointResult(point, False, -1, base["calls"], -1, False, -1, None, str(exc))
    entries = _read_log(log)
    crash_starts = {e["id"]: e for e in entries if e["phase"] == "run" and e["ev"] == "start"}
    crash_ends = {e["id"] for e in entries if e["phase"] == "run" and e["ev"] == "end"}
    in_flight = [e for i, e in crash_starts.items() if i not in crash_ends]
    starts = [e for e in entries if e["ev"] == "start"]
    # completed calls run again: (completed in the crash + all in resume) beyond the baseline
    done_names = Counter(
        f"{e['kind']}:{e['name']}" for i, e in crash_starts.items() if i in crash_ends
    )
    resume_names = Counter(
        f"{e['kind']}:{e['name']}" for e in entries if e["phase"] == "resume" and e["ev"] == "start"
    )
    base_names = Counter(base["call_names"])
    reexec_completed = sum(((done_names + resume_names) - base_names).values())
    return PointResult(
        point=point,
        killed=killed,
        executed=len(starts),
        baseline=base["calls"],
        in_flight=len(in_flight),
        equal=result["final"] == base["final"],
        reexecuted_completed=reexec_completed,
        status_after_kill=None,
        error=None,
    )


def kill_points(base: dict[str, Any], limit: int | None = None) -> list[str]:
    """`step:1..events` and `call:1..calls`, or an evenly spread subset of `limit` points."""
    points = [f"step:{k}" for k in range(1, base["events"] + 1)]
    points += [f"call:{k}" for k in range(1, base["calls"] + 1)]
    if limit is not None and limit < len(points):
        stride = len(points) / limit
        points = [points[int(i * stride)] for i in range(limit)]
    return points


def run_matrix(
    base_url: str = "sqlite",
    *,
    points: int | None = None,
    workers: int | None = None,
    workdir: Path | None = None,
) -> tuple[dict[str, Any], list[PointResult]]:
    """Run the matrix; `base_url` is `sqlite` (a file per point) or a PostgreSQL URL."""
    own = workdir is None
    tmp = Path(tempfile.mkdtemp(prefix="gf-crash-")) if own else workdir
    assert tmp is not None
    base = baseline(base_url, tmp)
    chosen = kill_points(base, points)
    workers = workers or max(2, min(8, (os.cpu_count() or 2)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda p: run_point(base_url, tmp, p, base), chosen))
    return base, results


def format_table(base: dict[str, Any], results: list[PointResult]) -> str:
    """The matrix as a text table."""
    lines = [
        f"baseline: {base['calls']} calls (model+tool+hook), {base['events']} stream events",
        f"{'k':>9} | {'killed':>6} | {'executed':>8} | {'re-executed':>11} | {'in flight':>9} | "
        f"{'unsaved':>7} | {'final state equal':>17} | ok",
        "-" * 94,
    ]
    for r in results:
        lines.append(
            f"{r.point:>9} | {'yes' if r.killed else 'no':>6} | {r.executed:>8} | {r.extra:>11} | "
            f"{r.in_flight:>9} | {r.reexecuted_completed:>7} | {str(r.equal):>17} | "
            f"{'OK' if r.ok else 'FAIL'}"
            + (f"  {r.error.splitlines()[-1] if r.error else ''}" if r.error else "")
        )
    passed = sum(r.ok for r in results)
    lines.append(
        "re-executed = calls run beyond the uninterrupted run; in flight = started, not returned "
        "at the kill; unsaved = returned, but LangGraph's background writer had not stored the "
        "result yet"
    )
    lines.append(
        f"{passed}/{len(results)} kill points OK (bound: {MAX_CONCURRENT} concurrent calls)"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "child":
        return child_main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--url", default="sqlite", help="'sqlite' (default) or postgresql://...")
    parser.add_argument("--points", type=int, default=None, help="spread this many kill points")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    started = time.monotonic()
    base, results = run_matrix(args.url, points=args.points, workers=args.workers)
    print(format_table(base, results))
    print(f"elapsed: {time.monotonic() - started:.1f}s")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
