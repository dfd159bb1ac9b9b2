"""`graphflow run | resume | approve | runs | show | draw | schema` — agent trees from a terminal.

A TARGET is `path/to/file.py:attr`, `package.module:attr`, or a spec file (`team.yaml`,
`team.json`). Runs are stored by the checkpointer (default `sqlite:///runs.db`; --checkpointer or
GRAPHFLOW_CHECKPOINTER), which also records each run's target, so `graphflow resume THREAD`
needs no target. Exit codes: 0 done, 1 failed (the run can be resumed), 2 bad usage, target,
input or thread, 3 interrupted (waiting for an answer), 130 stopped with Ctrl-C (resumable).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import traceback
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graphflow import events as ev
from graphflow.agents.base import Agent
from graphflow.exceptions import (
    CheckpointStoreError,
    CheckpointTypeError,
    GraphflowConfigError,
    GraphflowError,
    RunStateError,
)
from graphflow.strategies.registry import output_key
from graphflow.visualize.formats import format_help

__all__ = ("CliError", "console", "load_agent", "main")

DEFAULT_CHECKPOINTER = "sqlite:///runs.db"
TARGET_KEY = "graphflow_target"
"""Checkpoint metadata key under which a CLI run records its target."""

DONE, FAILED, USAGE, INTERRUPTED, STOPPED = 0, 1, 2, 3, 130


class CliError(Exception):
    """A one-line error of the command line, with its exit code."""

    def __init__(self, message: str, code: int = USAGE) -> None:
        super().__init__(message)
        self.code = code


# -- targets -----------------------------------------------------------------------------------


def load_agent(target: str) -> Agent:
    """The agent a TARGET names: `file.py:attr`, `module:attr`, or a spec file."""
    if target.endswith((".yaml", ".yml", ".json")):
        from graphflow.spec import load_spec

        return load_spec(target)
    where, _, attr = target.rpartition(":")
    if not where or not attr:
        raise CliError(
            f"target {target!r} should look like app.py:team, mypkg.module:team or team.yaml"
        )
    if where.endswith(".py") or os.sep in where:
        path = Path(where).resolve()
        if not path.is_file():
            raise CliError(f"no file {where} (target {target!r})")
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise CliError(f"cannot import {where} (target {target!r})")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        try:
            spec.loader.exec_module(module)
        except GraphflowError:
            raise
        except Exception as exc:
            raise CliError(f"importing {where} failed: {type(exc).__name__}: {exc}") from exc
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise CliError(f"cannot import module {where!r} (target {target!r}): {exc}") from exc
    if not hasattr(module, attr):
        names = sorted(n for n, v in vars(module).items() if isinstance(v, Agent))
        raise CliError(
            f"{where} has no attribute {attr!r}; its agents: {', '.join(names) or 'none'}"
        )
    agent = getattr(module, attr)
    if not isinstance(agent, Agent):
        raise CliError(f"{target} is {type(agent).__name__}, not a graphflow Agent")
    return agent


def _absolute(target: str) -> str:
    where, sep, attr = target.rpartition(":")
    if target.endswith((".yaml", ".yml", ".json")):
        return str(Path(target).resolve())
    if where.endswith(".py") or os.sep in where:
        return f"{Path(where).resolve()}{sep}{attr}"
    return target


def _recorded(target: str) -> Any:
    """The run config that records `target` in the checkpoints (for resume, show, runs)."""
    return {"metadata": {TARGET_KEY: _absolute(target)}}


# -- the store ---------------------------------------------------------------------------------


def _check_store(url: str) -> None:
    """A SQLite store that does not exist yet has no runs: say so, and create nothing."""
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :]).expanduser()
        if str(path) != ":memory:" and not path.is_file():
            raise CliError(f"no run store at {path} ({url}): nothing has run with it yet")


def _saver(url: str) -> Any:
    from graphflow.checkpoint import resolve_checkpointer

    _check_store(url)
    return resolve_checkpointer(url)


def _target_of(saver: Any, thread_id: str) -> str | None:
    """The target recorded by the newest root checkpoint that has one.

    A run continued from Python (`agent.resume`) writes checkpoints without it, so the newest
    checkpoint alone is not enough.
    """
    for found in saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}):
        target = (found.metadata or {}).get(TARGET_KEY)
        if target:
            return str(target)
    return None


def _stored_target(url: str, thread_id: str, command: str) -> str:
    saver = _saver(url)
    found = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    if found is None:
        raise CliError(f"no run is stored under thread {thread_id!r} in {url}; see graphflow runs")
    target = _target_of(saver, thread_id)
    if not target:
        raise CliError(
            f"thread {thread_id!r} in {url} was not started by graphflow run; name its target: "
            f"graphflow {command} TARGET {thread_id}"
        )
    return str(target)


def _resume_command(args: argparse.Namespace, thread_id: str) -> str:
    store = (
        "" if args.checkpointer == DEFAULT_CHECKPOINTER else f" --checkpointer {args.checkpointer}"
    )
    return f"graphflow{store} resume {thread_id}"


# -- running -----------------------------------------------------------------------------------


def _parse_input(text: str) -> Any:
    if not text.strip():
        raise CliError("the input is empty; pass the text to work on, or a JSON object of keys")
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise CliError(f"the input looks like JSON but is not valid: {exc}") from None
    return text


def _outputs(agent: Agent, state: Any) -> dict[str, Any]:
    """What the agents wrote, in tree order (the whole public state when they wrote nothing)."""
    values = dict(state)
    keys = [output_key(a) for a in agent.walk()]
    shown = {k: values[k] for k in keys if k and k in values}
    return shown or {
        k: v
        for k, v in values.items()
        if k not in ("messages", "agent_status") and not str(k).startswith("gf_")
    }


def _print_outputs(agent: Agent, state: Any, *, readable: bool) -> None:
    """The outputs: one JSON object, or on a terminal each key over its text as written."""
    shown = _outputs(agent, state)
    if not readable:
        print(json.dumps(shown, indent=2, ensure_ascii=False, default=str))
        return
    for key, value in shown.items():
        text = value if isinstance(value, str) else json.dumps(value, indent=2, default=str)
        print(f"\n── {key} ──\n{text}")


def _watch(
    agent: Agent, events: Iterator[ev.Event], args: argparse.Namespace, thread_id: str
) -> int:
    """Show a run's events; the exit code."""
    from graphflow._cli_view import make_view

    view = make_view(agent, json_lines=args.json, plain=args.plain)
    last: ev.Event | None = None
    try:
        for event in _in_background(events):
            view.show(event)
            last = event
    except KeyboardInterrupt:
        view.close()
        _say(f"stopped. Resume with: {_resume_command(args, thread_id)}")
        return STOPPED
    except BaseException:
        view.close()
        raise
    view.close()
    if isinstance(last, ev.Interrupted):
        answers = [p.get("value") for p in last.pending]
        _say(f"waiting for an answer: {json.dumps(answers, default=str, ensure_ascii=False)}")
        _say(
            f"answer with: graphflow approve {thread_id}  or  "
            f"{_resume_command(args, thread_id)} --answer JSON"
        )
        return INTERRUPTED
    if isinstance(last, ev.RunFinished) and not args.json:
        _print_outputs(agent, last.state, readable=view.on_terminal)
    return DONE


