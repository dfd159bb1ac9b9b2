"""`main()` and the console script: one command, its errors in a line, a clean stop at any moment."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable

from graphflow._internal.commands import (
    DEFAULT_CHECKPOINTER,
    resume_command,
    shell_join,
    without_password,
)
from graphflow.cli._errors import FAILED, STOPPED, USAGE, CliError
from graphflow.cli._foreground import (
    exit_now,
    mark_stopped,
    mute_interrupts,
    stop_on_signals,
    workers,
)
from graphflow.cli._parser import parser
from graphflow.cli._say import say

__all__ = ("console", "main")


def _commands() -> dict[str, Callable[[argparse.Namespace], int]]:
    from graphflow.cli._batch import cmd_batch
    from graphflow.cli._draw import cmd_draw, cmd_schema
    from graphflow.cli._inspect import cmd_runs, cmd_show
    from graphflow.cli._running import cmd_approve, cmd_resume, cmd_run
    from graphflow.cli._ui import cmd_ui

    return {
        "run": cmd_run,
        "resume": cmd_resume,
        "approve": cmd_approve,
        "runs": cmd_runs,
        "show": cmd_show,
        "draw": cmd_draw,
        "schema": cmd_schema,
        "batch": cmd_batch,
        "ui": cmd_ui,
    }


def _version() -> str:
    import graphflow

    return str(graphflow.__version__)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `graphflow` command; returns the exit code."""
    top = parser(_version())
    words = sys.argv[1:] if argv is None else argv
    if not words:
        top.print_help()
        return 0
    try:
        args = top.parse_args(words)
    except SystemExit as exc:  # --help, --version (0) or a usage error (2, already explained)
        return int(exc.code or 0)
    if args.command is None:
        top.print_help()
        return 0
    if not hasattr(args, "checkpointer"):
        args.checkpointer = os.environ.get("GRAPHFLOW_CHECKPOINTER") or DEFAULT_CHECKPOINTER
    args.debug = getattr(args, "debug", False)
    args.run_thread = None  # the thread a run, resume or approve works on, once known
    args.announced = False
    args.phase = "starting"
    args.where = None
    args.view = None
    try:
        return _commands()[args.command](args)
    except KeyboardInterrupt:
        return _stopped(args)
    except BrokenPipeError:
        # the reader of stdout went away (`graphflow run ... | head`): stop, quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        say("stdout was closed; stopped")
        if args.run_thread and args.announced and args.command in ("run", "resume", "approve"):
            say(f"the run can continue: {resume_command(args.run_thread, args.checkpointer)}")
        return FAILED
    except CliError as exc:
        _fail(exc, args.debug)
        return exc.code
    except Exception as exc:  # noqa: BLE001 - the CLI explains every error in a line or two
        return _failed(args, exc)


def _failed(args: argparse.Namespace, exc: Exception) -> int:
    from graphflow.exceptions import CheckpointStoreError, GraphflowConfigError, RunStateError

    _fail(exc, args.debug)
    if isinstance(exc, GraphflowConfigError | RunStateError):
        return USAGE
    thread = args.run_thread
    # no run to continue: `run` on a store that never opened, or a damaged thread
    stuck = (
        isinstance(exc, CheckpointStoreError)
        and not exc.resumable
        and (args.command == "run" or isinstance(exc.__cause__, ValueError | TypeError))
    )
    if thread and args.command in ("run", "resume", "approve") and not stuck:
        say(f"the run can continue: {resume_command(thread, args.checkpointer)}")
    return FAILED


def _stopped(args: argparse.Namespace) -> int:
    """Ctrl-C or SIGTERM: one line — what stopped, the thread, the command that goes on."""
    mute_interrupts()
    if args.view is not None:
        try:
            args.view.close()
        except Exception:  # noqa: BLE001 - the message below matters more than the view
            pass
    thread = args.run_thread
    if args.command in ("run", "resume", "approve") and thread and args.announced:
        mark_stopped(args.checkpointer, thread)  # listed `stopped`, not `crashed`
        where = f" in {args.where}" if args.where else ""
        how = resume_command(thread, args.checkpointer)
        say(f"stopped thread {thread}{where}. Resume with: {how}")
    elif args.command == "run":
        again = shell_join([*_cli_prefix(), *sys.argv[1:]]) if sys.argv[1:] else ""
        say(
            f"stopped while {args.phase}, before the run started: nothing to resume"
            + (f"; start it again with: {again}" if again else "")
        )
    else:
        say(f"stopped while {args.phase}")
    return STOPPED


def _cli_prefix() -> list[str]:
    from graphflow._internal.commands import cli_words

    return cli_words()


def _fail(exc: BaseException, debug: bool) -> None:
    if debug:
        traceback.print_exception(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = without_password(text) if "://" in text else text
    if isinstance(exc, CliError):
        say(text)
        return
    hint = "" if debug else " (--debug shows the traceback)"
    say(f"{type(exc).__name__}: {text}{hint}")


def console() -> None:
    """The `graphflow` console script: `main()`, then an exit that does not wait for a run.

    After Ctrl-C (or a closed stdout) a model or tool call may still run in a worker thread;
    waiting for it would keep the process alive, and LangGraph, finding its executor shut down
    under it, would print tracebacks. The run's checkpoints are already written, so the process
    leaves at once.
    """
    stop_on_signals()
    try:
        code = main()
    except KeyboardInterrupt:  # before main's own handler was reached
        mute_interrupts()
        say("stopped")
        code = STOPPED
    if code == STOPPED or any(w.is_alive() for w in workers):
        exit_now(code)
    raise SystemExit(code)
