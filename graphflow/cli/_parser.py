"""The `graphflow` argument parser (argparse only: building it imports no run machinery)."""

from __future__ import annotations

import argparse

from graphflow._internal.approval import APPROVE, REJECT
from graphflow.cli._batch import add_batch_parser
from graphflow.cli._kinds import format_help
from graphflow.cli._ui import add_ui_parser

__all__ = ("DESCRIPTION", "parser")

DESCRIPTION = "Run, resume, inspect and draw graphflow agent trees from a terminal."

EPILOG = """\
A TARGET is path/to/file.py:attr, package.module:attr, or a spec file (team.yaml, team.json).
Runs are stored by the checkpointer (default sqlite:///runs.db; --checkpointer or
GRAPHFLOW_CHECKPOINTER), which also records each run's target: `graphflow resume THREAD` needs no
target. Exit codes: 0 done, 1 failed (the run can be resumed), 2 bad usage, target, input or
thread, 3 waiting for an answer, 130 stopped with Ctrl-C or SIGTERM (the run can be resumed).

examples:
  graphflow run app.py:team "Huawei Pura X"
  graphflow runs
  graphflow resume run-1a2b3c4d
  graphflow draw app.py:team -o team.html
"""


def parser(version: str) -> argparse.ArgumentParser:
    """The parser of the `graphflow` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--checkpointer",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="memory:, sqlite:///path.db (default sqlite:///runs.db) or postgresql://...",
    )
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
    )
    top = argparse.ArgumentParser(
        prog="graphflow",
        description=DESCRIPTION,
        epilog=EPILOG,
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"graphflow {version}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, parents=[common])

    def views(p: argparse.ArgumentParser) -> None:
        p.add_argument("--plain", action="store_true", help="one line per event (no live view)")
        p.add_argument("--json", action="store_true", help="every event as a JSON line")

    run = command("run", "run an agent on an input, showing it live")
    run.add_argument("target", help="file.py:attr, package.module:attr or a spec file")
    run.add_argument("input", help="the input text, or a JSON object of state keys")
    run.add_argument("--thread-id", default=None, help="the run's thread (default: a new one)")
    run.add_argument(
        "--text", action="store_true", help="take the input as text even if it looks like JSON"
    )
    views(run)
    for name, help in (
        ("resume", "continue a crashed, stopped or interrupted run"),
        ("approve", "answer a run's pending approvals interactively, then continue it"),
        ("show", "a run's agents, outputs, errors and pending interrupts"),
    ):
        p = command(name, help)
        p.add_argument("target", metavar="[TARGET] THREAD", help="the run's thread")
        p.add_argument("thread_id", nargs="?", default=None, help=argparse.SUPPRESS)
        if name == "resume":
            p.add_argument("--answer", default=None, help="JSON answer to the pending interrupt")
        if name == "approve":
            p.add_argument("--decision", choices=[APPROVE, REJECT], default=None)
        if name != "show":
            views(p)
    runs = command("runs", "list the runs in the store")
    runs.add_argument("target", nargs="?", default=None, help="only this agent's runs")
    draw = command("draw", "draw an agent tree")
    draw.add_argument("target")
    draw.add_argument(
        "-f",
        "--format",
        default=None,
        metavar="FORMAT",
        help=format_help(),
    )
    draw.add_argument(
        "-o", "--output", default=None, help="write to this file; its suffix picks the format"
    )
    draw.add_argument("--xray", action="store_true", help="also show LangGraph's own nodes")
    draw.add_argument(
        "--xray-depth",
        type=int,
        default=None,
        metavar="N",
        help="like --xray, down to N levels of nested agents",
    )
    draw.add_argument("--dataflow", action="store_true", help="show who writes and reads each key")
    draw.add_argument(
        "--thread", default=None, help="colour the drawing from this run's checkpoints"
    )
    command("schema", "print the JSON Schema of spec files")
    add_batch_parser(command)
    add_ui_parser(command)
    return top
