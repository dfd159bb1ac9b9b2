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
    python benchmarks/overhead.py --model bare     # a fake model costing nothing (see below)

Runs use `ainvoke` on one event loop kept for the whole benchmark (the baselines' nodes and
routers are async, as a hand-written LangGraph app serving requests would be; the loop's own
set-up is no part of a run).

With valgrind installed (and not `--quick`, unless `--instructions`), it also counts the CPU
instructions of one run of every variant with callgrind, as (N runs − M runs) / (N − M) so
imports and set-up cancel (see `_instructions.py`): the figure a shared machine does not move.

`--model scripted` (default) runs `ScriptedChatModel` through LangChain's `BaseChatModel.ainvoke`,
what any LangChain chat model costs on every call; `--model bare` answers `ainvoke` directly, so
the ratios compare only the frameworks around the call.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _instructions  # noqa: E402
from _workloads import BRANCHES, LATENCY, WORKLOADS, Workload, big_tree, use_model  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

TARGETS = {"pipeline": 1.8, "react": 1.1, "loop": 2.0}
"""Largest acceptable graphflow / plain ratio per run (no checkpointer), by CPU time and by
instructions (issue 19)."""
PARALLEL_TARGET = 1.05
"""Largest acceptable wall time of the 8-branch fan-out over one branch's latency."""
DURABLE_TARGET = 1.3
"""Largest acceptable ratio of a run on the durable default over the same run without a store."""
COMPILE_TARGET = 0.5
VARIANTS = ("graphflow", "subgraphs", "plain")
"""graphflow, the floor of its design (one compiled subgraph per agent), plain nodes."""


_runner = asyncio.Runner()
"""The one event loop every run uses (through `run_until_complete`: `Runner.run` swaps the SIGINT
handler around every run, and `signal` reprs the old handler — the finished task with its whole
result — which costs a graphflow run ~10 M instructions of `inspect.signature` garbage)."""


