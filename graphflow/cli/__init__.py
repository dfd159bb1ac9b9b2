"""`graphflow run | resume | approve | runs | show | draw | schema` — agent trees from a terminal.

The package is light to import: `graphflow --help` loads argparse and this package, nothing of
LangGraph; each command imports what it needs. Modules: `_parser` (the options), `_running`
(run, resume, approve), `_inspect` (runs, show), `_draw` (draw, schema), `_targets` (TARGETs),
`_store` (the run store), `_foreground` (a clean stop at any moment), `_kinds` (what the CLI
asks about kinds and drawing formats), `_view` (how a run is shown while it runs). Printed commands come from `graphflow._internal.commands`.

For a program of its own (like `examples/competitive_analysis.py`), `follow`, `stop_on_signals`,
`mute_interrupts`, `mark_stopped` and `exit_now` give the same clean Ctrl-C as `graphflow run`.
"""

from graphflow.cli._app import console, main
from graphflow.cli._errors import CliError
from graphflow.cli._foreground import (
    exit_now,
    follow,
    mark_stopped,
    mute_interrupts,
    stop_on_signals,
)
from graphflow.cli._targets import TARGET_KEY, load_agent

__all__ = (
    "TARGET_KEY",
    "CliError",
    "console",
    "exit_now",
    "follow",
    "load_agent",
    "main",
    "mark_stopped",
    "mute_interrupts",
    "stop_on_signals",
)
