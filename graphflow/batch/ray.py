"""The Ray engine: a batch's inputs spread over a Ray cluster, each still a durable thread.

Ray runs the work; graphflow keeps each input exact. The driver starts a pool of Ray actors (one
per node by default, spread over the cluster), each running several inputs at once as async runs,
and never has more inputs in flight than `concurrency`; results stream back as they finish.
Workers build the team themselves from `load` — a picklable zero-argument callable, such as
`functools.partial(graphflow.targets.load_target, "app.py:team")` — so models and MCP sessions
are opened on the workers, never pickled with open connections.

When a worker or a node dies, Ray restarts its actor elsewhere and calls it again with the same
inputs; each input's run then resumes from its last checkpoint (the dead owner's lease is seen
as expired), so completed model and tool calls are not repeated. The store must therefore be one
that every node reaches: with more than one node only PostgreSQL will do, and an in-memory store
never does (each worker process would have its own).

Needs the `ray` extra: `pip install "graphflow-agents[ray]"`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from graphflow.batch.inputs import BatchInput, as_inputs
from graphflow.batch.local import OnStart, Plan, _arun, _check_concurrency
from graphflow.batch.results import BatchResult
from graphflow.batch.threads import default_batch_id
from graphflow.checkpoint.leases import LEASE_TTL
from graphflow.exceptions import GraphflowConfigError, InputError, ThreadBusyError

if TYPE_CHECKING:
    from graphflow.agents.base import Agent

__all__ = ("ray_batch", "ray_batch_iter", "shared_store_check")

BUSY_WAIT = LEASE_TTL + 15.0
"""Seconds an input waits for the lease of a worker that died (its heartbeat to expire)."""


STOP_WAIT = 5.0
"""Seconds the runs in flight get to stop when a batch is stopped, before their workers are killed."""

LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def _ray(address: str | None = None) -> Any:
    if "ray" not in sys.modules and (address is None or address.rsplit(":", 1)[0] in LOOPBACK):
        # Ray turns a loopback address into the machine's network address (the one other nodes
        # would use) unless told this is a single-machine cluster; read when ray is imported
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError as exc:
        raise ImportError('the Ray engine needs Ray: pip install "graphflow-agents[ray]"') from exc
    return ray


def shared_store_check(checkpointer: Any, nodes: int) -> None:
    """Refuse a store that the cluster's workers cannot share.

    Raises:
        InputError: a saver instance (it cannot travel to the workers), an in-memory store, or
            SQLite on more than one node.
    """
    if not isinstance(checkpointer, str):
        raise InputError(
            "the Ray engine needs the store as a URL the workers can open "
            "(postgresql://... , or sqlite:///file.db on a single node), not a saver instance"
        )
    scheme = checkpointer.split(":", 1)[0].lower()
    if scheme in ("postgres", "postgresql"):
        return
    if scheme == "memory" or checkpointer in ("", "memory:"):
        raise InputError(
            "the Ray engine cannot use an in-memory store: each worker process would keep its "
            "own; pass --checkpointer postgresql://... (PostgreSQL is shared by every node)"
        )
    if nodes > 1:
        raise InputError(
            f"the Ray cluster has {nodes} nodes but the store {scheme}:// is a local file that "
            "the other nodes cannot share; pass --checkpointer postgresql://user@host/db "
            "(PostgreSQL is shared by every node)"
        )


class _Worker:
    """One Ray actor: the team built once from `load`, several inputs at once."""

    def __init__(
        self,
        load: Callable[[], Agent],
        checkpointer: str,
        batch_id: str,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.plan = Plan(load().compile(checkpointer), [], batch_id=batch_id, config=config)

    async def run(self, item: BatchInput) -> BatchResult:
        deadline = time.monotonic() + BUSY_WAIT
        while True:
            result = await _arun(self.plan, item)
            # a worker that died still holds the input's lease until its heartbeat expires
            if result.error_type != ThreadBusyError.__name__ or time.monotonic() > deadline:
                return result
            await asyncio.sleep(1.0)

    def node(self) -> str:
        return str(_ray().get_runtime_context().get_node_id())


def _connect(address: str | None) -> Any:
    ray = _ray(address)
    if not ray.is_initialized():
        if address:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        else:
            # a cluster of our own binds to loopback only: a laptop run opens nothing to the network
            ray.init(
                address="local",  # a new cluster, not one another program started here
                _node_ip_address="127.0.0.1",
                include_dashboard=False,
                log_to_driver=False,
            )
    return ray


def ray_batch_iter(
    load: Callable[[], Agent],
    inputs: Iterable[Any],
    *,
    checkpointer: str,
    concurrency: int = 8,
    batch_id: str | None = None,
    address: str | None = None,
    actors: int | None = None,
    name: str | None = None,
    config: dict[str, Any] | None = None,
    on_start: OnStart | None = None,
) -> Iterator[BatchResult]:
    """Run the batch on Ray; yield each input's result as it finishes (see `ray_batch`).

    `config` is the run config of every input's run (picklable); `on_start` is called with each
    input as it is sent to a worker. When the caller stops iterating (or Ctrl-C interrupts it),
    the runs in flight are cancelled — each stops at its next await, releasing its thread's
    lease — for up to `STOP_WAIT` seconds, then the workers are killed.
    """
    _check_concurrency(concurrency)
    items = as_inputs(inputs)
    if batch_id is None:
        batch_id = default_batch_id(name or _name(load), items)
    ray = _connect(address)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    shared_store_check(checkpointer, len(nodes))
    count = max(1, min(actors or len(nodes), concurrency))
    per_actor = -(-concurrency // count)
    remote = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(_Worker)
    pool = [
        remote.options(max_concurrency=per_actor, scheduling_strategy="SPREAD").remote(
            load, checkpointer, batch_id, config
        )
        for _ in range(count)
    ]
    load_of: dict[Any, int] = {}
    actor_of: dict[Any, int] = {}
    pending = iter(items)
    try:
        while True:
            while len(actor_of) < concurrency and (item := next(pending, None)) is not None:
                slot = min(range(count), key=lambda i: load_of.get(i, 0))
                if on_start is not None:
                    on_start(item)
                ref = pool[slot].run.remote(item)
                actor_of[ref] = slot
                load_of[slot] = load_of.get(slot, 0) + 1
            if not actor_of:
                return
            done, _ = ray.wait(list(actor_of), num_returns=1)
            for ref in done:
                slot = actor_of.pop(ref)
                load_of[slot] -= 1
                try:
                    yield ray.get(ref)
                except Exception as exc:  # the actor could not even be built (a bad target)
                    raise GraphflowConfigError(f"a Ray worker failed: {exc}") from exc
    finally:
        for ref in actor_of:
            ray.cancel(ref, force=False)
        if actor_of:  # let the cancelled runs release their leases before their workers go
            ray.wait(list(actor_of), num_returns=len(actor_of), timeout=STOP_WAIT)
        for actor in pool:
            ray.kill(actor)


def ray_batch(
    load: Callable[[], Agent],
    inputs: Iterable[Any],
    *,
    checkpointer: str,
    concurrency: int = 8,
    batch_id: str | None = None,
    address: str | None = None,
    actors: int | None = None,
    on_result: Callable[[BatchResult], Any] | None = None,
) -> list[BatchResult]:
    """Run `load()`'s team over every input on a Ray cluster; the results in input order.

    Args:
        load: builds the team on each worker (picklable: a module-level function, or a
            `functools.partial` of one).
        inputs: as for `graphflow.batch.batch`.
        checkpointer: the store's URL, reachable from every node (PostgreSQL with more than one
            node).
        concurrency: most inputs in flight over the whole cluster.
        batch_id: names the inputs' threads; the same batch id continues a batch.
        address: a running cluster (`ray start --head` prints it); None starts a local one bound
            to 127.0.0.1.
        actors: how many workers (default: one per node).
        on_result: called with each result as it finishes.
    """
    results: list[BatchResult] = []
    for result in ray_batch_iter(
        load,
        inputs,
        checkpointer=checkpointer,
        concurrency=concurrency,
        batch_id=batch_id,
        address=address,
        actors=actors,
    ):
        if on_result is not None:
            on_result(result)
        results.append(result)
    return sorted(results, key=lambda r: r.index)


def _name(load: Callable[[], Any]) -> str:
    args = getattr(load, "args", ())
    label = str(args[0]) if args else getattr(load, "__name__", "batch")
    return label.rsplit(":", 1)[-1].rsplit("/", 1)[-1] or "batch"
