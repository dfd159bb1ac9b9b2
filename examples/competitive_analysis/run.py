"""Run the team on a product with live progress, then write `reports/<product>.md`.

    python examples/competitive_analysis.py "Huawei Pura X"
    python examples/competitive_analysis.py "Pixel 9 Pro Fold" --delay 1   # slow enough to Ctrl-C
    python examples/competitive_analysis.py --resume analysis-huawei-pura-x-1a2b3c

Every run gets a new thread, printed once it has something to resume; checkpoints go to
`sqlite:///runs.db` (or --checkpointer / GRAPHFLOW_CHECKPOINTER). A run stopped with Ctrl-C (or
SIGTERM) or killed continues with --resume THREAD (or `graphflow resume THREAD`) without
repeating finished model or tool calls; the stop itself is one line, at any moment.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from pathlib import Path
from typing import Any

from graphflow import events as ev
from graphflow._internal.commands import (
    password_note,
    python_words,
    run_command,
    shell_join,
    store_words,
)
from graphflow.checkpoint.stored import AGENT_KEY
from graphflow.cli import TARGET_KEY, follow, mark_stopped, mute_interrupts
from graphflow.testing import ScriptedChatModel

from .report import slug, write_report
from .team import Team, models_notice

ENTRY = Path(__file__).resolve().parents[1] / "competitive_analysis.py"
"""The file target of this team for `graphflow run | resume | runs | draw`."""
STOPPED = 130


def _where(event: ev.Event) -> str:
    return "/".join(event.agent_path[1:]) or event.agent_path[0]


def _short(value: Any, limit: int = 70) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def progress_line(event: ev.Event) -> str | None:
    """One line for the events worth showing live; None for the others."""
    if isinstance(event, ev.AgentStarted) and len(event.agent_path) > 1:
        passes = f" (pass {event.iteration + 1})" if event.iteration is not None else ""
        return f"[{_where(event)}] started{passes}"
    if isinstance(event, ev.ToolCallStarted):
        return f"[{_where(event)}] {event.name}({_short(dict(event.args), 50)})"
    if isinstance(event, ev.AgentFinished) and event.output_key and event.value is not None:
        return f"[{_where(event)}] {event.output_key} = {_short(event.value)}"
    if isinstance(event, ev.AgentFailed):
        return f"[{_where(event)}] failed: {event.error_type}: {_short(event.error, 120)}"
    return None


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def new_thread(product: str) -> str:
    """A new thread id for `product`: readable, bounded, and never the same twice."""
    return f"analysis-{slug(product, 40)}-{uuid.uuid4().hex[:6]}"


class _Session:
    """One invocation: its thread, store, and the commands it prints."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.store: str = args.checkpointer
        self.thread: str = args.resume or new_thread(args.product)
        self.announced = bool(args.resume)
        self.me = [*python_words(), _shown(ENTRY)]
        self.store_args = store_words(self.store)

    def resume_command(self) -> str:
        command = shell_join([*self.me, "--resume", self.thread, *self.store_args])
        return command + password_note(self.store)

    def announce(self) -> None:
        if not self.announced:
            print(f"thread {self.thread} (resume with: {self.resume_command()})", flush=True)
            print(f"models: {models_notice()}", flush=True)
        self.announced = True

    def stopped(self, what: str) -> int:
        mute_interrupts()
        if not self.announced:
            again = shell_join([*self.me, *(sys.argv[1:] if self.args.argv is None else [])])
            print(
                f"\nstopped {what}, before the run started: nothing to resume; start it again"
                f"{f' with: {again}' if again.strip() != shell_join(self.me) else ''}",
                file=sys.stderr,
                flush=True,
            )
            return STOPPED
        mark_stopped(self.store, self.thread)  # listed as stopped, not crashed
        print(
            f"\nstopped {what}, thread {self.thread}. Resume with: {self.resume_command()}",
            file=sys.stderr,
            flush=True,
        )
        return STOPPED


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Competitive analysis of a product.")
    parser.add_argument("product", nargs="?", default="Huawei Pura X")
    parser.add_argument("--resume", metavar="THREAD", help="continue this stopped or killed run")
    parser.add_argument(
        "--checkpointer", default=os.environ.get("GRAPHFLOW_CHECKPOINTER") or "sqlite:///runs.db"
    )
    parser.add_argument("--reports", default="reports", help="folder of the report files")
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds each demo model call takes"
    )
    return parser


def main(team: Team, argv: list[str] | None = None) -> int:
    """The command line of the example; the exit code (0 done, 1 failed, 130 stopped)."""
    args = _parser().parse_args(argv)
    args.argv = argv
    session = _Session(args)
    try:
        return _run(team, session)
    except KeyboardInterrupt:
        return session.stopped(session.args.phase)


def _finished(team: Team, session: _Session) -> dict[str, Any] | None:
    """The state of a finished run on the thread (None when it is not finished)."""
    snapshot = team.pipeline.get_state(session.thread, checkpointer=session.store)
    values = dict(snapshot.values or {})
    if snapshot.next or "draft_article" not in values:
        return None
    return values


def _run(team: Team, session: _Session) -> int:
    args = session.args
    args.phase = "while starting"
    for model in (team.research_model, team.writer_model, team.reviewer_model):
        if isinstance(model, ScriptedChatModel):
            model.latency = args.delay
    pipeline, store, thread_id = team.pipeline, session.store, session.thread
    state = _finished(team, session) if args.resume else None
    if state is None:
        config: Any = {"metadata": {TARGET_KEY: f"{ENTRY}:pipeline", AGENT_KEY: pipeline.name}}
        stream = pipeline.stream(
            None if args.resume else args.product,
            thread_id=thread_id,
            checkpointer=store,
            config=config,
            events=True,
        )
        args.phase = "while starting the run"
        try:
            for event in follow(stream):
                if isinstance(event, ev.AgentStarted):
                    session.announce()  # the run has its first checkpoint: it can be resumed
                    args.phase = f"in {_where(event)}"
                line = progress_line(event)
                if line:
                    print(line, flush=True)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - one line and the way on
            print(f"failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            if session.announced:
                print(f"after a fix, resume with: {session.resume_command()}", file=sys.stderr)
            return 1
        state = pipeline.get_state(thread_id, checkpointer=store).values
    args.phase = "while writing the report (the run itself is finished)"
    session.announced = True
    notice = models_notice()
    path = write_report(
        pipeline,
        state,
        thread_id=thread_id,
        checkpointer=store,
        folder=args.reports,
        models=notice,
    )
    args.phase = "after writing the report"
    print("\n" + state["draft_article"])
    print(f"\nloop ended by: {state['agent_status']['refine']}; thread: {thread_id}")
    print(f"models: {notice}")
    print(f"report: {_shown(path.resolve())}")
    target = _shown(ENTRY) + ":pipeline"
    print(f"list runs:  {run_command('runs', *session.store_args)}")
    print(f"draw it:    {run_command('draw', target, '--thread', thread_id, '-o', 'team.html')}")
    return 0
