"""The example team on its demo models, each model call taking BATCH_LATENCY seconds (0.2).

A target for `graphflow batch` and `benchmarks/batch.py`: `benchmarks/batch_team.py:pipeline`.
Model and tool calls are logged (one line each) to BATCH_LOG when it is set, so a benchmark can
count what ran twice.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.competitive_analysis import team as example  # noqa: E402
from examples.competitive_analysis.demo_models import demo_models  # noqa: E402

LATENCY = float(os.environ.get("BATCH_LATENCY", "0.2"))
LOG = os.environ.get("BATCH_LOG")


def _logged(fn: Any, what: str) -> Any:
    def reply(messages: Any, n: int) -> Any:
        if LOG:
            with open(LOG, "a") as f:
                f.write(f"{what}\n")
        return fn(messages, n)

    return reply


def _models() -> tuple[Any, Any, Any]:
    models = demo_models()
    for model, what in zip(models, ("research", "write", "review"), strict=True):
        model.latency = LATENCY
        model.fn = _logged(model.fn, f"model {what}")
    return models


example.models = _models  # the example builds its team on whatever models() returns
pipeline = example.build().pipeline
