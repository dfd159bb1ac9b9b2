"""The seed's Func-Agent pipeline: list logs → infer their structure → extract → dedupe → store.

Four deterministic `FunctionAgent`s around one `ReactAgent`: the model only infers the log
template; listing, extraction, deduplication and the SQL write are plain Python, so they are
exact, cheap and testable. Every step is checkpointed: a run that crashes between steps resumes
at the failed step without re-extracting, and the fixed `INSERT ... ON CONFLICT DO NOTHING`
makes a second run over the same logs add no rows.
"""

from __future__ import annotations

import os
from typing import Any

from graphflow import FunctionAgent, ReactAgent, SequentialAgent

from . import steps
from .analyst import demo_model


def _model() -> Any:
    if os.environ.get("OPENAI_API_KEY"):
        return "openai:" + os.environ.get("GRAPHFLOW_MODEL", "gpt-4o-mini")
    return demo_model()


def build(model: Any = None) -> SequentialAgent:
    """The pipeline; `model` is the analyst's (default: demo model, or OpenAI with a key)."""
    analyst = ReactAgent(
        name="analyst",
        description="Infers the structure of order log lines.",
        model=model if model is not None else _model(),
        tools=[steps.read_sample],
        system_prompt="You infer the structure of log files. Read a sample with read_sample.",
        instruction=(
            "These log files hold checkout orders: {log_files}. Read a sample and answer with a "
            "regular expression whose named groups order_id, customer, amount, currency and "
            "timestamp capture an order line's fields."
        ),
        output_schema=steps.LogTemplate,
        output_key="log_template",
        include_contents="none",
    )
    return SequentialAgent(
        name="data_extraction",
        input_keys=["log_dir", "db_path"],
        output_key="stored",
        sub_agents=[
            FunctionAgent(name="list_logs", fn=steps.list_logs, output_key="log_files"),
            analyst,
            FunctionAgent(name="extract", fn=steps.extract_orders, output_key="orders"),
            FunctionAgent(name="dedupe", fn=steps.dedupe_orders, output_key="unique_orders"),
            FunctionAgent(name="store", fn=steps.store_orders, output_key="stored"),
        ],
    )


pipeline = build()
