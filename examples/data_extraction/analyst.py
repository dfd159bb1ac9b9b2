"""The analyst's demo model: it reads a sample the way a model would and infers the template.

Its reply is built from the sample it was sent: the first token is the timestamp, and each
`key=value` token of an order line becomes a named group.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import BaseMessage

from graphflow.messages import is_instruction
from graphflow.testing import ScriptedChatModel, tool_call

GROUPS = {"order": "order_id", "customer": "customer", "amount": "amount", "currency": "currency"}
VALUES = {"amount": r"[0-9]+(?:\.[0-9]+)?", "currency": r"[A-Z]{3}"}


def infer_template(sample: str) -> dict[str, str]:
    """A `LogTemplate` (as a dict) for the order lines in `sample`."""
    line = next((ln for ln in sample.splitlines() if "order=" in ln), "")
    if not line:
        return {"line_pattern": "(?!)", "example": ""}
    parts = [r"^(?P<timestamp>\S+)"]
    for key, _ in re.findall(r"(\w+)=(\S+)", line):
        if key in GROUPS:
            value_pattern = VALUES.get(key, r"\S+")
            parts.append(rf"\b{key}=(?P<{GROUPS[key]}>{value_pattern})")
    return {"line_pattern": ".*?".join(parts), "example": line}


def analyst_reply(messages: list[BaseMessage], n: int) -> Any:
    """Read a sample of the first file, then answer with the inferred template as JSON."""
    samples = [m.text for m in messages if m.type == "tool"]
    if not samples:
        instruction = next(m.text for m in reversed(messages) if is_instruction(m))
        first = re.findall(r"[^\s\"',\[\]]+\.log", instruction)[0]
        return tool_call("read_sample", {"path": first, "lines": 20})
    return json.dumps(infer_template(samples[-1]))


def demo_model() -> ScriptedChatModel:
    """A fresh demo analyst model."""
    return ScriptedChatModel(fn=analyst_reply)