def _time(workload: Workload) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    _runner.get_loop().run_until_complete(workload.arun())
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(name: str, runs: int, durable: bool) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds per model call for each variant of workload `name`."""
    variants = {
        label: build(InMemorySaver() if durable else None)
        for label, build in WORKLOADS[name].items()
    }
    for workload in variants.values():  # warm up
        _time(workload)
    samples: dict[str, list[tuple[float, float]]] = {label: [] for label in variants}
    gc.collect()
    for _ in range(runs):
        for label, workload in variants.items():
            wall, cpu = _time(workload)
            samples[label].append((wall / workload.model_calls, cpu / workload.model_calls))
    return {
        label: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s))
        for label, s in samples.items()
    }


def compile_time(repeats: int) -> tuple[float, float]:
    """Best-of-`repeats` (CPU, wall) seconds to compile a fresh 100-agent tree.

    Compiling is all CPU: its CPU time is what it costs, the wall time is that plus whatever
    else the machine ran meanwhile.
    """
    best = (float("inf"), float("inf"))
    for _ in range(repeats):
        tree = big_tree()
        cpu, wall = time.process_time(), time.perf_counter()
        tree.compile(False)
        best = min(best, (time.process_time() - cpu, time.perf_counter() - wall))
    return best


def figure(name: str, r: dict[str, tuple[float, float]]) -> dict[str, float]:
    """Per variant, the seconds per model call it is judged by.

    CPU time where the work is all CPU (other processes on a shared machine barely move it);
    wall time for the fan-out, which waits on model latency.
    """
    return {label: (w if name == "parallel" else c) for label, (w, c) in r.items()}


def _row(label: str, target: str, values: dict[str, float], limit: float) -> tuple[str, bool]:
    gf, floor = values["graphflow"], values["subgraphs"]
    plain = values.get("plain")
    if gf <= limit:
        verdict = "met"
    elif floor > limit:
        verdict = f"MISSED (the floor misses it too: {floor:.2f})"
    else:
        verdict = "MISSED"
    text = (
        f"{label:<10}{target:<22}{gf:>10.2f}{floor:>8.2f}"
        f"{'-' if plain is None else f'{plain:.2f}':>8}  {verdict}"
    )
    return text, gf <= limit


def _count_instructions(args: argparse.Namespace, names: list[str]) -> dict[str, dict[str, float]]:
    """Instructions per run (callgrind) of the workloads that have a ÷plain target, printed."""
    wanted = args.instructions if args.instructions is not None else not args.quick
    counted = [n for n in names if n in TARGETS]
    if not wanted or not counted:
        return {}
    if not _instructions.available():
        print("\n(instructions not counted: valgrind is not installed — apt-get install valgrind)")
        return {}
    start = time.perf_counter()
    result = _instructions.count(counted, VARIANTS, args.model)
    print(
        f"\nM instructions per run (callgrind, (N runs − M runs)/(N − M), "
        f"{time.perf_counter() - start:.0f} s)"
    )
    header = f"{'workload':<10}{'graphflow':>11}{'plain':>9}{'subgraph':>10}{'gf/plain':>10}{'gf/floor':>10}"
    print(header)
    print("-" * len(header))
    for name in counted:
        c = result[name]
        print(
            f"{name:<10}{c['graphflow'] / 1e6:>11.2f}{c['plain'] / 1e6:>9.2f}"
            f"{c['subgraphs'] / 1e6:>10.2f}{c['graphflow'] / c['plain']:>10.2f}"
            f"{c['graphflow'] / c['subgraphs']:>10.2f}"
        )
    return result


def main(argv: list[str]) -> int:
    """Run the benchmark and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few runs (CI)")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--model", choices=("scripted", "bare"), default="scripted")
    counting = parser.add_mutually_exclusive_group()
    counting.add_argument(
        "--instructions", action="store_true", default=None, help="count with callgrind"
    )
    counting.add_argument("--no-instructions", dest="instructions", action="store_false")
    args = parser.parse_args(argv)
    use_model(args.model)
    runs = args.runs or (3 if args.quick else 21)
    names = [n for n in args.only.split(",") if n]
    print(f"runs={runs} (medians; ratios against the same run's baselines); model={args.model}")
    print("µs per model call: CPU time of the process; parallel: wall time of the run ÷ 8")
    header = (
        f"{'workload':<10}{'store':<8}{'graphflow':>11}{'plain':>9}{'subgraph':>10}"
        f"{'gf/plain':>10}{'gf/floor':>10}"
    )
    print(header)
    print("-" * len(header))
    results: dict[tuple[str, bool], dict[str, tuple[float, float]]] = {}
    for name in names:
        for durable in (False, True):
            r = results[name, durable] = measure(
                name, max(3, runs // 4) if name == "parallel" else runs, durable
            )
            f = figure(name, r)
            gf, plain, floor = f["graphflow"], f["plain"], f["subgraphs"]
            print(
                f"{name:<10}{'memory' if durable else 'none':<8}{gf * 1e6:>11.0f}{plain * 1e6:>9.0f}"
                f"{floor * 1e6:>10.0f}{gf / plain:>10.2f}{gf / floor:>10.2f}"
            )
    seconds, wall = compile_time(1 if args.quick else 3)
    instructions = _count_instructions(args, names)

    # every target next to the same figure for the floor (one compiled subgraph per agent) and
    # for plain nodes, so a missed target shows whether graphflow or the design bounds it
    print()
    print(f"{'target':<32}{'graphflow':>10}{'floor':>8}{'plain':>8}  verdict")
    ok = True
    for name in names:
        none = figure(name, results[name, False])
        mem = figure(name, results[name, True])
        rows = []
        if name == "parallel":
            for store, f in (("none", none), ("memory", mem)):
                walls = {v: f[v] * BRANCHES / LATENCY for v in VARIANTS}
                rows.append(_row(name, f"wall {store} ≤{PARALLEL_TARGET}", walls, PARALLEL_TARGET))
        else:
            ratios = {v: none[v] / none["plain"] for v in ("graphflow", "subgraphs")}
            rows.append(_row(name, f"time ÷plain ≤{TARGETS[name]}", ratios, TARGETS[name]))
            if name in instructions:
                counted = instructions[name]
                ratios = {v: counted[v] / counted["plain"] for v in ("graphflow", "subgraphs")}
                rows.append(_row(name, f"instr ÷plain ≤{TARGETS[name]}", ratios, TARGETS[name]))
        costs = {v: mem[v] / none[v] for v in VARIANTS}
        rows.append(_row(name, f"store× ≤{DURABLE_TARGET}", costs, DURABLE_TARGET))
        for text, met in rows:
            ok = ok and met
            print(text)
        if name == "parallel":
            # one event loop runs every branch: the fan-out takes the latency plus the CPU time
            # of the whole run (each branch's work before and after its model call), so the
            # wall ratio can go no lower than that CPU allows
            cpu = {v: results[name, False][v][1] * BRANCHES * 1e3 for v in VARIANTS}
            print(
                f"{'':<10}(CPU ms per run, no store: graphflow {cpu['graphflow']:.1f}, floor "
                f"{cpu['subgraphs']:.1f}, plain {cpu['plain']:.1f}; wall ≥ {LATENCY} s + that CPU)"
            )
    met = seconds <= COMPILE_TARGET
    ok = ok and met
    print(
        f"{'compile':<10}{f'100 agents ≤{COMPILE_TARGET} s':<22}{seconds:>10.3f}{'-':>8}{'-':>8}  "
        f"{'met' if met else 'MISSED'} (CPU time; wall {wall:.3f} s)"
    )
    print("all targets met" if ok else "some targets missed (see MISSED)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
