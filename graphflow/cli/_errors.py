"""The CLI's exit codes, and its one-line error (`graphflow.exceptions.CliError`)."""

from __future__ import annotations

from graphflow.exceptions import CliError

__all__ = ("DONE", "FAILED", "INTERRUPTED", "STOPPED", "USAGE", "CliError")

DONE, FAILED, USAGE, INTERRUPTED, STOPPED = 0, 1, 2, 3, 130
