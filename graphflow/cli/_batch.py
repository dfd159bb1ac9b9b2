"""`graphflow batch TARGET INPUTS --out results.jsonl`: a team over every line of a file.

Every input is its own durable thread in the store; running the same command again skips the
inputs that finished and resumes the others from their checkpoints. The results file holds one
JSON line per input, in input order: id, thread, status, outputs, usage, error.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphflow._internal.commands import password_note, run_command, store_words, without_password
from graphflow.cli._errors import USAGE
from graphflow.cli._say import say
from graphflow.cli._targets import absolute, load_agent

if TYPE_CHECKING:
    from graphflow.batch import BatchResult

__all__ = ("add_batch_parser", "cmd_batch", "load_agent_by_path")


def add_batch_parser(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add the `batch` command to the CLI's parser."""
    p = command("batch", "run a team over every input of a file (JSONL, CSV or text)")
    p.add_argument("target")
    p.add_argument("inputs", help="inputs file: .jsonl (string or object per line), .csv, or text")
    p.add_argument("--out", required=True, help="results file (JSON lines, in input order)")
    p.add_argument("--concurrency", type=int, default=4, help="inputs at once (default 4)")
    p.add_argument(
        "--batch-id", default=None, help="names the batch's threads (default: from the inputs)"
    )
    p.add_argument("--column", default=None, help="the CSV column holding the input")
    p.add_argument("--engine", choices=["local", "ray"], default="local")
    p.add_argument(
        "--ray-address",
        default=None,
        help="a running Ray cluster (default: start one on 127.0.0.1)",
    )
    p.add_argument("--plain", action="store_true", help="a line per finished input (no live view)")


class _Tally:
    """Counts for the live view and the closing line."""

    def __init__(self, total: int, concurrency: int) -> None:
        self.total = total
        self.concurrency = concurrency
        self.done = self.failed = self.interrupted = self.reused = self.tokens = 0
        self.started = time.monotonic()

    def add(self, result: BatchResult) -> None:
        if result.status == "done":
            self.done += 1
        elif result.status == "failed":
            self.failed += 1
        else:
            self.interrupted += 1
        self.reused += result.reused
        self.tokens += (result.usage or {}).get("total_tokens", 0)

    @property
    def finished(self) -> int:
        return self.done + self.failed + self.interrupted

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        ran = self.finished - self.reused
        rate = ran / elapsed
        left = self.total - self.finished
        eta = f"{left / rate:.0f}s" if rate > 0 and left else "-"
        running = min(self.concurrency, left)
        return (
            f"{self.finished}/{self.total} · done {self.done} · failed {self.failed}"
            + (f" · waiting {self.interrupted}" if self.interrupted else "")
            + f" · running {running} · {rate * 60:.1f}/min · ETA {eta} · {self.tokens} tokens"
        )


_say = say


def _command(args: argparse.Namespace, batch_id: str) -> str:
    """The command that continues this batch, ready to paste."""
    words = ["batch", args.target, args.inputs, "--out", args.out, "--batch-id", batch_id]
    if args.engine != "local":
        words += ["--engine", args.engine]
    if args.ray_address:
        words += ["--ray-address", args.ray_address]
    return run_command(*words, *store_words(args.checkpointer)) + password_note(args.checkpointer)


def cmd_batch(args: argparse.Namespace) -> int:
    """Run the `batch` command; its exit code (0 every input done, 1 some failed, 130 stopped)."""
    from graphflow.batch import default_batch_id, read_inputs

    store = args.checkpointer
    agent = load_agent(args.target)
    inputs, bad = read_inputs(args.inputs, column=args.column)
    for line in bad:
        _say(f"{args.inputs} {line} — skipped")
    if not inputs:
        _say(f"{args.inputs} holds no input to run")
        return USAGE
    batch_id = args.batch_id or default_batch_id(agent.name, inputs)
    _say(
        f"batch {batch_id}: {len(inputs)} inputs of {agent.name}, {args.concurrency} at once, "
        f"store {without_password(store)}, engine {args.engine}"
    )
    tally = _Tally(len(inputs), args.concurrency)
    results: dict[int, BatchResult] = {}
    out = Path(args.out)
    live = not args.plain and sys.stderr.isatty()
    try:
        for result in _results(args, agent, inputs, store, batch_id):
            results[result.index] = result
            tally.add(result)
            if live:
                sys.stderr.write("\r\x1b[2K" + tally.line())
                sys.stderr.flush()
            else:
                extra = f": {result.error}" if result.error else ""
                _say(f"{result.id} {result.status}{' (earlier)' if result.reused else ''}{extra}")
    except KeyboardInterrupt:
        if live:
            sys.stderr.write("\n")
        _write(out, results)
        _say(
            f"stopped: {tally.finished} of {len(inputs)} inputs finished (written to {out}); "
            f"continue with: {_command(args, batch_id)}"
        )
        return 130
    if live:
        sys.stderr.write("\n")
    _write(out, results)
    _say(f"{tally.line()} — results in {out}")
    if tally.failed:
        _say(f"run the same command to resume the failed inputs: {_command(args, batch_id)}")
        return 1
    return 0


def _results(
    args: argparse.Namespace, agent: Any, inputs: list[Any], store: str, batch_id: str
) -> Iterator[BatchResult]:
    from graphflow.batch.local import arun_plan, plan

    if args.engine == "ray":
        from graphflow.batch.ray import ray_batch_iter

        yield from ray_batch_iter(
            functools.partial(load_agent_by_path, absolute(args.target)),
            inputs,
            checkpointer=store,
            concurrency=args.concurrency,
            batch_id=batch_id,
            address=args.ray_address,
            name=agent.name,
        )
        return
    p = plan(agent, inputs, checkpointer=store, batch_id=batch_id)
    yield from _drive(arun_plan(p, concurrency=args.concurrency))


def _drive(stream: Any) -> Iterator[BatchResult]:
    """Iterate an async generator from sync code, on one event loop (Ctrl-C cancels its runs)."""
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(stream.__anext__())
            except StopAsyncIteration:
                return
    finally:
        try:
            loop.run_until_complete(stream.aclose())
        except (Exception, KeyboardInterrupt):  # noqa: BLE001 - stopping: the runs are checkpointed
            pass
        loop.close()


def load_agent_by_path(target: str) -> Any:
    """Build the team a TARGET names (on a Ray worker: picklable by reference)."""
    return load_agent(target)


def _write(out: Path, results: dict[int, BatchResult]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for index in sorted(results):
            f.write(results[index].to_json() + "\n")
    tmp.replace(out)
