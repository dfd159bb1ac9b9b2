"""Replies that parse but do not fit (second adversarial round), through real HTTP on 127.0.0.1.

Before: a choice whose `message` is null failed with a raw `AttributeError`; tool-call arguments
that are JSON but no object (`[1, 2]`) with a raw pydantic `ValidationError`; a `\\ud800`
escape in a reply (a lone surrogate once decoded) was stored as `?` and made the next request
fail with a raw `UnicodeEncodeError` — none naming agent, model or endpoint.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from graphflow import ReactAgent
from graphflow import events as ev
from graphflow.exceptions import ModelServerError
from graphflow.models import chat_openai, openai_model


class OddServer:
    """Answers each request with the next scripted message (then plain text), as JSON or SSE."""

    def __init__(self) -> None:
        self.script: list[Any] = []
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                message = server.script.pop(0) if server.script else {"content": "fine"}
                if message is not None:
                    message = {"role": "assistant", "content": None, **message}
                finish = "tool_calls" if message and message.get("tool_calls") else "stop"
                if body.get("stream"):
                    self._stream(message, finish)
                    return
                data = json.dumps(
                    {
                        "id": "c",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "m",
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    }
                )
                self._send("application/json", _raw_escapes(data))

            def _stream(self, message: dict[str, Any], finish: str) -> None:
                def chunk(delta: dict[str, Any], reason: str | None = None) -> str:
                    choice = {"index": 0, "delta": delta, "finish_reason": reason}
                    data = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
                    return f"data: {json.dumps({**data, 'created': 0, 'choices': [choice]})}\n\n"

                text = message.get("content") or ""
                parts = [chunk({"role": "assistant", "content": ""})]
                parts += [chunk({"content": word}) for word in re.findall(r"\S+\s*", text)]
                for index, call in enumerate(message.get("tool_calls") or ()):
                    parts.append(chunk({"tool_calls": [{**call, "index": index}]}))
                parts += [chunk({}, finish), "data: [DONE]\n\n"]
                self._send("text/event-stream", _raw_escapes("".join(parts)))

            def _send(self, kind: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_port}/v1"


def _raw_escapes(data: str) -> bytes:
    # the script writes `<ud800>`: sent as the JSON escape \ud800 (json.dumps would double it)
    return data.replace("<ud800>", "\\ud800").replace("<udcff>", "\\udcff").encode()


@pytest.fixture
def server() -> Iterator[OddServer]:
    running = OddServer()
    yield running
    running.httpd.shutdown()
    running.httpd.server_close()


@pytest.fixture(autouse=True)
def _quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chat_openai, "reply_backoff", lambda attempt: 0.0)


ran: list[str] = []


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    ran.append(city)
    return f"sunny in {city}"


def _agent(server: OddServer, **kwargs: Any) -> ReactAgent:
    model = openai_model("m", base_url=server.base_url, api_key="sk", **kwargs)
    return ReactAgent(name="writer", model=model, tools=[get_weather], output_key="out")


def test_a_choice_without_a_message_is_a_model_server_error_after_retries(server) -> None:
    server.script = [None, None, None]
    with pytest.raises(ModelServerError, match=r"a choice of the reply had no message") as caught:
        _agent(server).invoke("hi")
    assert caught.value.agent == "writer" and caught.value.base_url == server.base_url
    assert len(server.requests) == 3  # retried like a server error


def test_arguments_that_are_json_but_no_object_are_an_invalid_call_the_model_is_told(
    server,
) -> None:
    ran.clear()
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "[1]"}}
    server.script = [{"tool_calls": [call]}]
    assert _agent(server).invoke("hi")["out"] == "fine"
    assert ran == []  # the call never ran with arguments it cannot take
    (answer,) = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert answer["tool_call_id"] == "c1"
    assert "must be a JSON object, got a list" in answer["content"]


@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
def test_a_lone_surrogate_escape_in_a_reply_becomes_a_replacement_character(
    server, tmp_path: Path, streamed: bool
) -> None:
    ran.clear()
    args = '{"city": "R<udcff>me"}'
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": args}}
    server.script = [{"tool_calls": [call]}, {"content": "bad <ud800> text"}]
    agent = _agent(server)
    url = f"sqlite:///{tmp_path}/runs.db"
    if streamed:
        events = list(agent.stream("hi", thread_id="t", checkpointer=url, events=True))
        tokens = "".join(e.text for e in events if isinstance(e, ev.ModelToken))
        assert "\ud800" not in tokens and "\ufffd" in tokens
        out = agent.get_state("t", checkpointer=url).values["out"]
    else:
        out = agent.invoke("hi", thread_id="t", checkpointer=url)["out"]
    assert out == "bad \ufffd text"
    assert ran == ["R\ufffdme"]
    # the next request carried the tool call back (it failed to encode before)
    (sent,) = [m for m in server.requests[-1]["messages"] if m.get("tool_calls")]
    assert json.loads(sent["tool_calls"][0]["function"]["arguments"]) == {"city": "R\ufffdme"}
    stored = agent.get_state("t", checkpointer=url).values["messages"]
    assert stored[-1].content == "bad \ufffd text"  # read back as the run saw it, not with '?'
