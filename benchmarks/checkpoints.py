"""What durability costs: time and bytes per checkpoint, graphflow against hand-written LangGraph.

The workload is a ReAct agent that makes N tool calls with 2 KB results (`context.report`) and
then answers, on the same scripted model. graphflow runs it as a `ReactAgent` through
`agent.invoke(..., checkpointer=URL)` — the user's path, with its thread lease and
`durability="sync"`; the baseline is a hand-written model ⇄ tools `StateGraph` on the same kind
of saver with `durability="sync"`. For every store (none, memory, SQLite, and PostgreSQL when
GRAPHFLOW_TEST_POSTGRES_URL is set) it prints ms per run, checkpoints written per run (all
namespaces), the time each checkpoint adds over the same run without a store, and the bytes
stored per checkpoint (checkpoint, metadata, blobs and pending writes of the run's thread).

    python benchmarks/checkpoints.py             # 20 tool calls, 21 runs
    python benchmarks/checkpoints.py --quick     # 4 tool calls, 2 runs (CI)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent))

from context import report  # noqa: E402
from langchain_core.messages import AnyMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402

from graphflow import ReactAgent  # noqa: E402
from graphflow.testing import ScriptedChatModel, tool_call  # noqa: E402


@tool
def search(query: str) -> str:
    """Search market reports."""
    return report(query)


def _model(calls: int) -> ScriptedChatModel:
    def reply(messages: list[Any], n: int) -> Any:
        tools = sum(isinstance(m, ToolMessage) for m in messages)
        return tool_call("search", {"query": f"q{tools}"}) if tools < calls else "Done."

    return ScriptedChatModel(fn=reply)


def react_agent(calls: int) -> ReactAgent:
    """The graphflow agent: `calls` tool calls, then an answer."""
    return ReactAgent(
        name="agent",
        model=_model(calls),
        tools=[search],
        output_key="answer",
        max_iterations=calls + 1,
    )


class State(TypedDict, total=False):
    """The baseline's state."""

    messages: Annotated[list[AnyMessage], add_messages]


def langgraph_react(calls: int, saver: Any) -> Any:
    """The hand-written ReAct graph on `saver` (None: no checkpointer)."""
    model = _model(calls).bind_tools([search])

    def call_model(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def call_tools(state: State) -> dict[str, Any]:
        last = state["messages"][-1]
        return {
            "messages": [
                ToolMessage(search.invoke(c["args"]), tool_call_id=c["id"], name=c["name"])
                for c in last.tool_calls  # type: ignore[union-attr]
            ]
        }

    builder = StateGraph(State)
    builder.add_node("model", call_model)
    builder.add_node("tools", call_tools)
    builder.add_edge(START, "model")
    builder.add_conditional_edges(
        "model", lambda s: "tools" if s["messages"][-1].tool_calls else END, ["tools", END]
    )
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=saver)


@contextlib.contextmanager
def stores(folder: Path) -> Iterator[dict[str, tuple[Any, Any]]]:
    """Each store by name: (graphflow checkpointer, LangGraph saver)."""
    out: dict[str, tuple[Any, Any]] = {
        "none": (False, None),
        "memory": ("memory:", InMemorySaver()),
    }
    from langgraph.checkpoint.sqlite import SqliteSaver

    lg_sqlite = SqliteSaver(sqlite3.connect(folder / "lg.db", check_same_thread=False))
    lg_sqlite.setup()
    out["sqlite"] = (f"sqlite:///{folder / 'gf.db'}", lg_sqlite)
    with contextlib.ExitStack() as stack:
        url = os.environ.get("GRAPHFLOW_TEST_POSTGRES_URL")
        if url:
            from langgraph.checkpoint.postgres import PostgresSaver

            lg_pg = stack.enter_context(PostgresSaver.from_conn_string(url))
            lg_pg.setup()
            out["postgres"] = (url, lg_pg)
        yield out


def stored_bytes(store: str, where: Any, thread_id: str) -> tuple[int, int]:
    """(bytes, checkpoints) stored for `thread_id`: SQLite file path or PostgreSQL URL."""
    if store == "sqlite":
        with contextlib.closing(sqlite3.connect(where)) as db:
            size, count = db.execute(
                "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0), COUNT(*) "
                "FROM checkpoints WHERE thread_id = ?",
                (thread_id,),
            ).fetchone()
            (writes,) = db.execute(
                "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = ?",
                (thread_id,),
            ).fetchone()
        return size + writes, count
    import psycopg

    with psycopg.connect(where) as db:
        size, count = db.execute(
            "SELECT COALESCE(SUM(pg_column_size(checkpoint) + pg_column_size(metadata)), 0), "
            "COUNT(*) FROM checkpoints WHERE thread_id = %s",
            (thread_id,),
        ).fetchone()  # type: ignore[misc]
        (blobs,) = db.execute(
            "SELECT COALESCE(SUM(pg_column_size(blob)), 0) FROM checkpoint_blobs "
            "WHERE thread_id = %s",
            (thread_id,),
        ).fetchone()  # type: ignore[misc]
        (writes,) = db.execute(
            "SELECT COALESCE(SUM(pg_column_size(blob)), 0) FROM checkpoint_writes "
            "WHERE thread_id = %s",
            (thread_id,),
        ).fetchone()  # type: ignore[misc]
    return int(size + blobs + writes), int(count)


