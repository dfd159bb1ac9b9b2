"""`load_spec`: a spec file read as data (see `_yaml`) and built with its folder's modules."""

from __future__ import annotations

from pathlib import Path

from graphflow.agents import Agent
from graphflow.exceptions import SpecError
from graphflow.spec._build import agent_from_spec
from graphflow.spec._yaml import MAX_SPEC_BYTES, parse

__all__ = ("load_spec",)


def load_spec(path: str | Path) -> Agent:
    """The agent tree described by a YAML (`.yaml`/`.yml`) or JSON (`.json`) file.

    Import paths name modules next to the file first (each spec folder is a private package,
    so two folders' `helpers.py` never mix), then installed ones. Nothing here needs model
    credentials: a `"openai:..."` model is checked for its key when a run starts. MCP servers
    the spec starts are the tree's: `with load_spec(...) as team:` or `team.close()` stops
    them (so does the end of the process).

    Raises:
        SpecError: the file is missing, too large or malformed (too deep, an alias bomb or
            cycle, a duplicate key), or a field is invalid (names file, line, field path).
    """
    file = Path(path)
    if not file.is_file():
        raise SpecError(f"no spec file {str(file)!r}; pass a .yaml, .yml or .json file")
    try:
        size = file.stat().st_size
        if size > 4 * MAX_SPEC_BYTES:  # a fast refusal before reading; `parse` counts characters
            raise SpecError(
                f"the spec file is {size:,} bytes; a spec is far smaller", file=str(file)
            )
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read the spec: {exc}", file=str(file)) from None
    data, lines = parse(text, str(file))
    return agent_from_spec(data, lines=lines, file=str(file), folder=file.resolve().parent)
