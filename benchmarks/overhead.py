"""graphflow's per-model-call overhead against hand-written LangGraph, measured in one process.

For each workload (a 3-agent pipeline, a 50-call ReAct agent, a 3-pass writer/reviewer loop, 8
parallel branches of 0.2 s) it runs graphflow, hand-written LangGraph with plain nodes, and
hand-written LangGraph with one compiled subgraph per agent (the floor of graphflow's design), each
without a checkpointer and with the durable default (an in-memory saver, durability="sync"),
interleaving the variants so machine noise hits them alike. It prints µs per model call (medians)
and ratios — the ratios are the figures; seconds on a shared machine are not. Then the compile
time of a 100-agent tree (10 flows × 10 ReAct agents).

    python benchmarks/overhead.py            # full configuration
    python benchmarks/overhead.py --quick    # the small configuration CI runs
    python benchmarks/overhead.py --only pipeline,loop

Runs use `ainvoke` (the baselines' nodes and routers are async, as a hand-written LangGraph app
serving requests would be).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _workloads import BRANCHES, LATENCY, WORKLOADS, Workload, big_tree  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

TARGETS = {"pipeline": 2.5, "react": 1.2, "loop": 2.0}
"""Largest acceptable graphflow / plain ratio per workload (no checkpointer)."""
PARALLEL_TARGET = 1.05
DURABLE_TARGET = 1.3
COMPILE_TARGET = 0.5


def _time(workload: Workload, clock: Any) -> float:
    start = clock()
    asyncio.run(workload.arun())
    return clock() - start


def measure(name: str, runs: int, durable: bool) -> dict[str, float]:
    """Median seconds per model call for each variant of workload `name`."""
    variants = {
        label: build(InMemorySaver() if durable else None)
        for label, build in WORKLOADS[name].items()
    }
    # CPU time of this process where the work is all CPU (other processes on a shared machine
    # barely move it); wall time where the workload waits on model latency
    clock = time.perf_counter if name == "parallel" else time.process_time
    for workload in variants.values():  # warm up
        _time(workload, clock)
    samples: dict[str, list[float]] = {label: [] for label in variants}
    gc.collect()
    for _ in range(runs):
        for label, workload in variants.items():
            samples[label].append(_time(workload, clock) / workload.model_calls)
    return {label: statistics.median(s) for label, s in samples.items()}


def compile_time(repeats: int) -> float:
    """Best-of-`repeats` seconds to compile a fresh 100-agent tree."""
    best = float("inf")
    for _ in range(repeats):
        tree = big_tree()
        start = time.perf_counter()
        tree.compile(False)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str]) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few runs (CI)")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    args = parser.parse_args(argv)
    runs = args.runs or (3 if args.quick else 21)
    names = [n for n in args.only.split(",") if n]
    print(f"runs={runs} (medians of µs per model call; ratios against the same run's baselines)")
    header = (
        f"{'workload':<10}{'store':<8}{'graphflow':>11}{'plain':>9}{'subgraph':>10}"
        f"{'gf/plain':>10}{'gf/floor':>10}  target"
    )
    print(header)
    print("-" * len(header))
    ok = True
    for name in names:
        plain_run: dict[str, float] = {}
        for durable in (False, True):
            r = measure(name, max(3, runs // 4) if name == "parallel" else runs, durable)
            gf, plain, floor = r["graphflow"], r["plain"], r["subgraphs"]
            if name == "parallel":
                # wall time of the fan-out over one branch's latency
                ratio = gf * BRANCHES / LATENCY
                target, verdict = f"wall≤{PARALLEL_TARGET}", ratio <= PARALLEL_TARGET
            elif not durable:
                ratio = gf / plain
                target, verdict = f"≤{TARGETS[name]}", ratio <= TARGETS[name]
            else:
                ratio = gf / plain
                target, verdict = "", True
            if durable:
                # the durable default against the same workload without a checkpointer
                cost = gf / plain_run["graphflow"]
                target += f" store×{cost:.2f}≤{DURABLE_TARGET}"
                verdict = verdict and cost <= DURABLE_TARGET
            else:
                plain_run = r
            ok = ok and verdict
            print(
                f"{name:<10}{'memory' if durable else 'none':<8}{gf * 1e6:>11.0f}{plain * 1e6:>9.0f}"
                f"{floor * 1e6:>10.0f}{ratio:>10.2f}{gf / floor:>10.2f}  {target}"
                f"{'' if verdict else '  MISSED'}"
            )
    seconds = compile_time(1 if args.quick else 3)
    ok = ok and seconds <= COMPILE_TARGET
    print(
        f"compile 100-agent tree (10 flows × 10 ReAct): {seconds:.3f} s (target ≤ {COMPILE_TARGET} s)"
        f"{'' if seconds <= COMPILE_TARGET else '  MISSED'}"
    )
    print("all targets met" if ok else "some targets missed (see MISSED)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
