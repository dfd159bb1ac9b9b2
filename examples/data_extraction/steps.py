"""The deterministic steps of the pipeline (Lynxe's Func-Agents) and the analyst's tool.

Each step is a plain function of the run's state, so it is tested like any function and runs as
a graph node like any agent: its result is checkpointed, and a resumed run never repeats it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.tools import tool
from pydantic import BaseModel, Field

FIELDS = ("order_id", "customer", "amount", "currency", "timestamp")
"""The named groups a template's pattern must have."""

CREATE_SQL = """
CREATE TABLE IF NOT EXISTS orders (
    order_id   TEXT PRIMARY KEY,
    customer   TEXT NOT NULL,
    amount     REAL NOT NULL,
    currency   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    source     TEXT NOT NULL
)"""
INSERT_SQL = (
    "INSERT INTO orders (order_id, customer, amount, currency, created_at, source) "
    "VALUES (:order_id, :customer, :amount, :currency, :timestamp, :source) "
    "ON CONFLICT(order_id) DO NOTHING"
)
"""The one fixed statement that writes rows: an order already stored is left as it is."""


class LogTemplate(BaseModel):
    """How to read an order out of one log line: what the analyst infers."""

    line_pattern: str = Field(
        description="A Python regular expression matching an order line, with the named groups "
        "order_id, customer, amount, currency and timestamp"
    )
    example: str = Field(default="", description="One log line the pattern matches")

    def compiled(self) -> re.Pattern[str]:
        """The pattern, checked to have every field's group."""
        pattern = re.compile(self.line_pattern)
        missing = [f for f in FIELDS if f not in pattern.groupindex]
        if missing:
            raise ValueError(
                f"the log template {self.line_pattern!r} has no group for {', '.join(missing)}; "
                f"a template needs the named groups {', '.join(FIELDS)}"
            )
        return pattern


@tool
def read_sample(path: str, lines: int = 20) -> str:
    """Read the first `lines` lines of a log file."""
    with open(path, encoding="utf-8") as f:
        return "".join(line for _, line in zip(range(lines), f, strict=False))


def list_logs(state: Mapping[str, Any]) -> list[str]:
    """Step 1: the `*.log` files of `log_dir`, sorted."""
    folder = Path(state["log_dir"])
    if not folder.is_dir():
        raise FileNotFoundError(f"log_dir {str(folder)!r} is not a folder; generate sample logs")
    return [str(p) for p in sorted(folder.glob("*.log"))]


def extract_orders(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Step 3: every line of every file that the inferred template matches, as an order."""
    pattern = state["log_template"].compiled()
    orders = []
    for path in state["log_files"]:
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            match = pattern.search(line)
            if match:
                order = {f: match.group(f) for f in FIELDS}
                order["amount"] = float(order["amount"])
                order["source"] = f"{Path(path).name}:{number}"
                orders.append(order)
    return orders


def dedupe_orders(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Step 4: one order per order id, the first logged (retries log an order again)."""
    first: dict[str, dict[str, Any]] = {}
    for order in sorted(state["orders"], key=lambda o: (o["timestamp"], o["source"])):
        first.setdefault(order["order_id"], order)
    return list(first.values())


def store_orders(state: Mapping[str, Any]) -> dict[str, int]:
    """Step 5: write the orders with the fixed `INSERT_SQL`; how many were new, and the total."""
    with sqlite3.connect(state["db_path"]) as db:
        db.execute(CREATE_SQL)
        before = db.total_changes
        db.executemany(INSERT_SQL, state["unique_orders"])
        inserted = db.total_changes - before
        total = db.execute("SELECT COUNT(*) FROM orders").fetchone()[0]
    db.close()
    return {"inserted": inserted, "rows": total}
