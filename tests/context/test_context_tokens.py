"""Offline token counting: exact cl100k counts with no network, caches, usage metadata, windows."""

from __future__ import annotations

import inspect
import logging
import socket

import pytest
import tiktoken
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from tiktoken import registry

from graphflow.context import (
    CONTEXT_WINDOWS,
    DEFAULT_CONTEXT_WINDOW,
    OFFLINE_ENCODING,
    context_window,
    count_tokens,
    token_counter,
)
from graphflow.context import tokens as tokens_module
from graphflow.testing import ScriptedChatModel
from tests.context.context_helpers import web_search

# OpenAI cookbook "How to count tokens with tiktoken": these messages cost 129 prompt tokens on
# gpt-4-0613 / gpt-3.5-turbo-0613 (cl100k_base).
COOKBOOK = [
    SystemMessage(
        "You are a helpful, pattern-following assistant that translates corporate jargon into "
        "plain English."
    ),
    SystemMessage("New synergies will help drive top-line growth.", name="example_user"),
    SystemMessage("Things working well together will increase revenue.", name="example_assistant"),
    SystemMessage(
        "Let's circle back when we have more bandwidth to touch base on opportunities for "
        "increased leverage.",
        name="example_user",
    ),
    SystemMessage(
        "Let's talk later when we're less busy about how to do better.", name="example_assistant"
    ),
    HumanMessage(
        "This late pivot means we don't have time to boil the ocean for the client deliverable."
    ),
]


@pytest.fixture
def no_network(monkeypatch, tmp_path):
    """Sockets raise, tiktoken's download cache is empty, every in-process cache is cleared."""

    def refuse(*args, **kwargs):
        raise OSError("network access blocked by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    registry.ENCODINGS.pop(OFFLINE_ENCODING, None)
    tokens_module.load_offline_encoding.cache_clear()
    tokens_module._text_tokens.cache_clear()
    tokens_module._message_tokens.cache_clear()
    yield
    tokens_module.load_offline_encoding.cache_clear()
    tokens_module._text_tokens.cache_clear()
    tokens_module._message_tokens.cache_clear()


def test_known_strings_match_tiktoken_with_sockets_blocked(no_network):
    with pytest.raises(OSError):
        socket.create_connection(("example.com", 443))
    encoding = tokens_module.load_offline_encoding()
    assert encoding is not None and encoding.name == OFFLINE_ENCODING
    # token ids of cl100k_base (tiktoken's README and OpenAI's cookbook)
    assert encoding.encode("hello world") == [15339, 1917]
    assert encoding.encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert count_tokens("hello world", model="gpt-4") == 2
    assert count_tokens("tiktoken is great!", model="gpt-3.5-turbo") == 6
    assert count_tokens(COOKBOOK, model="gpt-4") == 129
    assert count_tokens(COOKBOOK, model=ScriptedChatModel(model_name="gpt-4-0613")) == 129


def test_the_bundled_data_hash_is_tiktokens_own():
    # the constant graphflow checks is the hash tiktoken's own cl100k_base loader expects
    from tiktoken_ext import openai_public

    assert tokens_module.CL100K_SHA256 in inspect.getsource(openai_public.cl100k_base)
    offline = tiktoken.get_encoding(OFFLINE_ENCODING)
    assert offline.n_vocab == 100277


def test_corrupt_data_file_falls_back_to_the_approximate_counter(
    no_network, monkeypatch, tmp_path, caplog
):
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"not the real file")
    monkeypatch.setattr(tokens_module, "_bundled_file", lambda: str(bad))
    with caplog.at_level(logging.WARNING, logger="graphflow.context"):
        counter = token_counter("gpt-4")
    assert counter.name == "approximate" and not counter.exact
    assert "expected" in caplog.text and tokens_module.CL100K_SHA256 in caplog.text
    assert count_tokens("x" * 400, model="gpt-4") == 100  # 4 characters a token


def test_model_families():
    assert token_counter("gpt-4").exact
    assert token_counter("openai:gpt-3.5-turbo").exact
    o200k = token_counter("gpt-4o-mini")
    assert (o200k.name, o200k.exact) == (OFFLINE_ENCODING, False)  # approximated with cl100k
    assert token_counter("o3-mini").name == OFFLINE_ENCODING
    assert token_counter("qwen-max").name == "approximate"
    assert token_counter(ScriptedChatModel()).name == "approximate"
    assert token_counter(None).name == "approximate"


def test_counts_are_cached_per_message():
    message = ToolMessage(content="lorem ipsum dolor " * 200, tool_call_id="c1", name="search")
    counter = token_counter("gpt-4")
    first = counter.count_message(message)
    hits = tokens_module._message_tokens.cache_info().hits
    again = counter.count_message(message.model_copy())
    assert again == first
    assert tokens_module._message_tokens.cache_info().hits == hits + 1


def test_usage_metadata_is_preferred_for_what_it_covers():
    reply = AIMessage(
        content="",
        tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}],
        usage_metadata={"input_tokens": 1000, "output_tokens": 20, "total_tokens": 1020},
    )
    result = ToolMessage(content="hello world", tool_call_id="c1", name="search")
    history = [HumanMessage("a question " * 50), reply, result]
    counter = token_counter("gpt-4")
    assert count_tokens(history, model="gpt-4") == 1020 + counter.count_message(result) + 3
    local = count_tokens(history, model="gpt-4", use_usage_metadata=False)
    assert local == counter.count(history) and local < 1020


def test_tool_schemas_are_counted():
    messages = [HumanMessage("hi")]
    assert count_tokens(messages, "gpt-4", tools=[web_search]) > count_tokens(messages, "gpt-4")


def test_context_window_table():
    assert context_window("gpt-4o-mini-2024-07-18") == 128_000
    assert context_window("gpt-4") == 8_192
    assert context_window("gpt-4.1-mini") == CONTEXT_WINDOWS["gpt-4.1"]
    assert context_window(ScriptedChatModel(model_name="claude-3-5-sonnet")) == 200_000
    assert context_window("my-local-llama") == DEFAULT_CONTEXT_WINDOW
    assert context_window("gpt-4o", override=4_096) == 4_096