_END = object()
_workers: list[Any] = []  # the threads that produce a run's events (see `console`)


def _in_background(events: Iterator[ev.Event]) -> Iterator[ev.Event]:
    """`events`, produced by a daemon thread.

    Ctrl-C then reaches this (main) thread at once: unwinding through LangGraph's executor
    would first wait for the model or tool calls in flight. The run's checkpoints are written
    step by step, so abandoning the thread loses nothing `resume` cannot redo.
    """
    import queue
    import threading

    box: queue.Queue[Any] = queue.Queue()

    def produce() -> None:
        try:
            for event in events:
                box.put(event)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            box.put(exc)
        box.put(_END)

    worker = threading.Thread(target=produce, name="graphflow-run", daemon=True)
    _workers.append(worker)
    worker.start()
    while True:
        try:
            item = box.get(timeout=0.2)
        except queue.Empty:
            continue
        if item is _END:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


def _say(text: str) -> None:
    print(f"graphflow: {text}", file=sys.stderr, flush=True)


def _cmd_run(args: argparse.Namespace) -> int:
    agent = load_agent(args.target)
    data = _parse_input(args.input)
    if args.thread_id is not None and not args.thread_id.strip():
        raise CliError(
            f"--thread-id {args.thread_id!r} cannot name a run; give a name, or leave the option "
            "out for a new thread"
        )
    agent.compile(checkpointer=args.checkpointer)  # a store that cannot work fails first
    thread_id = args.thread_id or f"run-{uuid.uuid4().hex[:8]}"
    args.thread = thread_id
    _say(f"thread {thread_id} (resume with: {_resume_command(args, thread_id)})")
    return _stream(args, agent, data, thread_id, args.target)


