"""Local batches: every input a durable thread, bounded concurrency, a rerun continues the batch."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphflow import FunctionAgent, ReactAgent, SequentialAgent
from graphflow.batch import (
    BatchInput,
    abatch,
    abatch_iter,
    batch,
    batch_thread_id,
    read_inputs,
)
from graphflow.exceptions import InputError
from graphflow.testing import ScriptedChatModel


class Team:
    """A two-agent team whose checker fails once for inputs listed in `flaky`."""

    def __init__(self, flaky: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.flaky = set(flaky)
        self.failed: set[str] = set()
        self.checks: list[str] = []
        self.model = ScriptedChatModel(fn=lambda messages, n: f"summary of {messages[-1].content}")
        self.agent = SequentialAgent(
            name="team",
            sub_agents=[
                ReactAgent(
                    name="writer",
                    model=self.model,
                    instruction="Summarise {input}.",
                    output_key="summary",
                ),
                FunctionAgent(name="checker", fn=self.check, output_key="verdict"),
            ],
        )

    def check(self, state: dict[str, Any]) -> str:
        product = state["input"]
        self.checks.append(product)
        if product in self.flaky and product not in self.failed:
            self.failed.add(product)
            raise RuntimeError(f"checker lost its connection on {product}")
        return f"ok {product}"


def test_every_input_runs_on_its_own_thread_in_input_order(tmp_path: Path) -> None:
    team = Team()
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    products = ["Pura X", "Pixel 9", "Galaxy Z Flip6", "Xiaomi 15", "iPhone 16"]
    results = batch(team.agent, products, concurrency=2, checkpointer=store, batch_id="b1")
    assert [r.id for r in results] == ["0", "1", "2", "3", "4"]
    assert [r.status for r in results] == ["done"] * 5
    assert [r.outputs["verdict"] for r in results] == [f"ok {p}" for p in products]
    assert results[2].outputs["summary"].startswith("summary of")
    assert len({r.thread_id for r in results}) == 5
    assert all(r.thread_id.startswith("b1/") for r in results)
    assert all(r.usage and r.usage["total_tokens"] > 0 for r in results)
    # each thread is an ordinary stored run
    assert (
        team.agent.get_state(results[3].thread_id, checkpointer=store).values["input"]
        == "Xiaomi 15"
    )
    assert team.model.calls == 5


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_failed_input_does_not_stop_the_others_and_a_rerun_resumes_only_it(
    tmp_path: Path, mode: str
) -> None:
    team = Team(flaky={"Pixel 9"})
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    products = ["Pura X", "Pixel 9", "Galaxy Z Flip6"]

    def run() -> list[Any]:
        if mode == "sync":
            return batch(team.agent, products, concurrency=3, checkpointer=store, batch_id="b")
        return asyncio.run(
            abatch(team.agent, products, concurrency=3, checkpointer=store, batch_id="b")
        )

    first = run()
    assert [r.status for r in first] == ["done", "failed", "done"]
    assert "checker lost its connection on Pixel 9" in (first[1].error or "")
    assert first[1].error_type
    assert team.model.calls == 3

    again = run()
    assert [r.status for r in again] == ["done", "done", "done"]
    assert [r.reused for r in again] == [True, False, True]
    assert again[1].outputs["verdict"] == "ok Pixel 9"
    assert again[0].outputs == first[0].outputs
    # the writer's completed model call was not repeated; only the failed checker ran again
    assert team.model.calls == 3
    assert team.checks.count("Pixel 9") == 2 and team.checks.count("Pura X") == 1


def test_never_more_inputs_at_once_than_the_concurrency(tmp_path: Path) -> None:
    lock = threading.Lock()
    now = {"running": 0, "most": 0}
    full: list[asyncio.Event] = []

    async def slow(state: dict[str, Any]) -> str:
        if not full:
            full.append(asyncio.Event())
        with lock:
            now["running"] += 1
            now["most"] = max(now["most"], now["running"])
            if now["running"] >= 3:
                full[0].set()
        # the first three wait for each other: all three run at once, and a fourth would show
        await asyncio.wait_for(full[0].wait(), timeout=30)
        await asyncio.sleep(0.01)
        with lock:
            now["running"] -= 1
        return state["input"].upper()

    agent = FunctionAgent(name="slow", fn=slow, output_key="loud")
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    seen: list[str] = []
    results = asyncio.run(
        abatch(
            agent,
            [f"item {i}" for i in range(9)],
            concurrency=3,
            checkpointer=store,
            on_result=lambda r: seen.append(r.id),
        )
    )
    assert now["most"] == 3
    assert [r.outputs["loud"] for r in results] == [f"ITEM {i}" for i in range(9)]
    assert sorted(seen, key=int) == [str(i) for i in range(9)]


def test_results_can_be_consumed_as_they_finish(tmp_path: Path) -> None:
    async def wait(state: dict[str, Any]) -> str:
        await asyncio.sleep(float(state["input"]))
        return state["input"]

    agent = FunctionAgent(name="wait", fn=wait, output_key="waited")

    async def consume() -> list[str]:
        return [
            r.id
            async for r in abatch_iter(
                agent, ["0.3", "0.01"], concurrency=2, checkpointer=f"sqlite:///{tmp_path / 'r.db'}"
            )
        ]

    assert asyncio.run(consume()) == ["1", "0"]  # the short one first


def test_ids_name_threads_and_must_be_unique(tmp_path: Path) -> None:
    team = Team()
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    results = batch(
        team.agent,
        [{"id": "pura", "input": "Pura X"}, BatchInput(id="pixel", value="Pixel 9")],
        checkpointer=store,
        batch_id="named",
    )
    assert [r.thread_id for r in results] == ["named/pura", "named/pixel"]
    with pytest.raises(InputError, match="share the id 'x'"):
        batch(
            team.agent, [{"id": "x", "input": "a"}, {"id": "x", "input": "b"}], checkpointer=store
        )
    with pytest.raises(InputError, match="empty"):
        batch(team.agent, ["a", ""], checkpointer=store)
    with pytest.raises(InputError, match="concurrency"):
        batch(team.agent, ["a"], checkpointer=store, concurrency=0)
    with pytest.raises(InputError, match="checkpointer=False"):
        batch(team.agent, ["a"], checkpointer=False)


def test_the_default_batch_id_is_stable_so_a_rerun_continues(tmp_path: Path) -> None:
    team = Team()
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    first = batch(team.agent, ["a", "b"], checkpointer=store)
    second = batch(team.agent, ["a", "b"], checkpointer=store)
    assert [r.thread_id for r in first] == [r.thread_id for r in second]
    assert all(r.reused for r in second) and team.model.calls == 2
    other = batch(team.agent, ["a", "c"], checkpointer=store)
    assert other[0].thread_id != first[0].thread_id


def test_thread_ids_are_bounded_readable_and_never_collide() -> None:
    long_a, long_b = "x" * 300 + "a", "x" * 300 + "b"
    ids = [
        batch_thread_id("b", k) for k in (long_a, long_b, "华为 Pura X", "华为", "Pura-X", "Pura X")
    ]
    assert len(set(ids)) == len(ids)
    assert all(len(t) <= 2 + 48 + 11 for t in ids)
    assert ids[2].startswith("b/华为-Pura-X~")
    assert batch_thread_id("b", "pura-x") == "b/pura-x"
    # a key with a lone surrogate (a JSON line's `"id": "\\ud800"`) gets a thread of its own
    odd = [batch_thread_id("b", k) for k in ("a\ud800", "a\ud801", "a")]
    assert len(set(odd)) == 3 and all(t.isprintable() and t.encode() for t in odd)


def test_a_result_is_one_json_line() -> None:
    from graphflow.batch import BatchResult

    line = BatchResult(
        id="1", index=1, thread_id="b/1", status="failed", error="boom", error_type="RuntimeError"
    ).to_json()
    assert "\n" not in line
    assert json.loads(line) == {
        "id": "1",
        "thread": "b/1",
        "status": "failed",
        "outputs": {},
        "usage": None,
        "error": "boom",
        "error_type": "RuntimeError",
        "reused": False,
    }


def test_inputs_files_report_bad_lines_and_keep_the_good_ones(tmp_path: Path) -> None:
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text(
        '"Pura X"\n{"id": "p9", "input": "Pixel 9"}\n{not json\n\n42\n{"id": "p9", "input": "again"}\n'
    )
    inputs, bad = read_inputs(jsonl)
    assert [(i.id, i.value, i.line) for i in inputs] == [
        ("0", "Pura X", 1),
        ("p9", {"input": "Pixel 9"}, 2),
    ]
    assert [b.line for b in bad] == [3, 4, 5, 6]
    assert "not valid JSON" in bad[0].reason and "empty" in bad[1].reason
    assert "repeats line 2" in bad[3].reason

    csv_file = tmp_path / "in.csv"
    csv_file.write_text("id,product,notes\na,Pura X,x\nb,,y\nc,Pixel 9,z\n")
    inputs, bad = read_inputs(csv_file, column="product")
    assert [(i.id, i.value) for i in inputs] == [
        ("a", {"input": "Pura X"}),
        ("c", {"input": "Pixel 9"}),
    ]
    assert [b.line for b in bad] == [3]
    with pytest.raises(InputError, match="no column 'nope'"):
        read_inputs(csv_file, column="nope")

    text = tmp_path / "in.txt"
    text.write_text("Pura X\n\n  Pixel 9  \n")
    inputs, bad = read_inputs(text)
    assert [i.value for i in inputs] == ["Pura X", "Pixel 9"] and [b.line for b in bad] == [2]
    with pytest.raises(InputError, match="cannot read"):
        read_inputs(tmp_path / "missing.jsonl")


def test_the_team_and_its_compiled_object_run_batches_too(tmp_path: Path) -> None:
    team = Team()
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    seen: list[str] = []
    results = team.agent.batch(
        ["a", "b"], checkpointer=store, batch_id="sugar", on_result=lambda r: seen.append(r.id)
    )
    assert [r.status for r in results] == ["done", "done"] and sorted(seen) == ["0", "1"]
    compiled = team.agent.compile(store)
    again = asyncio.run(compiled.abatch(["a", "b", "c"], batch_id="sugar"))
    assert [r.reused for r in again] == [True, True, False]
    assert compiled.batch(["c"], batch_id="sugar")[0].reused
    assert team.model.calls == 3
    with pytest.raises(InputError, match="already compiled"):
        batch(compiled, ["a"], checkpointer=store)
    with pytest.raises(InputError, match="checkpointer=False"):
        team.agent.compile(False).batch(["a"])


class CountingSaver(InMemorySaver):
    """An in-memory store that counts its reads (async reads go through these too)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()

    def get_tuple(self, config: Any) -> Any:
        self.reads["get_tuple"] += 1
        return super().get_tuple(config)

    def list(self, *args: Any, **kwargs: Any) -> Any:
        self.reads["list"] += 1
        return super().list(*args, **kwargs)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_done_input_is_read_from_the_store_once_when_the_batch_runs_again(mode: str) -> None:
    team = Team()
    saver = CountingSaver()
    compiled = team.agent.compile(saver)
    products = ["Pura X", "Pixel 9", "Galaxy Z Flip6"]
    first = compiled.batch(products, batch_id="once")
    assert [r.status for r in first] == ["done"] * 3
    saver.reads.clear()
    if mode == "sync":
        again = compiled.batch(products, batch_id="once")
    else:
        again = asyncio.run(compiled.abatch(products, batch_id="once"))
    assert [r.reused for r in again] == [True, True, True]
    assert [r.outputs for r in again] == [r.outputs for r in first]
    # one read of each thread's newest checkpoint: its status and its outputs both come from it
    assert saver.reads == Counter({"get_tuple": 3})
    assert team.model.calls == 3
