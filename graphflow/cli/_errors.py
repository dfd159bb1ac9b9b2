"""The CLI's one-line error and its exit codes."""

from __future__ import annotations

__all__ = ("DONE", "FAILED", "INTERRUPTED", "STOPPED", "USAGE", "CliError")

DONE, FAILED, USAGE, INTERRUPTED, STOPPED = 0, 1, 2, 3, 130


class CliError(Exception):
    """A one-line error of the command line, with its exit code."""

    def __init__(self, message: str, code: int = USAGE) -> None:
        super().__init__(message)
        self.code = code
