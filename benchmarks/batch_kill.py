"""1,000 inputs on a two-node Ray cluster with a node killed half-way: what ran twice.

The example team on fake models that answer after 0.2 s (`benchmarks/batch_team.py`), whose
researcher calls a tool with a side effect: a row in a PostgreSQL table, naming the input. The
store is a fresh PostgreSQL database of its own (`gf_batch_kill`, dropped and created on the
server of GRAPHFLOW_TEST_POSTGRES_URL or --server). Both nodes are `ray.cluster_utils.Cluster`
nodes on 127.0.0.1; when half the inputs have finished, the worker node is killed (SIGKILL to
its raylet and every process the raylet started, then `remove_node(allow_graceful=False)`: its
workers die mid-call, as when a machine goes down). Ray restarts the killed node's actor on the
other node and sends it the inputs it had; each resumes from its last checkpoint.

Counted: inputs done; model calls made, and how many were the same call made again (a call is
its agent and the digest of the messages it was sent); tool side effects (rows) and how many
inputs have more than one.

    python benchmarks/batch_kill.py --inputs 1000 --per-node 8
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keep Ray on 127.0.0.1
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from batch import _load  # noqa: E402

DATABASE = "gf_batch_kill"


def fresh_database(server: str, name: str = DATABASE) -> str:
    """Drop and create database `name` on the server of `server`; its URL."""
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return _as_url(server, name)


def _as_url(server: str, name: str) -> str:
    """`server` (postgresql://user@host:port/db) naming database `name` instead."""
    base, _, _ = server.partition("?")[0].rpartition("/")
    return f"{base}/{name}"


def kill_node(cluster: Any, node: Any) -> int:
    """Kill `node` as a machine dies; how many processes died.

    Its raylet and every process the raylet started (the workers running inputs) get SIGKILL at
    once, before Ray is told the node is gone.
    """
    import psutil

    raylet = node.all_processes["raylet"][0].process.pid
    procs = [psutil.Process(raylet), *psutil.Process(raylet).children(recursive=True)]
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.send_signal(signal.SIGKILL)
    cluster.remove_node(node, allow_graceful=False)
    return len(procs)


def run(n: int, per_node: int, server: str, kill: bool = True) -> dict[str, float]:
    """Run `n` inputs on two nodes (the worker node killed half-way); the counts."""
    import psycopg
    import ray
    from ray.cluster_utils import Cluster

    from graphflow.batch.ray import ray_batch_iter

    store = fresh_database(server)
    with psycopg.connect(store, autocommit=True) as conn:
        from batch_team import EFFECTS_TABLE

        conn.execute(EFFECTS_TABLE)
    log = Path(tempfile.mkdtemp()) / "calls.log"
    os.environ["BATCH_LOG"] = str(log)  # the workers inherit both
    os.environ["BATCH_EFFECTS_URL"] = store
    node = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=dict(node))
    worker = cluster.add_node(**node)
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    cluster.wait_for_nodes()
    out: dict[str, float] = {"inputs": n, "in_flight": 2 * per_node}
    try:
        list(ray_batch_iter(_load(), ["warm-up"], checkpointer=store, concurrency=2,
                            batch_id=f"warm-{uuid.uuid4().hex[:8]}", actors=2))  # fmt: skip
        log.write_text("")
        with psycopg.connect(store, autocommit=True) as conn:
            conn.execute("TRUNCATE batch_effects")
        start = time.perf_counter()
        statuses: collections.Counter[str] = collections.Counter()
        for result in ray_batch_iter(
            _load(), [f"product {i}" for i in range(n)], checkpointer=store,
            concurrency=2 * per_node, batch_id=f"kill-{uuid.uuid4().hex[:8]}", actors=2,
        ):  # fmt: skip
            statuses[result.status] += 1
            if result.status != "done":
                print(f"  {result.id}: {result.status} {result.error}", flush=True)
            if kill and sum(statuses.values()) == n // 2:
                out["before_kill_s"] = time.perf_counter() - start
                out["processes_killed"] = kill_node(cluster, worker)
                print(f"  killed the worker node after {n // 2} inputs", flush=True)
        out["seconds"] = time.perf_counter() - start
        out["done"] = statuses["done"]
        calls = collections.Counter(log.read_text().splitlines())
        out["model_calls"] = sum(calls.values())
        out["model_calls_distinct"] = len(calls)
        out["model_calls_repeated"] = sum(c - 1 for c in calls.values())
        with psycopg.connect(store, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT query, count(*) FROM batch_effects GROUP BY query"
            ).fetchall()
        out["tool_effects"] = sum(c for _, c in rows)
        out["inputs_with_effect"] = len(rows)
        out["inputs_with_effect_twice"] = sum(1 for _, c in rows if c > 1)
        return out
    finally:
        ray.shutdown()
        cluster.shutdown()
        for key in ("BATCH_LOG", "BATCH_EFFECTS_URL"):
            os.environ.pop(key, None)


def main() -> None:
    """Print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=1000)
    parser.add_argument("--per-node", type=int, default=8, help="inputs in flight per node")
    parser.add_argument("--no-kill", action="store_true", help="the same run, no node killed")
    parser.add_argument("--server", default=os.environ.get("GRAPHFLOW_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    if not args.server:
        raise SystemExit(
            "needs PostgreSQL: --server postgresql://... or GRAPHFLOW_TEST_POSTGRES_URL"
        )
    print(f"load average at start: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    c = run(args.inputs, args.per_node, args.server, kill=not args.no_kill)
    print(f"load average at end: {os.getloadavg()[0]:.2f} (1 min)")
    killed = (
        ""
        if args.no_kill
        else f", worker node killed after {c['before_kill_s']:.0f}s"
        f" ({c['processes_killed']:.0f} processes)"
    )
    print(
        f"{c['inputs']:.0f} inputs, {c['in_flight']:.0f} in flight{killed}, {c['seconds']:.0f}s:"
        f" done {c['done']:.0f}; model calls {c['model_calls']:.0f}"
        f" ({c['model_calls_distinct']:.0f} distinct, {c['model_calls_repeated']:.0f} repeated);"
        f" tool side effects {c['tool_effects']:.0f} over {c['inputs_with_effect']:.0f} inputs,"
        f" {c['inputs_with_effect_twice']:.0f} inputs with one twice"
    )


if __name__ == "__main__":
    main()
