"""A batch's inputs: from Python values or from a JSONL, CSV or plain-text file."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphflow.exceptions import InputError

__all__ = ("BadLine", "BatchInput", "as_inputs", "read_inputs")


@dataclass(frozen=True, kw_only=True)
class BatchInput:
    """One input of a batch."""

    id: str
    """Its key in the batch (names its thread): the given `id`, else its position."""
    value: Any
    """What the team is invoked with: a string, or a dict of state keys."""
    index: int = 0
    """Its position in the inputs."""
    line: int | None = None
    """The line of the inputs file it came from."""


@dataclass(frozen=True, kw_only=True)
class BadLine:
    """A line of an inputs file that holds no usable input (reported and skipped)."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


def _entry(value: Any, index: int, line: int | None = None) -> BatchInput:
    if isinstance(value, BatchInput):
        return BatchInput(id=value.id, value=value.value, index=index, line=value.line)
    if isinstance(value, dict) and "id" in value:
        rest = {k: v for k, v in value.items() if k != "id"}
        key = value["id"]
        if not isinstance(key, (str, int)) or isinstance(key, bool) or str(key).strip() == "":
            raise InputError(f"input {index}: id {key!r} must be a non-empty string or a number")
        if not rest:
            raise InputError(f"input {index} (id {key!r}) has an id but nothing to run with")
        return BatchInput(id=str(key), value=rest, index=index, line=line)
    return BatchInput(id=str(index), value=value, index=index, line=line)


def as_inputs(values: Iterable[Any]) -> list[BatchInput]:
    """Number the inputs and check their ids are unique.

    Raises:
        InputError: two inputs share an id, or an input is empty.
    """
    out: list[BatchInput] = []
    seen: dict[str, int] = {}
    for index, value in enumerate(values):
        if value is None or (isinstance(value, (str, dict, list)) and not value):
            raise InputError(f"input {index} is empty; every input needs something to run with")
        entry = _entry(value, index)
        if entry.id in seen:
            raise InputError(
                f"inputs {seen[entry.id]} and {index} share the id {entry.id!r}; ids name the "
                "inputs' threads, so each must be unique"
            )
        seen[entry.id] = index
        out.append(entry)
    return out


def read_inputs(
    path: str | Path, *, column: str | None = None
) -> tuple[list[BatchInput], list[BadLine]]:
    """The inputs in `path`, and the lines that hold none.

    The format follows the suffix: `.jsonl`/`.ndjson` (one JSON value a line: a string, or an
    object of state keys with an optional `id`), `.csv` (the `column` given, else a column named
    `input`, else the first; an `id` column names the inputs), anything else plain text (a line
    each). Empty and malformed lines are returned as `BadLine`s; the good ones still run.

    Raises:
        InputError: the file cannot be read, or a CSV has no such column.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the inputs file {str(file)!r}: {exc}") from None
    suffix = file.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows, bad = _jsonl(text)
    elif suffix == ".csv":
        rows, bad = _csv(text, column)
    else:
        rows, bad = _lines(text)
    inputs: list[BatchInput] = []
    seen: dict[str, int] = {}
    for line, value in rows:
        try:
            entry = _entry(value, len(inputs), line)
        except InputError as exc:
            bad.append(BadLine(line=line, reason=str(exc).split(": ", 1)[-1]))
            continue
        if entry.id in seen:
            bad.append(BadLine(line=line, reason=f"id {entry.id!r} repeats line {seen[entry.id]}"))
            continue
        seen[entry.id] = line
        inputs.append(entry)
    return inputs, sorted(bad, key=lambda b: b.line)


def _jsonl(text: str) -> tuple[list[tuple[int, Any]], list[BadLine]]:
    rows: list[tuple[int, Any]] = []
    bad: list[BadLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            bad.append(BadLine(line=number, reason="empty line"))
            continue
        try:
            value = json.loads(raw)
        except ValueError as exc:
            bad.append(BadLine(line=number, reason=f"not valid JSON ({exc.args[0]})"))
            continue
        if isinstance(value, str) and value.strip():
            rows.append((number, value))
        elif isinstance(value, dict) and value:
            rows.append((number, value))
        else:
            bad.append(
                BadLine(
                    line=number, reason="expected a non-empty string or an object of state keys"
                )
            )
    return rows, bad


def _csv(text: str, column: str | None) -> tuple[list[tuple[int, Any]], list[BadLine]]:
    reader = csv.DictReader(io.StringIO(text))
    fields = reader.fieldnames or []
    if not fields:
        raise InputError("the CSV inputs file has no header row; its first line names the columns")
    chosen = column or ("input" if "input" in fields else fields[0])
    if chosen not in fields:
        raise InputError(
            f"the CSV inputs file has no column {chosen!r}; its columns: {', '.join(fields)}"
        )
    rows: list[tuple[int, Any]] = []
    bad: list[BadLine] = []
    for record in reader:
        number = reader.line_num
        value = (record.get(chosen) or "").strip()
        if not value:
            bad.append(BadLine(line=number, reason=f"column {chosen!r} is empty"))
            continue
        key = (record.get("id") or "").strip() if chosen != "id" else ""
        rows.append((number, {"id": key, "input": value} if key else value))
    return rows, bad


def _lines(text: str) -> tuple[list[tuple[int, Any]], list[BadLine]]:
    rows: list[tuple[int, Any]] = []
    bad: list[BadLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.strip():
            rows.append((number, raw.strip()))
        else:
            bad.append(BadLine(line=number, reason="empty line"))
    return rows, bad