def _stream(args: argparse.Namespace, agent: Agent, data: Any, thread_id: str, target: str) -> int:
    """Run or continue `agent` on the thread, recording `target`; show it; the exit code."""
    events = agent.stream(
        data,
        thread_id=thread_id,
        checkpointer=args.checkpointer,
        config=_recorded(target),
        events=True,
    )
    return _watch(agent, events, args, thread_id)


def _target_and_thread(args: argparse.Namespace) -> tuple[Agent, str]:
    if args.thread_id is None:
        thread_id = args.target
        target = _stored_target(args.checkpointer, thread_id, args.command)
    else:
        target, thread_id = args.target, args.thread_id
        _check_store(args.checkpointer)
    args.thread = thread_id
    args.loaded_from = target
    return load_agent(target), thread_id


def _resume(args: argparse.Namespace, agent: Agent, thread_id: str, answer: Any) -> int:
    from langgraph.types import Command

    data: Command | None = None if answer is None else Command(resume=answer)
    return _stream(args, agent, data, thread_id, args.loaded_from)


def _cmd_resume(args: argparse.Namespace) -> int:
    agent, thread_id = _target_and_thread(args)
    answer = None
    if args.answer is not None:
        try:
            answer = json.loads(args.answer)
        except json.JSONDecodeError as exc:
            raise CliError(f"--answer is not valid JSON: {exc}") from None
    return _resume(args, agent, thread_id, answer)


def _cmd_approve(args: argparse.Namespace) -> int:
    agent, thread_id = _target_and_thread(args)
    snapshot = agent.get_state(thread_id, checkpointer=args.checkpointer)
    pending = list(snapshot.interrupts or ())
    if not pending:
        raise CliError(f"thread {thread_id!r} is not waiting for an approval")
    answers: dict[str, Any] = {}
    for intr in pending:
        value = getattr(intr, "value", intr)
        answers[intr.id] = _ask(value, args.decision)
    answer = next(iter(answers.values())) if len(answers) == 1 else answers
    return _resume(args, agent, thread_id, answer)


def _ask(value: Any, decision: str | None) -> dict[str, Any]:
    if isinstance(value, dict) and value.get("type") == "tool_approval":
        shown = f"{value.get('agent')} wants to call {value.get('tool')}({json.dumps(value.get('args'), default=str)})"
    else:
        shown = json.dumps(value, default=str, ensure_ascii=False)
    print(f"approval needed: {shown}", file=sys.stderr)
    if decision is None:
        print("approve, reject or edit? [a/r/e] ", end="", file=sys.stderr, flush=True)
        reply = sys.stdin.readline().strip().lower()
        decision = {"a": "approve", "r": "reject", "e": "edit", "": "approve"}.get(reply, reply)
    if decision == "reject":
        print("reason: ", end="", file=sys.stderr, flush=True)
        return {"decision": "reject", "reason": sys.stdin.readline().strip() or "rejected"}
    if decision == "edit":
        print("new arguments (JSON): ", end="", file=sys.stderr, flush=True)
        try:
            edited = json.loads(sys.stdin.readline())
        except json.JSONDecodeError as exc:
            raise CliError(f"the edited arguments are not valid JSON: {exc}") from None
        return {"decision": "edit", "args": edited}
    if decision != "approve":
        raise CliError(f"unknown decision {decision!r}; answer a (approve), r (reject) or e (edit)")
    return {"decision": "approve"}


# -- inspecting --------------------------------------------------------------------------------


