"""How fast the `graphflow` command answers: `--help`, `--version`, a usage error, `runs`, `show`.

    python benchmarks/cli_start.py            # best of 5 wall times per command, in seconds
    python benchmarks/cli_start.py --repeat 9
    python benchmarks/cli_start.py --root ../main --module graphflow.cli   # another checkout

Each command runs in a new process (`python -m graphflow ...`) in a temporary folder whose store
holds three small runs. Wall times swing on a shared machine: the best of N is the figure, with
the CPU time the command used (user + system; less moved by other processes than wall time) and
the load average; for what each import costs, `python -X importtime -m graphflow runs`.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = textwrap.dedent(
    """
    from graphflow import FunctionAgent, SequentialAgent

    app = SequentialAgent(name="app", sub_agents=[
        FunctionAgent(name="up", fn=lambda s: s["input"].upper(), output_key="loud"),
    ])
    """
)


def _time(
    folder: Path, env: dict[str, str], *args: str, repeat: int, module: str
) -> tuple[float, float]:
    """(best wall time, best CPU time: user + system) of `python -m MODULE ARGS` in seconds."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", module, *args],
            cwd=folder,
            env=env,
            capture_output=True,
            check=False,
        )
        best = min(best, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_cpu = min(best_cpu, cpu)
    return best, best_cpu


def main() -> None:
    """Print the best wall time of each command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--module", default="graphflow", help="what `python -m` starts")
    options = parser.parse_args()
    repeat, module = options.repeat, options.module
    env = {**os.environ, "PYTHONPATH": str(options.root.resolve())}
    env.pop("GRAPHFLOW_CHECKPOINTER", None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "app.py").write_text(APP)
        for n in range(3):
            subprocess.run(
                [sys.executable, "-m", module, "run", "app.py:app", f"x{n}", "--thread-id",
                 f"t{n}"],
                cwd=folder, env=env, capture_output=True, check=True,
            )  # fmt: skip
        start = time.perf_counter()
        for _ in range(repeat):
            subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare = (time.perf_counter() - start) / repeat
        print(f"{'python -c pass':<28} {bare:.3f} s (the interpreter alone, mean)")
        print(
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
        )
        print(f"{'':<28} {'wall':>8} {'CPU':>8}  (best of {repeat}, seconds)")
        for args in (
            ("--help",),
            ("--version",),
            ("run",),
            ("runs",),
            ("show", "t1"),
        ):
            wall, cpu = _time(folder, env, *args, repeat=repeat, module=module)
            print(f"{'graphflow ' + ' '.join(args):<28} {wall:8.3f} {cpu:8.3f}")


if __name__ == "__main__":
    main()
