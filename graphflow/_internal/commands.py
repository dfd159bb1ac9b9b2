"""The commands graphflow prints for a person to paste: one home for their wording.

Every printed command is shell-quoted (a thread named `x; touch PWNED #` pasted back is one
argument, not two commands), names no password (a store URL's password is left out: PostgreSQL
reads it from `PGPASSWORD` or `~/.pgpass`), and works from where the user stands: `graphflow` when
that name finds this installation, else the console script's path, else `python -m graphflow`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = (
    "DEFAULT_CHECKPOINTER",
    "cli_words",
    "has_password",
    "password_note",
    "python_words",
    "resume_command",
    "resume_hint",
    "run_command",
    "shell_join",
    "store_words",
    "without_password",
)

DEFAULT_CHECKPOINTER = "sqlite:///runs.db"
"""The store of `graphflow` commands when neither --checkpointer nor GRAPHFLOW_CHECKPOINTER is set."""

_URL_PASSWORD = re.compile(r"^([a-z][a-z0-9+.-]*://[^:/@\s]+):[^@\s]*@", re.I)
# (values stop at a quote: the CLI also cleans whole error messages that quote a URL)
_QUERY_PASSWORD = re.compile(r"([?&])password=[^&\s'\"]*(&?)", re.I)
_CONNINFO_PASSWORD = re.compile(r"\s*\bpassword\s*=\s*('(?:[^'\\]|\\.)*'|[^\s'\"]+)", re.I)


def without_password(url: str) -> str:
    """`url` with its password left out (`user:pw@` → `user@`, `?password=` and `password=` dropped).

    Left out rather than masked, so that the command still works as printed when the password
    comes from `PGPASSWORD` or `~/.pgpass`.
    """
    text = _URL_PASSWORD.sub(r"\1@", url)
    # `?password=x&y=1` → `?y=1`; `?password=x` and `&password=x` at the end go with their mark
    text = _QUERY_PASSWORD.sub(lambda m: m.group(1) if m.group(2) else "", text)
    return _CONNINFO_PASSWORD.sub("", text).strip()


def has_password(url: str) -> bool:
    """Whether `url` carries a password that a printed command leaves out."""
    return without_password(url) != url


def shell_join(words: Iterable[str]) -> str:
    """`words` as one command line for a POSIX shell, each quoted where it needs to be."""
    return shlex.join(str(w) for w in words)


def _shown_path(path: Path) -> str:
    """`path` relative to the current folder when it is below it, else absolute."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    if relative.startswith(".."):
        return str(path)
    return relative if os.sep in relative else f".{os.sep}{relative}"


def python_words() -> list[str]:
    """How to start this Python: `python` when that name finds it, else its path."""
    for name in ("python", "python3"):
        found = shutil.which(name)
        if found and _same_file(found, sys.executable):
            return [name]
    return [_shown_path(Path(sys.executable))]


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def cli_words() -> list[str]:
    """How to start the `graphflow` command from here, as words of a command line."""
    script = Path(sys.executable).parent / ("graphflow.exe" if os.name == "nt" else "graphflow")
    found = shutil.which("graphflow")
    if found and script.is_file() and _same_file(found, str(script)):
        return ["graphflow"]
    if script.is_file():
        return [_shown_path(script)]
    return [*python_words(), "-m", "graphflow"]


def store_words(checkpointer: str | None) -> list[str]:
    """`--checkpointer URL` when a command needs it to find the same store, else nothing.

    Nothing when the store is the one the command would pick by itself (GRAPHFLOW_CHECKPOINTER,
    else the default).
    """
    if checkpointer is None:
        return []
    default = os.environ.get("GRAPHFLOW_CHECKPOINTER") or DEFAULT_CHECKPOINTER
    if checkpointer == default:
        return []
    return ["--checkpointer", without_password(checkpointer)]


def resume_command(thread_id: str, checkpointer: str | None = None, *extra: str) -> str:
    """The shortest `graphflow resume` command that continues `thread_id`, ready to paste."""
    return shell_join([*cli_words(), "resume", thread_id, *extra, *store_words(checkpointer)])


def run_command(*words: str) -> str:
    """`graphflow WORDS...`, ready to paste."""
    return shell_join([*cli_words(), *words])


def password_note(checkpointer: str | None) -> str:
    """A note for a printed command whose store URL had its password left out ("" if none)."""
    if checkpointer is None or not has_password(checkpointer) or not store_words(checkpointer):
        return ""
    return " (the store's password is left out: set PGPASSWORD, or use GRAPHFLOW_CHECKPOINTER)"


def resume_hint(thread_id: str, checkpointer: str | None = None) -> str:
    """How to continue a run, for Python and for a shell: `agent.resume('t1')` or the command."""
    return (
        f"agent.resume({thread_id!r}), or from a shell: {resume_command(thread_id, checkpointer)}"
        f"{password_note(checkpointer)}"
    )