def _cmd_runs(args: argparse.Namespace) -> int:
    from graphflow.checkpoint.runs import thread_ids

    rows: list[tuple[str, ...]] = []
    if args.target:
        _check_store(args.checkpointer)
        agent = load_agent(args.target)
        infos = [(agent.name, i) for i in agent.runs(checkpointer=args.checkpointer)]
    else:
        saver = _saver(args.checkpointer)
        agents: dict[str, Agent] = {}
        infos = []
        for tid in thread_ids(saver):
            try:
                target = _target_of(saver, tid)
            except (CheckpointStoreError, CheckpointTypeError):  # a damaged thread hides no other
                rows.append((tid, "?", "unreadable", "", "", ""))
                continue
            if not target:
                rows.append((tid, "?", "?", "", "", ""))
                continue
            try:
                agent = agents[target] if target in agents else load_agent(target)
            except (CliError, GraphflowError) as exc:
                rows.append((tid, target, f"unloadable: {exc}", "", "", ""))
                continue
            agents[target] = agent
            try:
                info = _info(agent, args, tid)
            except (CheckpointStoreError, CheckpointTypeError):
                rows.append((tid, agent.name, "unreadable", "", "", ""))
                continue
            if info is not None:
                infos.append((agent.name, info))
    for name, info in infos:
        rows.append(
            (
                info.thread_id,
                name,
                info.status,
                info.agent or "",
                str(info.step),
                str(info.updated_at or "")[:19],
            )
        )
    _table(("thread", "agent", "status", "last agent", "step", "updated"), rows)
    return DONE