def main(argv: list[str] | None = None) -> int:
    """Run every store and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 tool calls, 2 runs (CI)")
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--runs", type=int, default=None)
    args = parser.parse_args(argv)
    calls = args.calls or (4 if args.quick else 20)
    runs = args.runs or (2 if args.quick else 21)
    folder = Path(tempfile.mkdtemp(prefix="gf-bench-"))
    agent = react_agent(calls)
    print(
        f"ReAct agent, {calls} tool calls × 2 KB results ({calls + 1} model calls); median of "
        f"{runs} runs; durability='sync'"
    )
    header = (
        f"{'store':<9}{'who':<11}{'ms/run':>8}{'ckpts/run':>10}{'µs/ckpt':>9}{'B/ckpt':>8}"
        f"{'KB/run':>8}{'time gf/lg':>11}{'bytes gf/lg':>12}"
    )
    print(header)
    print("-" * len(header))
    base: dict[str, float] = {}
    with stores(folder) as all_stores:
        for store, (gf_store, lg_saver) in all_stores.items():
            lg_graph = langgraph_react(calls, lg_saver)
            timing: dict[str, list[float]] = {"graphflow": [], "langgraph": []}
            last: dict[str, str] = {}

            def gf_run(thread: str, store_url: Any = gf_store) -> None:
                state = agent.invoke("go", thread_id=thread, checkpointer=store_url)
                assert state["agent_status"]["agent"] == "completed", state["agent_status"]

            def lg_run(thread: str, graph: Any = lg_graph, saver: Any = lg_saver) -> None:
                config = {"configurable": {"thread_id": thread}}
                graph.invoke(
                    {"messages": [HumanMessage("go")]},
                    config,
                    durability="sync" if saver is not None else None,
                )

            runners: dict[str, Callable[[str], None]] = {"graphflow": gf_run, "langgraph": lg_run}
            for who, run in runners.items():  # warm up
                run(f"warm-{who}-{uuid.uuid4().hex[:6]}")
            for _ in range(runs):
                for who, run in runners.items():
                    thread = f"{who}-{uuid.uuid4().hex[:8]}"
                    start = time.perf_counter()
                    run(thread)
                    timing[who].append(time.perf_counter() - start)
                    last[who] = thread
            rows = {}
            for who in ("graphflow", "langgraph"):
                seconds = statistics.median(timing[who])
                size, count = 0, 0
                if store == "sqlite":
                    db = folder / ("gf.db" if who == "graphflow" else "lg.db")
                    size, count = stored_bytes(store, db, last[who])
                elif store == "postgres":
                    size, count = stored_bytes(store, gf_store, last[who])
                elif store == "memory":
                    graph = (
                        lg_graph
                        if who == "langgraph"
                        else agent.compile(checkpointer=gf_store).graph  # the saver graphflow used
                    )
                    count = _count_memory(graph, last[who])
                if store == "none":
                    base[who] = seconds
                rows[who] = (seconds, size, count)
            for who, (seconds, size, count) in rows.items():
                other = rows["langgraph"]
                per_ckpt = (seconds - base[who]) / count * 1e6 if count else 0.0
                print(
                    f"{store:<9}{who:<11}{seconds * 1e3:>8.1f}{count or '-':>10}"
                    + (f"{per_ckpt:>9.0f}" if count else f"{'-':>9}")
                    + (
                        f"{size // count:>8}{size / 1024:>8.1f}"
                        if size and count
                        else f"{'-':>8}{'-':>8}"
                    )
                    + f"{seconds / other[0]:>11.2f}"
                    + (f"{size / other[1]:>12.2f}" if size and other[1] else f"{'-':>12}")
                )
    print("(µs/ckpt: the run's extra time over the same run without a store, per checkpoint)")
    return 0


def _count_memory(graph: Any, thread_id: str) -> int:
    saver = graph.checkpointer
    return sum(1 for _ in saver.list({"configurable": {"thread_id": thread_id}}))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
