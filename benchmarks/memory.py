"""Peak memory: graphflow against hand-written LangGraph on the same workloads, in one process.

Python heap peaks (`tracemalloc`, reset before each measurement, after a garbage collection) of:
compiling the 100-agent tree of the overhead benchmark; one run of the 50-call ReAct agent with
2 KB tool results (in memory and on SQLite); one run of the 64-branch fan-out. Each figure is the
peak above what was allocated when the measurement started, so what the workload itself holds.

    python benchmarks/memory.py             # the full sizes
    python benchmarks/memory.py --quick     # 10 tool calls, 16 branches, a 4×4 tree (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _workloads import big_tree  # noqa: E402
from checkpoints import langgraph_react, react_agent  # noqa: E402
from fanout import _input, graphflow_fanout, langgraph_fanout  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402


def peak(fn: Callable[[], Any]) -> float:
    """MiB allocated at the peak of `fn()` above the start."""
    gc.collect()
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    fn()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (top - start) / 2**20


def _react_gf(calls: int, store: Any) -> Callable[[], Any]:
    agent = react_agent(calls)

    def run() -> None:
        state = agent.invoke("go", thread_id=uuid.uuid4().hex, checkpointer=store)
        assert state["agent_status"]["agent"] == "completed", state["agent_status"]

    return run


def _react_lg(calls: int, saver: Any) -> Callable[[], Any]:
    graph = langgraph_react(calls, saver)
    return lambda: graph.invoke(
        {"messages": [HumanMessage("go")]},
        {"configurable": {"thread_id": uuid.uuid4().hex}},
        durability="sync",
    )


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (CI)")
    args = parser.parse_args(argv)
    calls, branches, flows = (10, 16, 4) if args.quick else (50, 64, 10)
    folder = Path(tempfile.mkdtemp(prefix="gf-mem-"))
    import sqlite3

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    lg_sqlite = SqliteSaver(sqlite3.connect(folder / "lg.db", check_same_thread=False))
    lg_sqlite.setup()
    gf_tree: list[Any] = []
    gf_fan, lg_fan = graphflow_fanout(branches), langgraph_fanout(branches, sync=False)
    rows = [
        (
            f"compile {flows}×{flows} agent tree",
            lambda: gf_tree.append(big_tree(flows, flows).compile(False)),
            None,
        ),
        (
            f"ReAct {calls} calls, memory",
            _react_gf(calls, "memory:"),
            _react_lg(calls, InMemorySaver()),
        ),
        (
            f"ReAct {calls} calls, SQLite",
            _react_gf(calls, f"sqlite:///{folder / 'gf.db'}"),
            _react_lg(calls, lg_sqlite),
        ),
        (
            f"fan-out {branches} × 0.2 s",
            lambda: asyncio.run(gf_fan.ainvoke(_input())),
            lambda: asyncio.run(lg_fan.ainvoke(_input())),
        ),
    ]
    print("peak Python heap (tracemalloc) during one run, MiB above the start")
    print(f"{'workload':<30}{'graphflow':>10}{'langgraph':>10}{'gf/lg':>7}")
    for name, gf, lg in rows:
        if lg is not None:  # warm up: compile, bind tools, open the stores
            gf(), lg()
        gf_mib = peak(gf)
        if lg is None:
            print(f"{name:<30}{gf_mib:>10.1f}{'-':>10}{'-':>7}")
            continue
        lg_mib = peak(lg)
        print(f"{name:<30}{gf_mib:>10.1f}{lg_mib:>10.1f}{gf_mib / lg_mib:>7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
