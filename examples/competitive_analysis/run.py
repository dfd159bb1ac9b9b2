"""Run the team on a product with live progress, then write `reports/<product>.md`.

    python examples/competitive_analysis.py "Huawei Pura X"
    python examples/competitive_analysis.py "Pixel 9 Pro Fold" --delay 1   # slow enough to Ctrl-C
    python examples/competitive_analysis.py --resume analysis-huawei-pura-x-1a2b3c

Every run gets a new thread, printed first; checkpoints go to `sqlite:///runs.db` (or
--checkpointer / GRAPHFLOW_CHECKPOINTER). A run stopped with Ctrl-C or killed continues with
--resume THREAD (or `graphflow resume THREAD`) without repeating finished model or tool calls.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graphflow import events as ev
from graphflow.cli import TARGET_KEY
from graphflow.testing import ScriptedChatModel

from .report import slug, write_report
from .team import Team

ENTRY = Path(__file__).resolve().parents[1] / "competitive_analysis.py"
"""The file target of this team for `graphflow run | resume | runs | draw`."""


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


def _in_background(events: Iterator[ev.Event]) -> Iterator[ev.Event]:
    """`events`, produced by a daemon thread, so Ctrl-C stops the main thread at once.

    The run's checkpoints are written step by step: abandoning the thread loses nothing that
    `--resume` cannot redo.
    """
    box: queue.Queue[Any] = queue.Queue()
    end = object()

    def produce() -> None:
        try:
            for event in events:
                box.put(event)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            box.put(exc)
        box.put(end)

    threading.Thread(target=produce, daemon=True).start()
    while (item := box.get()) is not end:
        if isinstance(item, BaseException):
            raise item
        yield item


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def main(team: Team, argv: list[str] | None = None) -> int:
    """The command line of the example; the exit code (0 done, 1 failed, 130 stopped)."""
    parser = argparse.ArgumentParser(description="Competitive analysis of a product.")
    parser.add_argument("product", nargs="?", default="Huawei Pura X")
    parser.add_argument("--resume", metavar="THREAD", help="continue this stopped or killed run")
    parser.add_argument(
        "--checkpointer", default=os.environ.get("GRAPHFLOW_CHECKPOINTER", "sqlite:///runs.db")
    )
    parser.add_argument("--reports", default="reports", help="folder of the report files")
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds each demo model call takes"
    )
    args = parser.parse_args(argv)
    for model in (team.research_model, team.writer_model, team.reviewer_model):
        if isinstance(model, ScriptedChatModel):
            model.latency = args.delay
    pipeline, store = team.pipeline, args.checkpointer
    thread_id = args.resume or f"analysis-{slug(args.product)}-{uuid.uuid4().hex[:6]}"
    me = f"python {_shown(ENTRY)}"
    print(f"thread {thread_id} (resume with: {me} --resume {thread_id})", flush=True)
    config: Any = {"metadata": {TARGET_KEY: f"{ENTRY}:pipeline"}}
    stream = pipeline.stream(
        None if args.resume else args.product,
        thread_id=thread_id,
        checkpointer=store,
        config=config,
        events=True,
    )
    try:
        for event in _in_background(stream):
            line = progress_line(event)
            if line:
                print(line, flush=True)
    except KeyboardInterrupt:
        print(f"\nstopped. Resume with: {me} --resume {thread_id}", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - one line and the way on
        print(f"failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        print(f"after a fix, resume with: {me} --resume {thread_id}", file=sys.stderr)
        return 1
    state = pipeline.get_state(thread_id, checkpointer=store).values
    path = write_report(
        pipeline, state, thread_id=thread_id, checkpointer=store, folder=args.reports
    )
    print("\n" + state["draft_article"])
    print(f"\nloop ended by: {state['agent_status']['refine']}; thread: {thread_id}")
    print(f"report: {path}")
    target = _shown(ENTRY) + ":pipeline"
    print(
        f"list runs:  graphflow runs{'' if store == 'sqlite:///runs.db' else f' --checkpointer {store}'}"
    )
    print(f"draw it:    graphflow draw {target} --thread {thread_id} -o team.html")
    return 0
