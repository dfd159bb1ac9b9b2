"""Batch throughput: local `abatch` against the Ray engine on 1, 2 and 4 nodes.

Fake models answer after 0.2 s (the example team: researcher with a tool, writer ⇄ reviewer
loop, about 5 model calls an input), so the work is waiting, not CPU — the case where adding
nodes should add throughput. Every node is a `ray.cluster_utils.Cluster` node on 127.0.0.1; the
store is PostgreSQL (GRAPHFLOW_TEST_POSTGRES_URL, or --store).

    python benchmarks/batch.py --inputs 64 --per-node 8 --nodes 1,2,4
    python benchmarks/batch.py --quick                    # a small configuration

A node killed half-way through 1,000 inputs, with what ran twice counted: `batch_kill.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keep Ray on 127.0.0.1
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
TARGET = f"{HERE / 'batch_team.py'}:pipeline"


def _load():  # type: ignore[no-untyped-def]
    from graphflow.cli._batch import load_agent_by_path

    return functools.partial(load_agent_by_path, TARGET)


def local(n: int, concurrency: int, store: str) -> float:
    """Inputs a second of local `abatch`."""
    from graphflow.batch import abatch
    from graphflow.cli._batch import load_agent_by_path

    team = load_agent_by_path(TARGET)
    start = time.perf_counter()
    results = asyncio.run(
        abatch(team, [f"product {i}" for i in range(n)], concurrency=concurrency,
               checkpointer=store, batch_id=f"bench-{uuid.uuid4().hex[:8]}")
    )  # fmt: skip
    took = time.perf_counter() - start
    assert all(r.status == "done" for r in results), [r.error for r in results if r.error][:3]
    return n / took


def on_ray(nodes: int, n: int, per_node: int, store: str) -> dict[str, float]:
    """Inputs a second on a fresh `nodes`-node cluster, and the model calls made."""
    import ray
    from ray.cluster_utils import Cluster

    from graphflow.batch.ray import ray_batch_iter

    log = Path(tempfile.mkdtemp()) / "calls.log"
    os.environ["BATCH_LOG"] = str(log)
    local_node = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=dict(local_node))
    for _ in range(nodes - 1):
        cluster.add_node(**local_node)
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    cluster.wait_for_nodes()
    try:
        # warm up: the workers import graphflow and build the team once
        list(ray_batch_iter(_load(), ["warm-up"], checkpointer=store, concurrency=nodes,
                            batch_id=f"warm-{uuid.uuid4().hex[:8]}", actors=nodes))  # fmt: skip
        log.write_text("")
        start = time.perf_counter()
        for result in ray_batch_iter(
            _load(), [f"product {i}" for i in range(n)], checkpointer=store,
            concurrency=per_node * nodes, batch_id=f"bench-{uuid.uuid4().hex[:8]}", actors=nodes,
        ):  # fmt: skip
            assert result.status == "done", result.error
        took = time.perf_counter() - start
        lines = log.read_text().splitlines()
        return {"rate": n / took, "calls": float(sum(x.startswith("model") for x in lines))}
    finally:
        ray.shutdown()
        cluster.shutdown()
        os.environ.pop("BATCH_LOG", None)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=200)
    parser.add_argument("--per-node", type=int, default=8, help="inputs in flight per node")
    parser.add_argument("--nodes", default="1,2,4")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--store", default=os.environ.get("GRAPHFLOW_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    if not args.store:
        raise SystemExit(
            "needs PostgreSQL: --store postgresql://... or GRAPHFLOW_TEST_POSTGRES_URL"
        )
    if args.quick:
        args.inputs, args.nodes = 16, "1,2"
    print(f"load average at start: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    base = local(args.inputs, args.per_node, args.store)
    print(f"local abatch, {args.per_node} at once: {base:.2f} inputs/s")
    one = None
    for nodes in (int(x) for x in args.nodes.split(",")):
        rate = on_ray(nodes, args.inputs, args.per_node, args.store)["rate"]
        one = one or rate
        print(f"ray, {nodes} node(s), {args.per_node * nodes} in flight: {rate:.2f} inputs/s "
              f"= {rate / one:.2f}× one node ({rate / one / nodes:.2f} of linear); "
              f"one Ray node / local: {one / base:.2f}")  # fmt: skip
    print(f"load average at end: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
