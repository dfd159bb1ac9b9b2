"""Non-string results are serialized predictably; long ones are truncated with a note."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from graphflow import ReactAgent
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.tools import ToolPolicy, serialize_result


class Order(BaseModel):
    id: int
    items: list[str]


@dataclass
class Point:
    x: int
    y: int


def test_values_become_predictable_text():
    assert serialize_result("plain") == "plain"
    assert serialize_result({"b": 1, "a": "é"}) == '{"b": 1, "a": "é"}'
    assert serialize_result(Order(id=1, items=["pen"])) == '{"id":1,"items":["pen"]}'
    assert json.loads(
        serialize_result({"when": datetime.date(2025, 1, 2), "tags": {"b", "a"}, "p": Point(1, 2)})
    ) == {"when": "2025-01-02", "tags": ["a", "b"], "p": {"x": 1, "y": 2}}
    assert serialize_result(b"caf\xc3\xa9") == "café"
    binary = serialize_result(b"\xff\x00\x01")
    assert binary.startswith("[binary data, 3 bytes, base64-encoded]") and "base64:/wAB" in binary
    assert serialize_result([1, 2]) == "[1, 2]"
    blocks = [{"type": "text", "text": "hi"}]
    assert serialize_result(blocks) == blocks


def test_long_results_are_truncated_with_a_note():
    text = serialize_result("x" * 50, max_chars=10)
    assert text.startswith("x" * 10 + "\n[... result truncated: 40 of 50 characters omitted")
    assert serialize_result("short", max_chars=10) == "short"


def test_the_model_sees_json_for_a_pydantic_result_and_truncated_text(run_mode):
    @tool
    def order(n: int) -> Order:
        """Get an order."""
        return Order(id=n, items=["pen", "ink"])

    @tool
    def log(n: int) -> str:
        """A long log."""
        return "line\n" * 1000

    model = ScriptedChatModel(
        replies=[tool_call("order", {"n": 7}), tool_call("log", {"n": 1}), "ok"]
    )
    agent = ReactAgent(
        name="clerk",
        model=model,
        tools=[order, log],
        tool_policies={"log": ToolPolicy(max_result_chars=100)},
    )
    run_mode.invoke(agent, "go")
    first, second = model.requests[1][-1], model.requests[2][-1]
    assert isinstance(first, ToolMessage) and first.content == '{"id":7,"items":["pen","ink"]}'
    assert second.content.startswith("line\n" * 20)
    assert "result truncated: 4900 of 5000 characters omitted" in second.content


def test_a_tool_that_returns_content_blocks_and_an_artifact_is_truncated_too(run_mode):
    @tool(response_format="content_and_artifact")
    def scan(n: int) -> tuple[list, dict]:
        """Scan pages."""
        blocks = [{"type": "text", "text": "a" * 500}, {"type": "text", "text": "short"}]
        return blocks, {"pages": n}

    model = ScriptedChatModel(replies=[tool_call("scan", {"n": 2}), "ok"])
    agent = ReactAgent(
        name="scanner",
        model=model,
        tools=[scan],
        default_tool_policy=ToolPolicy(max_result_chars=50),
    )
    run_mode.invoke(agent, "go")
    seen = model.requests[1][-1]
    assert isinstance(seen, ToolMessage) and seen.artifact == {"pages": 2}
    first, second = seen.content
    assert first["text"].startswith("a" * 50 + "\n[... result truncated: 450 of 500 characters")
    assert second == {"type": "text", "text": "short"}
