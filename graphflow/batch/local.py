"""The local engine: a batch's inputs as durable runs in this process, a bounded number at once.

Each input runs on its own thread id (`graphflow.batch.threads`). Before an input runs, its
thread's stored run decides what to do: none — start it; `done` — report it without running it
again; `interrupted` — report it as waiting for an answer; anything else (failed, crashed,
stopped) — resume it from its last checkpoint, so completed model and tool calls are never
repeated. A failing input never stops the others; its error is its result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from graphflow.batch.inputs import BatchInput, as_inputs
from graphflow.batch.results import BatchResult
from graphflow.batch.threads import batch_thread_id, default_batch_id
from graphflow.checkpoint.runs import RunInfo, read_run
from graphflow.events import Interrupted, RunFinished
from graphflow.exceptions import InputError
from graphflow.strategies.registry import output_key

if TYPE_CHECKING:
    from typing import TypeAlias

    from graphflow.agents.base import Agent
    from graphflow.runtime.compiled import CompiledAgent

    Team: TypeAlias = Agent | CompiledAgent

__all__ = ("OnStart", "Plan", "abatch", "abatch_iter", "batch", "batch_iter", "plan")

OnResult = Callable[[BatchResult], Any]
OnStart = Callable[[BatchInput], Any]
"""Called with an input as it is handed to a runner (it is in flight until its result comes)."""


def compiled_team(team: Team, checkpointer: Any) -> CompiledAgent:
    """The `CompiledAgent` a batch runs: `team` itself, or the agent compiled on `checkpointer`."""
    if checkpointer is False:
        raise InputError(
            "a batch needs a checkpointer (each input is a durable thread); pass a URL such "
            "as sqlite:///runs.db or a saver, not checkpointer=False"
        )
    if hasattr(team, "graph") and hasattr(team, "agent"):  # already compiled
        if checkpointer is not None:
            raise InputError(
                "the team is already compiled on its store; pass checkpointer= to "
                "agent.compile(...), not to batch"
            )
        if team.checkpointer is False:  # type: ignore[union-attr]
            raise InputError(
                "a batch needs a checkpointer (each input is a durable thread); compile the "
                "team on a store, not checkpointer=False"
            )
        return team  # type: ignore[return-value]
    return team.compile(checkpointer)  # type: ignore[union-attr]


class Plan:
    """A batch made ready to run: its inputs, its id and the compiled team that runs them."""

    def __init__(
        self,
        compiled: CompiledAgent,
        inputs: Iterable[Any],
        *,
        batch_id: str | None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.compiled = compiled
        self.config: Any = config
        """Run config every input's run gets (e.g. metadata naming the target it was loaded from)."""
        agent = compiled.agent
        self.inputs: list[BatchInput] = as_inputs(inputs)
        if batch_id is not None and (not isinstance(batch_id, str) or not batch_id.strip()):
            raise InputError(f"batch_id {batch_id!r}: pass a non-empty string (or none)")
        self.batch_id = batch_id or default_batch_id(agent.name, self.inputs)
        self.output_keys = _output_keys(agent)

    def thread_of(self, item: BatchInput) -> str:
        """The durable thread of `item`."""
        return batch_thread_id(self.batch_id, item.id)

    def outputs(self, state: dict[str, Any]) -> dict[str, Any]:
        """The agents' output keys in a final state."""
        return {k: state[k] for k in self.output_keys if k in state}

    def look(self, item: BatchInput) -> tuple[RunInfo | None, BatchResult | None]:
        """What the store holds for `item`, and its result when it needs no run now.

        One read of the store: the thread's newest checkpoint gives both the run's status and,
        for a finished input, its outputs.
        """
        found = read_run(self.compiled.graph, self.thread_of(item), look_back=False)
        if found is None:
            return None, None
        info, snapshot = found
        return info, self.settled(item, info, snapshot.values)

    def settled(self, item: BatchInput, info: RunInfo, values: Any) -> BatchResult | None:
        """The result of an input whose stored run (`info`, state `values`) needs no run now."""
        if info.status == "done":
            return self._result(item, "done", outputs=self.outputs(dict(values)), reused=True)
        if info.status == "interrupted":
            pending = "; ".join(str(v) for v in info.interrupts) or "an answer"
            return self._result(item, "interrupted", error=f"waiting for {pending}")
        if info.status == "unreadable":
            return self._result(item, "failed", error=info.error, error_type="unreadable")
        return None

    def _result(self, item: BatchInput, status: Any, **fields: Any) -> BatchResult:
        return BatchResult(
            id=item.id, index=item.index, thread_id=self.thread_of(item), status=status, **fields
        )

    def finished(self, item: BatchInput, events: list[Any]) -> BatchResult:
        """The result of a run whose last events are `events`."""
        usage = None
        outputs: dict[str, Any] = {}
        for event in events:
            if isinstance(event, RunFinished):
                u = event.usage
                usage = {
                    "input_tokens": u.input_tokens,
                    "output_tokens": u.output_tokens,
                    "total_tokens": u.total_tokens,
                }
                outputs = self.outputs(dict(event.state))
        pending = [e for e in events if isinstance(e, Interrupted)]
        if pending:
            what = "; ".join(str(p.get("value", p)) for e in pending for p in e.pending)
            return self._result(item, "interrupted", usage=usage, error=f"waiting for {what}")
        return self._result(item, "done", outputs=outputs, usage=usage)

    def failed(self, item: BatchInput, exc: BaseException) -> BatchResult:
        """The result of a run that raised `exc`."""
        return self._result(
            item, "failed", error=str(exc) or repr(exc), error_type=type(exc).__name__
        )


