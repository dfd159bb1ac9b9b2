"""`graphflow run | draw | resume | runs` — run agent trees from the command line.

An agent is named as `path/to/file.py:attr` or `package.module:attr`. The checkpointer defaults
to the embedded `sqlite:///runs.db` (override with --checkpointer or GRAPHFLOW_CHECKPOINTER).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

from graphflow.agents.base import Agent
from graphflow.exceptions import GraphflowError

__all__ = ("load_agent", "main")

DEFAULT_CHECKPOINTER = "sqlite:///runs.db"


def load_agent(target: str) -> Agent:
    """Import `file.py:attr` or `module:attr` and return the agent it names."""
    where, _, attr = target.rpartition(":")
    if not where or not attr:
        raise SystemExit(f"graphflow: {target!r} should look like examples/app.py:pipeline")
    if where.endswith(".py") or os.sep in where:
        path = Path(where).resolve()
        if not path.exists():
            raise SystemExit(f"graphflow: no file {where}")
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    agent = getattr(module, attr, None)
    if not isinstance(agent, Agent):
        raise SystemExit(f"graphflow: {target} is {type(agent).__name__}, not a graphflow Agent")
    return agent


def _print_result(state: dict[str, Any]) -> None:
    shown = {k: v for k, v in state.items() if k != "messages" and not k.startswith("gf_")}
    print(json.dumps(shown, indent=2, ensure_ascii=False, default=str))


def _draw(agent: Agent, args: argparse.Namespace) -> None:
    from graphflow.visualize import draw, draw_to

    options: dict[str, Any] = {"xray": args.xray, "dataflow": args.dataflow}
    if args.thread:
        options.update(
            thread_id=args.thread, checkpointer=args.draw_checkpointer or args.checkpointer
        )
    if args.output:
        path = draw_to(agent, args.output, format=args.format, **options)
        print(f"wrote {path}", file=sys.stderr)
        return
    content = draw(agent, args.format or "mermaid", **options)
    if isinstance(content, bytes):
        sys.stdout.buffer.write(content)
    else:
        print(content, end="")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `graphflow` command."""
    parser = argparse.ArgumentParser(prog="graphflow", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpointer",
        default=os.environ.get("GRAPHFLOW_CHECKPOINTER", DEFAULT_CHECKPOINTER),
        help="memory:, sqlite:///path.db (default sqlite:///runs.db) or postgresql://...",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run an agent on an input")
    run.add_argument("agent")
    run.add_argument("input", help="the input text, or a JSON object of state keys")
    run.add_argument("--thread-id", default=None)
    draw = sub.add_parser("draw", help="draw an agent tree (to stdout, or to a file with -o)")
    draw.add_argument("agent")
    draw.add_argument(
        "-f",
        "--format",
        default=None,
        help="mermaid (default), dot, plantuml, ascii, json, html, svg, png",
    )
    draw.add_argument(
        "-o", "--output", default=None, help="write to this file; its suffix picks the format"
    )
    draw.add_argument("--xray", action="store_true", help="also show LangGraph's own nodes")
    draw.add_argument("--dataflow", action="store_true", help="show who writes and reads each key")
    draw.add_argument(
        "--thread", default=None, help="colour the drawing from this run's checkpoints"
    )
    draw.add_argument(
        "--checkpointer",
        dest="draw_checkpointer",
        default=None,
        help="the run's checkpointer (same as the global --checkpointer)",
    )
    resume = sub.add_parser("resume", help="continue a crashed or interrupted run")
    resume.add_argument("agent")
    resume.add_argument("thread_id")
    resume.add_argument("--value", default=None, help="JSON answer to a pending interrupt")
    runs = sub.add_parser("runs", help="list runs stored by the checkpointer")
    runs.add_argument("agent")
    args = parser.parse_args(argv)

    agent = load_agent(args.agent)
    try:
        if args.command == "draw":
            _draw(agent, args)
        elif args.command == "run":
            text = args.input
            data: Any = json.loads(text) if text.lstrip().startswith("{") else text
            thread_id = args.thread_id or f"run-{uuid.uuid4().hex[:8]}"
            print(f"thread: {thread_id}", file=sys.stderr)
            agent.invoke(data, thread_id=thread_id, checkpointer=args.checkpointer)
            _print_result(agent.get_state(thread_id, checkpointer=args.checkpointer).values)
        elif args.command == "resume":
            value = None if args.value is None else json.loads(args.value)
            snapshot = agent.get_state(args.thread_id, checkpointer=args.checkpointer)
            if value is None and not snapshot.next and not snapshot.tasks:
                print(
                    f"thread {args.thread_id}: the run has finished; nothing to resume",
                    file=sys.stderr,
                )
                _print_result(snapshot.values)
                return 0
            state = agent.resume(args.thread_id, value, checkpointer=args.checkpointer)
            _print_result(state)
        elif args.command == "runs":
            lister = getattr(agent, "runs", None)
            if lister is None:
                raise SystemExit("graphflow: this version cannot list runs")
            for info in lister(checkpointer=args.checkpointer):
                print(info)
    except GraphflowError as exc:
        print(f"graphflow: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
