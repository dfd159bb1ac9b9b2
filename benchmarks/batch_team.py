"""The example team on its demo models, each model call taking BATCH_LATENCY seconds (0.2).

A target for `graphflow batch` and `benchmarks/batch.py`: `benchmarks/batch_team.py:pipeline`.
So that a benchmark can count what ran twice:

* with BATCH_LOG set, every model call appends a line `model <agent> <thread> <digest>` to that file;
  the digest is of the messages the model was sent, so a call repeated after a crash (the same
  thread, the same messages) gives the same line twice;
* with BATCH_EFFECTS_URL set (a PostgreSQL URL), the researcher's `web_search` tool has a side
  effect: it inserts its query (which names the input) into the table `batch_effects` there.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

from langchain_core.tools import tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.competitive_analysis import team as example  # noqa: E402
from examples.competitive_analysis.demo_models import demo_models  # noqa: E402

LATENCY = float(os.environ.get("BATCH_LATENCY", "0.2"))
LOG = os.environ.get("BATCH_LOG")
EFFECTS = os.environ.get("BATCH_EFFECTS_URL")
EFFECTS_TABLE = (
    "CREATE TABLE IF NOT EXISTS batch_effects (query text, at timestamptz DEFAULT now())"
)


def _digest(messages: Any) -> str:
    """The call's thread (its input) and a digest of the messages it was sent."""
    from langgraph.config import get_config

    config = get_config()
    where = config.get("configurable", {})
    # the task's namespace names the loop pass (task ids are fixed by the checkpoint they run
    # from, so a call repeated after a crash has the same one)
    text = "\x1e".join(
        [where.get("checkpoint_ns", ""), str(config.get("metadata", {}).get("langgraph_step"))]
        + [f"{m.type}:{m.text}" for m in messages]
    )
    return f"{where.get('thread_id', '?')} {hashlib.sha1(text.encode('utf-8')).hexdigest()[:16]}"


def _logged(fn: Any, what: str) -> Any:
    def reply(messages: Any, n: int) -> Any:
        if LOG:
            with open(LOG, "a") as f:
                f.write(f"{what} {_digest(messages)}\n")
        return fn(messages, n)

    return reply


def _models() -> tuple[Any, Any, Any]:
    models = demo_models()
    for model, what in zip(models, ("research", "write", "review"), strict=True):
        model.latency = LATENCY
        model.fn = _logged(model.fn, f"model {what}")
    return models


_search = example.web_search


@tool("web_search", description=_search.description)
def recorded_search(query: str) -> str:
    """The example's search, with a side effect that must happen once: a row in batch_effects."""
    if EFFECTS:
        import psycopg

        with psycopg.connect(EFFECTS, autocommit=True) as conn:
            conn.execute("INSERT INTO batch_effects (query) VALUES (%s)", (query,))
    return str(_search.invoke({"query": query}))


example.models = _models  # the example builds its team on whatever models() returns
example.web_search = recorded_search  # ... and with whatever tool this names
pipeline = example.build().pipeline
