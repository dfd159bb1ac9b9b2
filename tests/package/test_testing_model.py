"""ScriptedChatModel: the public scripted, tool-calling, streaming fake model."""

import asyncio
import time

import pytest
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage
from pydantic import BaseModel

from graphflow.testing import ScriptedChatModel, tool_call, tool_calls


class Answer(BaseModel):
    title: str
    score: int


def test_replies_from_list_in_order():
    model = ScriptedChatModel(replies=["one", AIMessage(content="two")])
    assert model.invoke("hi").content == "one"
    assert model.invoke("again").content == "two"
    assert model.calls == 2


def test_replies_from_fn_get_messages_and_call_number():
    seen = []

    def fn(messages, n):
        seen.append((messages[-1].content, n))
        return f"reply {n} to {messages[-1].content}"

    model = ScriptedChatModel(fn=fn)
    assert model.invoke("a").content == "reply 0 to a"
    assert model.invoke("b").content == "reply 1 to b"
    assert seen == [("a", 0), ("b", 1)]


def test_tool_calls_are_emitted():
    model = ScriptedChatModel(
        replies=[
            tool_call("search", {"query": "x"}),
            tool_calls(("a", {"k": 1}), ("b", {}), content="thinking"),
        ]
    )
    first = model.invoke("q")
    assert [(tc["name"], tc["args"]) for tc in first.tool_calls] == [("search", {"query": "x"})]
    assert first.tool_calls[0]["id"]
    second = model.invoke("q")
    assert second.content == "thinking"
    assert [tc["name"] for tc in second.tool_calls] == ["a", "b"]
    assert len({tc["id"] for tc in second.tool_calls}) == 2


def test_sync_stream_is_token_by_token_and_keeps_tool_calls():
    reply = tool_call("search", {"query": "pura x"}, content="Let me look that up")
    model = ScriptedChatModel(replies=["The quick brown fox", reply])
    chunks = list(model.stream("hi"))
    assert len(chunks) == 4
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert "".join(c.content for c in chunks) == "The quick brown fox"

    chunks = list(model.stream("hi"))
    assert len(chunks) > 1
    merged = chunks[0]
    for c in chunks[1:]:
        merged = merged + c
    assert merged.content == "Let me look that up"
    assert [(tc["name"], tc["args"]) for tc in merged.tool_calls] == [
        ("search", {"query": "pura x"})
    ]
    assert merged.tool_calls[0]["id"] == reply.tool_calls[0]["id"]


async def test_async_stream_is_token_by_token_and_keeps_tool_calls():
    model = ScriptedChatModel(
        replies=["alpha beta gamma", tool_call("lookup", {"id": 7}, content="ok then")]
    )
    chunks = [c async for c in model.astream("hi")]
    assert [c.content for c in chunks] == ["alpha ", "beta ", "gamma"]

    chunks = [c async for c in model.astream("hi")]
    merged = chunks[0]
    for c in chunks[1:]:
        merged = merged + c
    assert merged.content == "ok then"
    assert [(tc["name"], tc["args"]) for tc in merged.tool_calls] == [("lookup", {"id": 7})]


def test_bind_tools_records_tool_names(search_tool):
    def other(x: int) -> int:
        """Double x."""
        return 2 * x

    model = ScriptedChatModel(replies=["a", "b"])
    model.bind_tools([search_tool, other]).invoke("hi")
    model.invoke("no tools")
    assert model.request_tools == [["search", "other"], []]


def test_structured_output_parses_pydantic():
    model = ScriptedChatModel(
        replies=[
            '{"title": "t", "score": 3}',
            Answer(title="m", score=1),
            {"title": "d", "score": 2},
        ]
    )
    structured = model.with_structured_output(Answer)
    assert structured.invoke("q") == Answer(title="t", score=3)
    assert structured.invoke("q") == Answer(title="m", score=1)
    assert structured.invoke("q") == Answer(title="d", score=2)


def test_structured_output_include_raw():
    model = ScriptedChatModel(replies=['{"title": "t", "score": 3}', "not json"])
    structured = model.with_structured_output(Answer, include_raw=True)
    ok = structured.invoke("q")
    assert ok["parsed"] == Answer(title="t", score=3)
    assert ok["parsing_error"] is None
    assert isinstance(ok["raw"], AIMessage)
    bad = structured.invoke("q")
    assert bad["parsed"] is None
    assert bad["parsing_error"] is not None
    assert bad["raw"].content == "not json"


def test_structured_output_invalid_raises_output_parser_exception():
    model = ScriptedChatModel(replies=['{"title": "t", "score": "many"}', "nope"])
    structured = model.with_structured_output(Answer)
    with pytest.raises(OutputParserException):
        structured.invoke("q")
    with pytest.raises(OutputParserException):
        structured.invoke("q")


async def test_latency_is_async_sleep_so_calls_overlap():
    model = ScriptedChatModel(replies=["a", "b", "c"], latency=0.3)
    start = time.perf_counter()
    results = await asyncio.gather(*(model.ainvoke("x") for _ in range(3)))
    elapsed = time.perf_counter() - start
    assert sorted(r.content for r in results) == ["a", "b", "c"]
    # one after another takes at least 0.9 s whatever the load; overlapping, about 0.3 s
    assert 0.3 <= elapsed < 0.9


def test_sync_latency_sleeps():
    model = ScriptedChatModel(replies=["a"], latency=0.2)
    start = time.perf_counter()
    model.invoke("x")
    assert time.perf_counter() - start >= 0.2


def test_requests_record_exact_messages():
    model = ScriptedChatModel(replies=["a", "b"])
    first = [SystemMessage(content="sys"), HumanMessage(content="hello")]
    model.invoke(first)
    model.invoke("plain")
    assert len(model.requests) == 2
    assert [type(m) for m in model.requests[0]] == [SystemMessage, HumanMessage]
    assert [m.content for m in model.requests[0]] == ["sys", "hello"]
    assert [m.content for m in model.requests[1]] == ["plain"]


def test_running_out_of_replies_is_a_clear_error():
    model = ScriptedChatModel(replies=["only one"])
    model.invoke("first")
    with pytest.raises(IndexError, match=r"ran out of replies.*call 2.*only 1 scripted"):
        model.invoke("second message")


def test_exception_reply_is_raised_and_reset_restarts():
    model = ScriptedChatModel(replies=[RuntimeError("boom"), "fine"])
    with pytest.raises(RuntimeError, match="boom"):
        model.invoke("x")
    assert model.invoke("x").content == "fine"
    model.reset()
    assert model.calls == 0 and model.requests == []
    with pytest.raises(RuntimeError):
        model.invoke("x")
