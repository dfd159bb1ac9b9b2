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
    # the bound is on the whole result: the first block takes it all, the second is left out
    (first,) = seen.content
    assert first["text"].startswith("a" * 50 + "\n[... result truncated: 455 of 505 characters")
    assert "2 of 2 content blocks cut or left out" in first["text"]


def _chars(content) -> int:
    if isinstance(content, str):
        return len(content)
    return sum(len(b) if isinstance(b, str) else len(json.dumps(b)) for b in content)


def test_max_result_chars_bounds_the_whole_result_not_each_block(run_mode):
    megabyte = "m" * 1_000_000

    @tool
    def dump(n: int) -> list:
        """Ten large blocks (text, a plain string, an image)."""
        blocks: list = [{"type": "text", "text": megabyte} for _ in range(8)]
        return [*blocks, megabyte, {"type": "image", "base64": megabyte, "mime_type": "image/png"}]

    @tool
    def pictures(n: int) -> list:
        """A small text block, then a large image."""
        return [{"type": "text", "text": "caption"}, {"type": "image", "base64": megabyte}]

    model = ScriptedChatModel(
        replies=[tool_call("dump", {"n": 1}), tool_call("pictures", {"n": 1}), "ok"]
    )
    agent = ReactAgent(name="reader", model=model, tools=[dump, pictures])  # default: 20,000
    run_mode.invoke(agent, "go")
    dumped, pictured = model.requests[1][-1], model.requests[2][-1]
    assert _chars(dumped.content) < 20_000 + 500
    (only,) = dumped.content
    # 9 MB of text and a 1 MB image (+ its 9-character mime type): 20,000 of them are kept
    assert only["text"].startswith(
        "m" * 20_000 + "\n[... result truncated: 9980009 of 10000009 characters omitted"
    )
    assert "10 of 10 content blocks cut or left out" in only["text"]
    # a block that does not fit and has no text to cut is left out whole, with the note
    assert _chars(pictured.content) < 500
    (caption,) = pictured.content
    assert caption["text"].startswith("caption\n[... result truncated: 1000000 of 1000007")
    assert "1 of 2 content blocks cut or left out" in caption["text"]


def test_max_result_chars_bounds_an_error_result_too(run_mode):
    @tool
    def explode(n: int) -> str:
        """Fails with a huge message."""
        raise ValueError("boom " * 200_000)

    model = ScriptedChatModel(replies=[tool_call("explode", {"n": 1}), "ok"])
    agent = ReactAgent(
        name="reader",
        model=model,
        tools=[explode],
        default_tool_policy=ToolPolicy(max_result_chars=1000, recovery={"UNKNOWN": "return"}),
    )
    run_mode.invoke(agent, "go")
    seen = model.requests[1][-1]
    assert isinstance(seen, ToolMessage) and seen.status == "error"
    assert seen.content.startswith("Error [UNKNOWN] in tool `explode`: ValueError: boom")
    assert len(seen.content) < 1000 + 300 and "result truncated" in seen.content
    assert "\nHint: " in seen.content  # the message is cut, not the hint