def _info(agent: Agent, args: argparse.Namespace, thread_id: str) -> Any:
    from dataclasses import replace

    from graphflow.checkpoint.leases import lease_store
    from graphflow.checkpoint.runs import run_info
    from graphflow.runtime import graphs

    graph = graphs.compiled(agent, args.checkpointer)
    info = run_info(graph, thread_id, agents=[a.name for a in agent.walk()])
    if info is not None and info.status == "running":
        # unfinished: a live process holds its lease, or the process running it died
        holder = lease_store(args.checkpointer, graph.checkpointer).holder(thread_id)
        if holder is None or not holder.alive():
            info = replace(info, status="crashed")
    return info


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(*header)
        for row in rows:
            table.add_row(*row)
        Console().print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    for row in (header, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def _cmd_show(args: argparse.Namespace) -> int:
    agent, thread_id = _target_and_thread(args)
    snapshot = agent.get_state(thread_id, checkpointer=args.checkpointer)
    info = _info(agent, args, thread_id)
    values = dict(snapshot.values or {})
    statuses = values.get("agent_status") or {}
    print(
        f"thread {thread_id}: {info.status} (agent {agent.name}, step {info.step}, updated {info.updated_at})"
    )
    if "input" in values:
        print(f"input: {_clip(values['input'])}")
    print("agents:")
    for sub in agent.walk():
        status = statuses.get(sub.name, "not run")
        if sub.name == info.agent and info.status != "done":
            status = info.status  # the innermost agent the run is in (or stopped in)
        key = output_key(sub)
        output = f"  {key} = {_clip(values.get(key))}" if key and key in values else ""
        print(f"  {sub.name:<20} {status:<14}{output}".rstrip())
    if info.error:
        print(f"error: {info.error}")
    for intr in snapshot.interrupts or ():
        print(
            f"pending: {getattr(intr, 'id', '')} {json.dumps(getattr(intr, 'value', intr), default=str)}"
        )
    if info.status in ("failed", "crashed", "interrupted"):
        print(f"resume with: {_resume_command(args, thread_id)}")
    return DONE


def _clip(value: Any, limit: int = 70) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cmd_draw(args: argparse.Namespace) -> int:
    agent = load_agent(args.target)
    options: dict[str, Any] = {}
    if args.xray_depth is not None:
        if args.xray_depth < 1:
            raise CliError(
                f"--xray-depth takes a whole number of levels, 1 or more (got {args.xray_depth})"
            )
        options["xray"] = args.xray_depth
    elif args.xray:
        options["xray"] = True
    if args.dataflow:
        options["dataflow"] = True
    if args.thread:
        options["thread_id"] = args.thread
        options["checkpointer"] = args.checkpointer
    if args.output:
        # the format follows the file's suffix unless -f names one
        written = agent.draw_to(args.output, format=args.format, **options)
        _say(f"wrote {written}")
        return DONE
    content = agent.draw(args.format or "mermaid", **options)
    if isinstance(content, bytes):  # svg / png
        sys.stdout.buffer.write(content)
        sys.stdout.buffer.flush()
    else:
        print(content.rstrip("\n"))
    return DONE


def _cmd_schema(args: argparse.Namespace) -> int:
    from graphflow.spec import spec_schema

    print(json.dumps(spec_schema(), indent=2))
    return DONE


def _cmd_ui(args: argparse.Namespace) -> int:
    from graphflow._cli_ui import cmd_ui

    return cmd_ui(args, load_agent)


# -- the parser --------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--checkpointer",
        default=argparse.SUPPRESS,
        help="memory:, sqlite:///path.db (default sqlite:///runs.db) or postgresql://...",
    )
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
    )
    parser = argparse.ArgumentParser(
        prog="graphflow", description=(__doc__ or "").splitlines()[0], parents=[common]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, parents=[common])

    def views(p: argparse.ArgumentParser) -> None:
        p.add_argument("--plain", action="store_true", help="one line per event (no live view)")
        p.add_argument("--json", action="store_true", help="every event as a JSON line")

    run = command("run", "run an agent on an input, showing it live")
    run.add_argument("target")
    run.add_argument("input", help="the input text, or a JSON object of state keys")
    run.add_argument("--thread-id", default=None)
    views(run)
    for name, help in (
        ("resume", "continue a crashed, stopped or interrupted run"),
        ("approve", "answer a run's pending approvals interactively, then continue it"),
        ("show", "a run's agents, outputs, errors and pending interrupts"),
    ):
        p = command(name, help)
        p.add_argument("target", help="THREAD, or TARGET THREAD")
        p.add_argument("thread_id", nargs="?", default=None)
        if name == "resume":
            p.add_argument("--answer", default=None, help="JSON answer to the pending interrupt")
        if name == "approve":
            p.add_argument("--decision", choices=["approve", "reject"], default=None)
        if name != "show":
            views(p)
    runs = command("runs", "list the runs in the store")
    runs.add_argument("target", nargs="?", default=None)
    draw = command("draw", "draw an agent tree")
    draw.add_argument("target")
    draw.add_argument(
        "-f",
        "--format",
        default=None,
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
    from graphflow._cli_ui import add_ui_parser

    add_ui_parser(command)
    return parser


_COMMANDS = {
    "run": _cmd_run,
    "resume": _cmd_resume,
    "approve": _cmd_approve,
    "runs": _cmd_runs,
    "show": _cmd_show,
    "draw": _cmd_draw,
    "schema": _cmd_schema,
    "ui": _cmd_ui,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `graphflow` command; returns the exit code."""
    args = _parser().parse_args(argv)
    if not hasattr(args, "checkpointer"):
        args.checkpointer = os.environ.get("GRAPHFLOW_CHECKPOINTER", DEFAULT_CHECKPOINTER)
    debug = getattr(args, "debug", False)
    args.debug = debug
    args.thread = getattr(args, "thread", None)
    try:
        return _COMMANDS[args.command](args)
    except BrokenPipeError:
        # the reader of stdout went away (`graphflow run ... | head`): stop, quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        _say("stdout was closed; stopped")
        if args.thread and args.command in ("run", "resume", "approve"):
            _say(f"the run can continue: {_resume_command(args, args.thread)}")
        return FAILED
    except KeyboardInterrupt:
        _say("stopped")
        return STOPPED
    except CliError as exc:
        _fail(exc, debug)
        return exc.code
    except (GraphflowConfigError, RunStateError) as exc:
        _fail(exc, debug)
        return USAGE
    except Exception as exc:  # noqa: BLE001 - the CLI explains every error in a line or two
        _fail(exc, debug)
        thread = getattr(args, "thread", None)
        # no run to continue: `run` on a store that never opened, or a damaged thread
        stuck = (
            isinstance(exc, CheckpointStoreError)
            and not exc.resumable
            and (args.command == "run" or isinstance(exc.__cause__, ValueError | TypeError))
        )
        if thread and args.command in ("run", "resume", "approve") and not stuck:
            _say(f"the run can continue: {_resume_command(args, thread)}")
        return FAILED


def _fail(exc: BaseException, debug: bool) -> None:
    if debug:
        traceback.print_exception(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, CliError):
        _say(text)
        return
    hint = "" if debug else " (--debug shows the traceback)"
    _say(f"{type(exc).__name__}: {text}{hint}")


def console() -> None:
    """The `graphflow` console script: `main()`, then an exit that does not wait for a run.

    After Ctrl-C (or a closed stdout) a model or tool call may still run in the worker thread;
    waiting for it would keep the process alive, and LangGraph, finding its executor shut down
    under it, would print tracebacks. The run's checkpoints are already written, so the
    process leaves at once.
    """
    code = main()
    if code == STOPPED or any(w.is_alive() for w in _workers):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:  # a closed pipe
                pass
        os._exit(code)
    raise SystemExit(code)


if __name__ == "__main__":
    console()
