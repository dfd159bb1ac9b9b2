"""The whole benchmark suite, one script after another, each in its own process.

    python benchmarks/suite.py            # the full configurations (the table in README.md)
    python benchmarks/suite.py --quick    # the small configurations CI runs

Scripts: overhead (per-model-call overhead of four workloads and the compile time),
fanout (64 branches × 0.2 s), context (50-call ReAct, input tokens with and without
HybridContext), checkpoints (time and bytes per checkpoint: memory, SQLite, PostgreSQL when
GRAPHFLOW_TEST_POSTGRES_URL is set), memory (peak heap). Each prints ratios against hand-written
LangGraph on the same scripted model; on a shared machine read the ratios, not the seconds.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("overhead", "fanout", "context", "checkpoints", "memory")


def main(argv: list[str]) -> int:
    """Run every script with `argv`; the first non-zero exit code, else 0."""
    status = 0
    for name in SCRIPTS:
        print(f"\n## {name}.py {' '.join(argv)}".rstrip(), flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(HERE / f"{name}.py"), *argv])
        print(f"({name}: {time.perf_counter() - start:.0f} s, exit {code})", flush=True)
        status = status or code
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