def _output_keys(agent: Agent) -> list[str]:
    """Each agent's result key, in tree order (what the kinds' strategies say)."""
    keys: list[str] = []
    for member in agent.walk():
        key = output_key(member)
        if key and key not in keys:
            keys.append(key)
    return keys


def plan(
    team: Team, inputs: Iterable[Any], *, checkpointer: Any = None, batch_id: str | None = None
) -> Plan:
    """Check a batch's inputs, compile its team and settle its id (see `Plan`)."""
    return Plan(compiled_team(team, checkpointer), inputs, batch_id=batch_id)


# -- async --------------------------------------------------------------------------------------


async def _arun(p: Plan, item: BatchInput) -> BatchResult:
    try:
        info, settled = await asyncio.to_thread(p.look, item)  # one hop off the loop
        if settled is not None:
            return settled
        wanted = (RunFinished, Interrupted)
        seen: list[Any] = []
        async for event in p.compiled.astream(
            item.value if info is None else None,
            thread_id=p.thread_of(item),
            config=p.config,
            events=wanted,
        ):
            seen.append(event)
        return p.finished(item, seen)
    except Exception as exc:  # a failing input never stops the others: its error is its result
        return p.failed(item, exc)


async def abatch_iter(
    team: Team,
    inputs: Iterable[Any],
    *,
    concurrency: int = 4,
    checkpointer: Any = None,
    batch_id: str | None = None,
) -> AsyncIterator[BatchResult]:
    """Run the batch; yield each input's result as it finishes (see `abatch`)."""
    p = plan(team, inputs, checkpointer=checkpointer, batch_id=batch_id)
    async for result in arun_plan(p, concurrency=concurrency):
        yield result


async def arun_plan(
    p: Plan, *, concurrency: int, on_start: OnStart | None = None
) -> AsyncIterator[BatchResult]:
    """Run a planned batch, at most `concurrency` inputs at once; results as they finish."""
    _check_concurrency(concurrency)
    pending = iter(p.inputs)
    running: set[asyncio.Task[BatchResult]] = set()
    try:
        while True:
            while len(running) < concurrency and (item := next(pending, None)) is not None:
                if on_start is not None:
                    on_start(item)
                running.add(asyncio.create_task(_arun(p, item)))
            if not running:
                return
            done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in sorted(done, key=lambda t: t.result().index):
                yield task.result()
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)


async def abatch(
    team: Team,
    inputs: Iterable[Any],
    *,
    concurrency: int = 4,
    checkpointer: Any = None,
    batch_id: str | None = None,
    on_result: OnResult | None = None,
) -> list[BatchResult]:
    """Run `agent` over every input, each on its own durable thread, `concurrency` at once.

    Args:
        team: the agent tree, or an agent compiled on its store (`agent.compile(...)`).
        inputs: strings or dicts of state keys (a dict may carry an `id`), or `BatchInput`s.
        concurrency: most inputs running at once.
        checkpointer: where the inputs' runs are stored (a URL or a saver); the agent's usual
            store when None (a compiled team runs on its own). Run the batch again on the same
            store to continue it.
        batch_id: names the batch's threads (`BATCH/KEY`); by default derived from the team's
            name and the inputs, so the same batch gets the same id.
        on_result: called with each result as it finishes.

    Returns:
        The results in input order.
    """
    results: list[BatchResult] = []
    async for result in abatch_iter(
        team, inputs, concurrency=concurrency, checkpointer=checkpointer, batch_id=batch_id
    ):
        if on_result is not None:
            on_result(result)
        results.append(result)
    return sorted(results, key=lambda r: r.index)


# -- sync ---------------------------------------------------------------------------------------


def _run(p: Plan, item: BatchInput) -> BatchResult:
    try:
        info, settled = p.look(item)
        if settled is not None:
            return settled
        seen = list(
            p.compiled.stream(
                item.value if info is None else None,
                thread_id=p.thread_of(item),
                config=p.config,
                events=(RunFinished, Interrupted),
            )
        )
        return p.finished(item, seen)
    except Exception as exc:  # a failing input never stops the others: its error is its result
        return p.failed(item, exc)


def batch_iter(
    team: Team,
    inputs: Iterable[Any],
    *,
    concurrency: int = 4,
    checkpointer: Any = None,
    batch_id: str | None = None,
) -> Iterator[BatchResult]:
    """Run the batch on `concurrency` threads; yield each input's result as it finishes."""
    _check_concurrency(concurrency)
    p = plan(team, inputs, checkpointer=checkpointer, batch_id=batch_id)
    pool = concurrent.futures.ThreadPoolExecutor(concurrency, thread_name_prefix="graphflow-batch")
    try:
        pending = iter(p.inputs)
        running: set[concurrent.futures.Future[BatchResult]] = set()
        while True:
            while len(running) < concurrency and (item := next(pending, None)) is not None:
                running.add(pool.submit(_run, p, item))
            if not running:
                return
            done, running = concurrent.futures.wait(
                running, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in sorted(done, key=lambda f: f.result().index):
                yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def batch(
    team: Team,
    inputs: Iterable[Any],
    *,
    concurrency: int = 4,
    checkpointer: Any = None,
    batch_id: str | None = None,
    on_result: OnResult | None = None,
) -> list[BatchResult]:
    """Sync `abatch`: the inputs run on `concurrency` threads."""
    results: list[BatchResult] = []
    for result in batch_iter(
        team, inputs, concurrency=concurrency, checkpointer=checkpointer, batch_id=batch_id
    ):
        if on_result is not None:
            on_result(result)
        results.append(result)
    return sorted(results, key=lambda r: r.index)


def _check_concurrency(concurrency: Any) -> None:
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise InputError(f"concurrency={concurrency!r}: pass a whole number of at least 1")
