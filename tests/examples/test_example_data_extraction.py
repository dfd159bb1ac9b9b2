"""The seed's Func-Agent pipeline: same rows however often it runs; a crash resumes mid-way."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from examples.data_extraction import INSERT_SQL, LogTemplate, build
from examples.data_extraction.analyst import demo_model, infer_template
from examples.data_extraction.generate_logs import generate
from examples.data_extraction.steps import store_orders


def _rows(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT * FROM orders ORDER BY order_id").fetchall()


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    generate(tmp_path / "logs", files=3, orders=40, seed=7)
    return tmp_path / "logs"


def _counting(agent: Any, name: str) -> list[int]:
    step = next(a for a in agent.sub_agents if a.name == name)
    calls: list[int] = []
    fn = step.fn

    def counted(state: Any) -> Any:
        calls.append(1)
        return fn(state)

    step.fn = counted
    return calls


def test_the_generator_writes_duplicates_and_noise(logs: Path) -> None:
    text = "".join(p.read_text() for p in sorted(logs.glob("*.log")))
    ids = re.findall(r"order=(ORD-\d+)", text)
    assert len(set(ids)) == 40 and len(ids) > 40  # retries log some orders twice
    assert "heartbeat" in text
    assert (
        generate(logs.parent / "again", seed=7)[0].read_text() == (logs / "shop-01.log").read_text()
    )


def test_running_twice_stores_the_same_rows(logs: Path, tmp_path: Path) -> None:
    db = tmp_path / "orders.db"
    pipeline = build(demo_model())
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    data = {"log_dir": str(logs), "db_path": str(db)}
    first = pipeline.invoke(data, thread_id="one", checkpointer=store)
    rows = _rows(db)
    assert first["stored"] == {"inserted": 40, "rows": 40}
    assert len(first["orders"]) > 40 and len(first["unique_orders"]) == 40
    assert isinstance(first["log_template"], LogTemplate)
    second = pipeline.invoke(data, thread_id="two", checkpointer=store)
    assert second["stored"] == {"inserted": 0, "rows": 40}
    assert _rows(db) == rows
    assert rows[0][:4] == ("ORD-10001", "bob", 42.01, "CNY")


def test_the_analyst_reads_a_sample_and_infers_a_template(logs: Path) -> None:
    model = demo_model()
    result = build(model).invoke({"log_dir": str(logs), "db_path": ":memory:"})
    tool_results = [m for m in model.requests[1] if m.type == "tool"]
    assert "order=ORD-10001" in tool_results[0].text  # it was sent the first file's head
    pattern = result["log_template"].compiled()
    assert pattern.search((logs / "shop-02.log").read_text().splitlines()[0])
    assert model.calls == 2


def test_a_crash_before_the_write_resumes_without_re_extracting(logs: Path, tmp_path: Path) -> None:
    db = tmp_path / "orders.db"
    model = demo_model()
    pipeline = build(model)
    extracted = _counting(pipeline, "extract")
    store_step = next(a for a in pipeline.sub_agents if a.name == "store")
    write = store_step.fn

    def disk_full(state: Any) -> Any:
        raise OSError("disk full")

    store_step.fn = disk_full
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    data = {"log_dir": str(logs), "db_path": str(db)}
    with pytest.raises(OSError, match="disk full"):  # user errors are raised as they are
        pipeline.invoke(data, thread_id="t", checkpointer=store)
    statuses = pipeline.get_state("t", checkpointer=store).values["agent_status"]
    assert statuses["dedupe"] == "completed" and not db.exists()
    store_step.fn = write
    result = pipeline.resume("t", checkpointer=store)
    assert result["stored"] == {"inserted": 40, "rows": 40}
    assert len(extracted) == 1 and model.calls == 2  # neither extraction nor the model re-ran


def test_the_write_is_one_fixed_statement(tmp_path: Path) -> None:
    order = {
        "order_id": "ORD-1",
        "customer": "a",
        "amount": 1.5,
        "currency": "EUR",
        "timestamp": "2026-01-01T00:00:00Z",
        "source": "x.log:1",
    }
    state = {"db_path": str(tmp_path / "o.db"), "unique_orders": [order, {**order, "amount": 9.0}]}
    assert store_orders(state) == {"inserted": 1, "rows": 1}
    assert _rows(tmp_path / "o.db")[0][2] == 1.5  # the first write wins; nothing is updated
    assert "ON CONFLICT(order_id) DO NOTHING" in INSERT_SQL


def test_a_template_without_a_field_is_refused() -> None:
    bad = LogTemplate(line_pattern=r"order=(?P<order_id>\S+)")
    with pytest.raises(ValueError, match="no group for customer, amount, currency, timestamp"):
        bad.compiled()
    assert infer_template("no orders here")["line_pattern"] == "(?!)"
