"""CPU instructions per run of each workload variant, counted by valgrind's callgrind.

Instruction counts do not move with the load of a shared machine (timings swing ±30% there), so
they are the steadier of the two figures. One run's count is taken as

    (instructions of N runs − instructions of M runs) / (N − M)

so imports, building the graphs and whatever a block of runs pays once cancel out.

How: one child process runs under callgrind with instrumentation off while it imports, builds
every workload and warms each up (`--instr-atstart=no`: the imports run ~5× faster than
instrumented), then switches instrumentation on (`callgrind_control -i on`) and runs each block of
runs inside a call to libc's `qsort` through a `ctypes` callback. Callgrind is told to zero its
counters before glibc's `qsort_r` (what `qsort` runs) and dump them after it
(`--zero-before=qsort_r --dump-after=qsort_r`), so each
dump holds exactly one block. The child prints the order of its blocks; the parent reads one dump
per block. `PYTHONHASHSEED=0` keeps the counts repeatable.

    python benchmarks/_instructions.py pipeline,loop     # prints instructions per run
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve()

BLOCKS = {"pipeline": (2, 6), "loop": (1, 4), "react": (1, 2), "parallel": (1, 3)}
"""Runs per block (M, N) for each workload: a 50-call ReAct run is long, one run apart suffices
(the counts are deterministic); short runs get a few more to spread any stray work."""


def available() -> bool:
    """Whether valgrind's callgrind and its control program are installed."""
    return bool(shutil.which("valgrind") and shutil.which("callgrind_control"))


def count(
    names: list[str], variants: tuple[str, ...], model: str = "scripted"
) -> dict[str, dict[str, float]]:
    """Instructions per run, by workload name and variant (one callgrind process for all).

    `model` is the fake model of the workloads (`_workloads.use_model`).
    """
    with tempfile.TemporaryDirectory(prefix="gf-callgrind-") as tmp:
        out = Path(tmp) / "cg.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            "--zero-before=qsort_r",  # glibc's qsort is its qsort_r
            "--dump-after=qsort_r",
            f"--callgrind-out-file={out}",
            sys.executable,
            str(HERE),
            "--child",
            ",".join(names),
            ",".join(variants),
            model,
        ]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"callgrind run failed ({done.returncode}):\n{done.stderr[-3000:]}")
        blocks = json.loads(done.stdout.strip().splitlines()[-1])
        dumps = sorted(
            (p for p in Path(tmp).glob("cg.out.*") if p.suffix[1:].isdigit()),
            key=lambda p: int(p.suffix[1:]),
        )
        if os.environ.get("GF_CALLGRIND_KEEP"):
            shutil.copytree(tmp, os.environ["GF_CALLGRIND_KEEP"], dirs_exist_ok=True)
        if len(dumps) != len(blocks):
            raise RuntimeError(f"expected {len(blocks)} callgrind dumps, found {len(dumps)}")
        totals = [_total(p) for p in dumps]
    result: dict[str, dict[str, float]] = {}
    by_block = {
        (name, variant, runs): total
        for (name, variant, runs), total in zip((tuple(b) for b in blocks), totals, strict=True)
    }
    for name in names:
        m, n = BLOCKS[name]
        result[name] = {
            v: (by_block[name, v, n] - by_block[name, v, m]) / (n - m) for v in variants
        }
    return result


def _total(dump: Path) -> int:
    text = dump.read_text()
    match = re.search(r"^(?:totals|summary):\s*(\d+)", text, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no totals in {dump}")
    return int(match.group(1))


# -- the child, under callgrind -------------------------------------------------------------------


def _in_qsort(fn: Callable[[], None]) -> None:
    """Run `fn` inside one libc `qsort` call: callgrind zeroes before it and dumps after it."""
    libc = ctypes.CDLL(None)
    compare_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    failures: list[BaseException] = []
    ran: list[bool] = []

    def compare(a: object, b: object) -> int:
        if not ran:
            ran.append(True)
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 (re-raised below, outside C)
                failures.append(exc)
        return 0

    callback = compare_type(compare)
    items = (ctypes.c_int * 2)(0, 1)
    libc.qsort(items, 2, ctypes.sizeof(ctypes.c_int), callback)
    if failures:
        raise failures[0]
    if not ran:
        raise RuntimeError("qsort did not call back")


def _child(names: list[str], variants: list[str], model: str) -> None:
    sys.path.insert(0, str(HERE.parent))
    from _workloads import WORKLOADS, Workload, use_model  # noqa: PLC0415 (a script's own module)

    use_model(model)

    built = {(n, v): WORKLOADS[n][v](None) for n in names for v in variants}
    # one event loop for every run, as a server has: its set-up is no part of a run
    # run_until_complete, not Runner.run: that swaps the SIGINT handler around each run and
    # reprs the finished task, result and all, on the way (no part of a run)
    loop = asyncio.Runner().get_loop()
    for workload in built.values():  # warm up, uninstrumented
        loop.run_until_complete(workload.arun())
    blocks: list[tuple[str, str, int]] = []
    subprocess.run(
        ["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True
    )
    for (name, variant), workload in built.items():
        for runs in BLOCKS[name]:
            gc.collect()

            def block(workload: Workload = workload, runs: int = runs) -> None:
                for _ in range(runs):
                    loop.run_until_complete(workload.arun())

            _in_qsort(block)
            blocks.append((name, variant, runs))
    print(json.dumps(blocks), flush=True)
    os._exit(0)  # no interpreter shutdown: it may sort too, which would add a dump


def main(argv: list[str]) -> int:
    """Count and print (`[NAMES [MODEL]]`), or run the blocks under callgrind (`--child ...`)."""
    if argv and argv[0] == "--child":
        _child(argv[1].split(","), argv[2].split(","), argv[3])
        return 0
    names = (argv[0] if argv else "pipeline,react,loop").split(",")
    model = argv[1] if len(argv) > 1 else "scripted"
    variants = ("graphflow", "subgraphs", "plain")
    counts = count(names, variants, model)
    print(f"model: {model}; instructions per run (callgrind), (N runs − M runs) / (N − M)")
    print(
        f"{'workload':<10}{'graphflow':>12}{'subgraph':>12}{'plain':>12}{'gf/plain':>10}{'gf/floor':>10}"
    )
    for name, c in counts.items():
        print(
            f"{name:<10}{c['graphflow'] / 1e6:>11.2f}M{c['subgraphs'] / 1e6:>11.2f}M"
            f"{c['plain'] / 1e6:>11.2f}M{c['graphflow'] / c['plain']:>10.2f}"
            f"{c['graphflow'] / c['subgraphs']:>10.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
