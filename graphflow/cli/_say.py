"""The CLI's messages to the person: one line each, on stderr, prefixed `graphflow:`."""

from __future__ import annotations

import sys

__all__ = ("say",)


def say(text: str) -> None:
    """Print one message line for the person (stdout stays for results)."""
    print(f"graphflow: {text}", file=sys.stderr, flush=True)
