"""`graphflow batch TARGET INPUTS --out results.jsonl`: a team over every line of a file.

Every input is its own durable thread in the store; running the same command again skips the
inputs that finished and resumes the others from their checkpoints. The results file holds one
JSON line per input, in input order: id, thread, status, outputs, usage, error.
"""

from __future__ import annotations

import argparse
import functools
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphflow._internal.commands import password_note, run_command, store_words, without_password
from graphflow.cli._errors import STOPPED, USAGE
from graphflow.cli._foreground import mark_all_stopped, mute_interrupts
from graphflow.cli._say import say
from graphflow.cli._targets import absolute, load_agent, recorded

if TYPE_CHECKING:
    from graphflow.batch import BatchResult

__all__ = ("add_batch_parser", "cmd_batch", "load_agent_by_path")

DEFAULT_CONCURRENCY = 4
STOP_WAIT = 15.0
"""Seconds the runs in flight get to stop after Ctrl-C before the command leaves without them.

More than the lease store's `LOCK_WAIT`: a cancelled run may first wait for an SQLite file that
another run's write holds, and one left running keeps the file locked, so its stop mark could not
be written.
"""


def add_batch_parser(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add the `batch` command to the CLI's parser."""
    p = command("batch", "run a team over every input of a file (JSONL, CSV or text)")
    p.add_argument("target")
    p.add_argument("inputs", help="inputs file: .jsonl (string or object per line), .csv, or text")
    p.add_argument("--out", required=True, help="results file (JSON lines, in input order)")
    p.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"inputs at once (default {DEFAULT_CONCURRENCY})",
    )
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
    if args.column is not None:
        words += ["--column", args.column]
    if args.concurrency != DEFAULT_CONCURRENCY:
        words += ["--concurrency", str(args.concurrency)]
    if args.plain:
        words.append("--plain")
    if args.engine != "local":
        words += ["--engine", args.engine]
    if args.ray_address:
        words += ["--ray-address", args.ray_address]
    return run_command(*words, *store_words(args.checkpointer)) + password_note(args.checkpointer)


def cmd_batch(args: argparse.Namespace) -> int:
    """Run the `batch` command; its exit code (0 every input done, 1 some failed, 130 stopped)."""
    from graphflow.batch import batch_thread_id, default_batch_id, read_inputs

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
    started: dict[int, str] = {}  # index -> thread of every input handed to a runner

    def on_start(item: Any) -> None:
        started[item.index] = batch_thread_id(batch_id, item.id)

    out = Path(args.out)
    live = not args.plain and sys.stderr.isatty()
    try:
        for result in _results(args, agent, inputs, store, batch_id, on_start):
            results[result.index] = result
            tally.add(result)
            if live:
                sys.stderr.write("\r\x1b[2K" + tally.line())
                sys.stderr.flush()
            else:
                extra = f": {result.error}" if result.error else ""
                _say(f"{result.id} {result.status}{' (earlier)' if result.reused else ''}{extra}")
    except KeyboardInterrupt:
        mute_interrupts()  # stopping: a second Ctrl-C must not cut the marks short
        if live:
            sys.stderr.write("\n")
        in_flight = [thread for index, thread in started.items() if index not in results]
        # listed `stopped`, not `crashed` (the runs no longer move: both engines cancelled them)
        marked = mark_all_stopped(store, in_flight, timeout=10.0)
        _write(out, results)
        if args.engine == "ray":
            _ray_shutdown()
        _say(
            f"stopped: {tally.finished} of {len(inputs)} inputs finished (in {out}), "
            f"{marked} in flight marked stopped; continue with: {_command(args, batch_id)}"
        )
        return STOPPED
    if live:
        sys.stderr.write("\n")
    _write(out, results)
    _say(f"{tally.line()} — results in {out}")
    if tally.failed:
        _say(f"run the same command to resume the failed inputs: {_command(args, batch_id)}")
        return 1
    return 0


def _results(
    args: argparse.Namespace,
    agent: Any,
    inputs: list[Any],
    store: str,
    batch_id: str,
    on_start: Callable[[Any], None],
) -> Iterator[BatchResult]:
    from graphflow.batch.local import arun_plan, plan

    config = recorded(args.target, agent)  # `graphflow runs` names each input's target and agent
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
            config=config,
            on_start=on_start,
        )
        return
    p = plan(agent, inputs, checkpointer=store, batch_id=batch_id)
    p.config = config
    yield from _drive(arun_plan(p, concurrency=args.concurrency, on_start=on_start))


def _drive(stream: Any) -> Iterator[BatchResult]:
    """Iterate an async generator from sync code, on one event loop; Ctrl-C stops it cleanly.

    Ctrl-C or SIGTERM cancels the runs in flight, as `asyncio.run` does with its main task: each
    stops at its next await — its checkpoints are written step by step — closing its store
    connection and releasing its thread's lease; then `KeyboardInterrupt` is raised here. A second
    signal, or runs that take more than `STOP_WAIT` seconds to stop, raise it at once.
    """
    import asyncio  # here: every command builds this module's parser, few run a batch

    loop = asyncio.new_event_loop()
    step: asyncio.Task[BatchResult] | None = None
    signals = 0

    def give_up() -> None:
        raise KeyboardInterrupt

    def on_signal(signum: int, frame: Any) -> None:
        nonlocal signals
        signals += 1
        if signals > 1 or step is None or step.done():
            raise KeyboardInterrupt
        step.cancel()
        loop.call_soon_threadsafe(loop.call_later, STOP_WAIT, give_up)

    async def following() -> BatchResult:
        return await stream.__anext__()  # type: ignore[no-any-return]

    previous = _handle_signals(on_signal)
    try:
        while True:
            step = loop.create_task(following())
            try:
                result = loop.run_until_complete(step)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if signals:
                    raise KeyboardInterrupt from None
                raise
            yield result
    finally:
        _handle_signals(*previous)
        if step is None or step.done():  # finished, stopped, or closed by the caller
            try:
                loop.run_until_complete(stream.aclose())
            except (Exception, KeyboardInterrupt):  # noqa: BLE001 - the runs are checkpointed
                pass
            loop.close()
        # else the runs did not stop in time: the loop is left as it is, never run again


def _handle_signals(*handlers: Any) -> list[Any]:
    """Set the handlers of SIGINT and SIGTERM (one for both, or one each); the previous ones."""
    if threading.current_thread() is not threading.main_thread() or not handlers:
        return []
    sigs = (signal.SIGINT, signal.SIGTERM)
    previous = [signal.getsignal(sig) for sig in sigs]
    for sig, handler in zip(sigs, handlers * 2 if len(handlers) == 1 else handlers, strict=False):
        signal.signal(sig, handler)
    return previous


def _ray_shutdown() -> None:
    """Disconnect from Ray (a cluster the batch started itself goes with it)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        try:
            ray.shutdown()
        except Exception:  # noqa: BLE001 - stopping anyway
            pass


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
