"""`graphflow draw | schema`: an agent tree drawn, and the JSON Schema of spec files."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from graphflow.cli._errors import DONE, CliError
from graphflow.cli._say import say
from graphflow.cli._targets import load_agent

__all__ = ("cmd_draw", "cmd_schema")


def cmd_draw(args: argparse.Namespace) -> int:
    """`graphflow draw TARGET [-f FORMAT] [-o FILE] [--xray] [--dataflow] [--thread T]`."""
    if args.xray_depth is not None and args.xray_depth < 1:
        raise CliError(
            f"--xray-depth takes a whole number of levels, 1 or more (got {args.xray_depth})"
        )
    agent = load_agent(args.target)
    options: dict[str, Any] = {}
    if args.xray_depth is not None:
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
        say(f"wrote {written}")
        return DONE
    content = agent.draw(args.format or "mermaid", **options)
    if isinstance(content, bytes):  # svg / png
        sys.stdout.buffer.write(content)
        sys.stdout.buffer.flush()
    else:
        print(content.rstrip("\n"))
    return DONE


def cmd_schema(args: argparse.Namespace) -> int:
    """`graphflow schema`."""
    from graphflow.spec import spec_schema

    print(json.dumps(spec_schema(), indent=2))
    return DONE
