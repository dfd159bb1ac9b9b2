"""A local OpenAI-compatible `/v1/chat/completions` server for tests (stdlib `http.server`).

Replies are deterministic and follow the request:

* a named `tool_choice` is called; otherwise, when tools are offered and no tool result came
  after the last user message, the **first** tool is called once; after a tool result,
  `tool_choice="required"` calls the **last** tool (a final-answer tool);
* else a text reply: a valid instance of the `response_format` JSON schema, or of a schema
  written in a system message after "JSON schema:", else an echo of the last user message
  (padded to `PAD_WORDS` words, cut to the token limit the behaviour reads, one token = one word).

Generated values: an `enum` picks the value named in the last user message (else the first),
strings named like a query carry the user's text, numbers are 1, arrays hold one item.

Behaviours (`OpenAIServer(behaviour=...)`, switchable while running):

* `openai_strict` — OpenAI's validation: unknown fields, unanswered tool calls, `null` content
  without tool calls, `json_object` without the word JSON, a malformed `json_schema` → 400.
* `no_json_schema` — `response_format` of type json_schema → 500 "Input should be 'text' or
  'json_object'" (llama-cpp-python's server).
* `no_null_content` — any message with `content: null` → 500 "Input should be a valid string".
* `repeat_tool_names` — streamed tool-call chunks all repeat the tool's name (llama.cpp).
* `ignore_max_completion_tokens` — only `max_tokens` limits the reply.
* `flaky_429` — 429 then 200: every other request (the first included) gets a 429.
* `drop_connection` — every other request (the first included) is dropped without a reply.

(Alternating, not keyed to the SDK's retry counter, so a retry by a `ModelRetry` hook — a new
SDK call — is answered too.)

Error modes for error tests: `auth_error` (401), `rate_limited` (429 always), `server_error`
(500 always), `unknown_model` (404), `slow` (sleeps `delay` seconds before answering),
`no_tools` (a request that offers tools → 400 naming them, as from models without tool calling),
`cut_reply` (the reply stops half-way and the connection closes, as when a server is stopped
mid-reply: a streamed one after its first token, in chunked encoding like real servers).

Reply faults (HTTP 200, but not a usable reply; `faults=N` gives the fault to the first N
requests only, then answers normally): `invalid_json` (a JSON body that does not parse),
`html_page` (an HTML page, as from a proxy), `empty_choices` (`choices: []`),
`no_finish_reason` (a stream that ends after half its tokens with `[DONE]` but no
`finish_reason`, as llama-cpp-python does when a parallel request arrives; a plain reply
has `finish_reason: null`), and, for tool calls, `empty_tool_ids` / `missing_tool_ids` /
`duplicate_tool_ids` (the first tool is called twice, the two calls' ids `""`, absent, or both
`call_0`).

`llamacpp` combines llama.cpp's quirks: `no_null_content`, `repeat_tool_names` and
`ignore_max_completion_tokens`.

`stop_after=N` takes the server down once it has answered N requests, as if it were stopped
mid-run (later requests get no reply, then the port is closed); `start()` brings it back.

429s and 5xx carry `retry-after-ms: 10` so the SDK's retries are quick (`retry_after=S` sends
`Retry-After: S` instead; `error_text=` replaces `server_error`'s message); `retry_after_ms=None`
leaves it out, and the SDK backs off on its own (0.5 s, then 1 s, less up to 25% jitter).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BEHAVIOURS = (
    "openai_strict",
    "no_json_schema",
    "no_null_content",
    "repeat_tool_names",
    "ignore_max_completion_tokens",
    "flaky_429",
    "drop_connection",
)
ERROR_MODES = (
    "auth_error",
    "rate_limited",
    "server_error",
    "unknown_model",
    "slow",
    "no_tools",
    "cut_reply",
)
REPLY_FAULTS = ("invalid_json", "html_page", "empty_choices", "no_finish_reason")
TOOL_ID_FAULTS = ("empty_tool_ids", "missing_tool_ids", "duplicate_tool_ids")
LLAMACPP_QUIRKS = ("no_null_content", "repeat_tool_names", "ignore_max_completion_tokens")
COMBINED = ("llamacpp",)
PAD_WORDS = 40

_OPENAI_FIELDS = {
    "model", "messages", "stream", "stream_options", "tools", "tool_choice",
    "parallel_tool_calls", "response_format", "temperature", "top_p", "n", "stop",
    "max_tokens", "max_completion_tokens", "presence_penalty", "frequency_penalty",
    "logit_bias", "logprobs", "top_logprobs", "seed", "user", "metadata", "store",
    "service_tier", "reasoning_effort", "modalities", "prediction", "audio",
    "web_search_options", "verbosity", "prompt_cache_key", "safety_identifier",
}  # fmt: skip
_QUERY_NAMES = {"query", "q", "request", "input", "text", "topic", "question", "product"}


@dataclass
class Received:
    """One HTTP request the server received."""

    body: dict[str, Any]
    retry: int
    """The openai SDK's `x-stainless-retry-count` (0 for a first attempt)."""
    headers: dict[str, str]
    outcome: str = "pending"
    """`answered`, `dropped` or the error status as text."""
    at: float = 0.0
    """`time.monotonic()` when the request arrived (the gaps show the client's backoff)."""

    @property
    def roles(self) -> list[str]:
        return [m.get("role", "?") for m in self.body.get("messages", [])]


class _Reject(Exception):
    def __init__(self, status: int, payload: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.payload = payload


def _error(message: str, *, kind: str = "invalid_request_error", param: str | None = None):
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


# -- JSON schema instances ---------------------------------------------------------------------


def instance(schema: dict[str, Any], root: dict[str, Any], hint: str, name: str = "") -> Any:
    """A valid instance of `schema` (refs resolved against `root`), steered by `hint`."""
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return instance(target, root, hint, name)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        lowered = hint.lower()
        named = [v for v in schema["enum"] if isinstance(v, str) and v.lower() in lowered]
        return named[0] if named else schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(options[0], root, hint, name)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: instance(v, root, hint, k) for k, v in props.items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [instance(schema.get("items") or {}, root, hint, name) for _ in range(count)]
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return float(max(1, schema.get("minimum", 1)))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "string" or kind is None:
        text = hint.strip()[:80] if name.lower() in _QUERY_NAMES and hint.strip() else name
        text = text or "value"
        return text.ljust(int(schema.get("minLength", 0)), "x")
    return None


def _prompt_schema(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    for message in messages:
        if message.get("role") not in ("system", "developer"):
            continue
        text = _text_of(message.get("content"))
        at = text.find("JSON schema:")
        if at < 0:
            continue
        start = text.find("{", at)
        try:
            value, _ = json.JSONDecoder().raw_decode(text[start:])
        except (ValueError, IndexError):
            continue
        if isinstance(value, dict):
            return value
    return None


# -- the server --------------------------------------------------------------------------------


class OpenAIServer:
    """The test server; `start()` binds a free port (kept across `stop()`/`start()`)."""

    def __init__(
        self,
        behaviour: str = "openai_strict",
        *,
        delay: float = 0.0,
        retry_after_ms: int | None = 10,
        stop_after: int | None = None,
        faults: int | None = None,
        retry_after: float | None = None,
        error_text: str | None = None,
    ) -> None:
        if behaviour not in (*BEHAVIOURS, *ERROR_MODES, *REPLY_FAULTS, *TOOL_ID_FAULTS, *COMBINED):
            raise ValueError(f"unknown behaviour {behaviour!r}")
        self.behaviour = behaviour
        self.delay = delay
        self.retry_after_ms = retry_after_ms
        self.stop_after = stop_after
        self.retry_after = retry_after
        """`Retry-After` seconds on 429s and 5xx (instead of `retry-after-ms`), if set."""
        self.error_text = error_text
        """The message of `server_error`'s 500 (default: OpenAI's)."""
        self.faults = faults
        """Reply faults go to this many requests, then replies are normal (None: to all)."""
        self._faulted = 0
        self._down = False
        self._stopper: threading.Thread | None = None
        self.requests: list[Received] = []
        self.port = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._ids = 0
        self._flaky = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def answered(self) -> list[Received]:
        """Requests that got a completion."""
        return [r for r in self.requests if r.outcome == "answered"]

    def start(self) -> OpenAIServer:
        if self._stopper is not None:  # going down after `stop_after`: let it finish first
            self._stopper.join(timeout=5)
            self._stopper = None
        self._down = False
        handler = type("Handler", (_Handler,), {"app": self})
        self._httpd = _QuietServer(("127.0.0.1", self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:  # `stop_after` may be stopping it from a thread of its own
            httpd, self._httpd = self._httpd, None
            thread, self._thread = self._thread, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def went_down(self) -> bool:
        """Whether `stop_after` has been reached (the server is going down)."""
        with self._lock:
            return self._down

    def count_answer(self) -> None:
        """After an answer: go down when `stop_after` answers have been given."""
        with self._lock:
            if self._down or self.stop_after is None or len(self.answered) < self.stop_after:
                return
            self._down = True
            self._stopper = stopper = threading.Thread(target=self.stop, daemon=True)
        stopper.start()

    def fails_now(self) -> bool:
        """For the alternating behaviours: whether this request is one that fails."""
        with self._lock:
            self._flaky += 1
            return self._flaky % 2 == 1

    def has(self, quirk: str) -> bool:
        """Whether the server behaves as `quirk` (itself, or part of `llamacpp`)."""
        return self.behaviour == quirk or (
            self.behaviour == "llamacpp" and quirk in LLAMACPP_QUIRKS
        )

    def faulty_now(self) -> bool:
        """For the reply faults: whether this request gets the fault (see `faults`)."""
        if self.behaviour not in REPLY_FAULTS:
            return False
        with self._lock:
            self._faulted += 1
            return self.faults is None or self._faulted <= self.faults

    # -- request handling ------------------------------------------------------------------------

    def validate(self, body: dict[str, Any]) -> None:
        messages = body.get("messages")
        if not isinstance(body.get("model"), str) or not isinstance(messages, list):
            raise _Reject(400, _error("'model' and 'messages' are required"))
        behaviour = self.behaviour
        fmt = body.get("response_format") or {}
        if behaviour == "no_json_schema" and fmt.get("type") not in (None, "text", "json_object"):
            raise _Reject(
                500,
                {
                    "detail": [
                        {
                            "type": "literal_error",
                            "loc": ["body", "response_format", "type"],
                            "msg": "Input should be 'text' or 'json_object'",
                            "input": fmt.get("type"),
                        }
                    ]
                },
            )
        if self.has("no_null_content"):
            for i, message in enumerate(messages):
                if message.get("content") is None:
                    raise _Reject(
                        500,
                        {
                            "detail": [
                                {
                                    "type": "string_type",
                                    "loc": ["body", "messages", i, "content"],
                                    "msg": "Input should be a valid string",
                                    "input": None,
                                }
                            ]
                        },
                    )
        if behaviour == "no_tools" and body.get("tools"):
            raise _Reject(
                400, _error("This model does not support tools (function calling).", param="tools")
            )
        if behaviour == "openai_strict":
            self._validate_strict(body, messages, fmt)

    def _validate_strict(
        self, body: dict[str, Any], messages: list[dict[str, Any]], fmt: dict[str, Any]
    ) -> None:
        unknown = sorted(set(body) - _OPENAI_FIELDS)
        if unknown:
            raise _Reject(400, _error(f"Unrecognized request argument supplied: {unknown[0]}"))
        pending: set[str] = set()
        for i, message in enumerate(messages):
            role, content = message.get("role"), message.get("content")
            if role == "tool":
                if message.get("tool_call_id") not in pending:
                    raise _Reject(
                        400,
                        _error(
                            "Invalid parameter: messages with role 'tool' must be a response to "
                            "a preceeding message with 'tool_calls'.",
                            param=f"messages.[{i}].role",
                        ),
                    )
                pending.discard(message["tool_call_id"])
                continue
            if pending:
                raise _Reject(
                    400,
                    _error(
                        "An assistant message with 'tool_calls' must be followed by tool "
                        "messages responding to each 'tool_call_id'. The following tool_call_ids "
                        f"did not have response messages: {', '.join(sorted(pending))}",
                        param="messages",
                    ),
                )
            calls = message.get("tool_calls") or []
            if content is None and not (role == "assistant" and calls):
                raise _Reject(
                    400,
                    _error(
                        "Invalid value for 'content': expected a string, got null.",
                        param=f"messages.[{i}].content",
                    ),
                )
            pending = {c["id"] for c in calls}
        if pending:
            raise _Reject(400, _error("tool_call_ids did not have response messages"))
        if fmt.get("type") == "json_object" and not any(
            "json" in _text_of(m.get("content")).lower() for m in messages
        ):
            raise _Reject(
                400,
                _error(
                    "'messages' must contain the word 'json' in some form, to use "
                    "'response_format' of type 'json_object'.",
                    param="messages",
                ),
            )
        if fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            if not spec.get("name") or not isinstance(spec.get("schema"), dict):
                raise _Reject(
                    400,
                    _error(
                        "Missing required parameter: 'response_format.json_schema.name'.",
                        param="response_format",
                    ),
                )
        if body.get("tool_choice") not in (None, "none", "auto") and not body.get("tools"):
            raise _Reject(
                400,
                _error(
                    "Invalid value for 'tool_choice': 'tool_choice' is only allowed when "
                    "'tools' are specified.",
                    param="tool_choice",
                ),
            )

    def _twin_calls(self, call: dict[str, Any]) -> list[dict[str, Any]]:
        """The call twice, with ids as the tool-id fault has them."""
        calls = [dict(call, function=dict(call["function"])) for _ in range(2)]
        for c in calls:
            if self.behaviour == "empty_tool_ids":
                c["id"] = ""
            elif self.behaviour == "missing_tool_ids":
                del c["id"]
            else:
                c["id"] = "call_0"
        return calls

    def limit(self, body: dict[str, Any]) -> int | None:
        if self.has("ignore_max_completion_tokens"):
            return body.get("max_tokens")
        return body.get("max_completion_tokens") or body.get("max_tokens")

    def compose(self, body: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]], str]:
        """(content, tool calls, finish reason) for a validated request."""
        messages = body["messages"]
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        last_user = users[-1] if users else -1
        hint = _text_of(messages[last_user].get("content")) if users else ""
        answered = any(m.get("role") == "tool" for m in messages[last_user + 1 :])
        tools = [t["function"] for t in body.get("tools") or [] if t.get("type") == "function"]
        choice = body.get("tool_choice")
        chosen: dict[str, Any] | None = None
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            chosen = next((t for t in tools if t["name"] == name), None)
        elif tools and choice != "none" and not answered:
            chosen = tools[0]
        elif tools and choice == "required":
            chosen = tools[-1]
        if chosen is not None:
            params = chosen.get("parameters") or {"type": "object", "properties": {}}
            args = instance(params, params, hint)
            call = {
                "id": f"call_{self.next_id()}",
                "type": "function",
                "function": {"name": chosen["name"], "arguments": json.dumps(args)},
            }
            if self.behaviour in TOOL_ID_FAULTS:
                return None, self._twin_calls(call), "tool_calls"
            return None, [call], "tool_calls"
        fmt = body.get("response_format") or {}
        schema = (
            (fmt.get("json_schema") or {}).get("schema")
            if fmt.get("type") == "json_schema"
            else None
        )
        schema = schema or _prompt_schema(messages)
        if schema is not None:
            return json.dumps(instance(schema, schema, hint)), [], "stop"
        words = f"{body['model']} answers: {hint}".split()
        words += [f"more{i}" for i in range(max(0, PAD_WORDS - len(words)))]
        limit = self.limit(body)
        if isinstance(limit, int) and len(words) > limit:
            return " ".join(words[:limit]), [], "length"
        return " ".join(words), [], "stop"


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that went away mid-reply (a timeout test) is expected: no traceback on stderr
        pass


class _Handler(BaseHTTPRequestHandler):
    app: OpenAIServer
    server_version = "graphflow-test-openai/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
        else:
            self._send(404, _error(f"no route {self.path}"))

    def do_POST(self) -> None:
        app = self.app
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, _error(f"no route {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, _error("We could not parse the JSON body of your request."))
            return
        received = Received(
            body=body,
            retry=int(self.headers.get("x-stainless-retry-count", 0)),
            headers={k.lower(): v for k, v in self.headers.items()},
            at=time.monotonic(),
        )
        app.requests.append(received)
        behaviour = app.behaviour
        flaky = behaviour in ("drop_connection", "flaky_429") and app.fails_now()
        if app.went_down() or (behaviour == "drop_connection" and flaky):
            received.outcome = "dropped"
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        quick_retry = (
            {} if app.retry_after_ms is None else {"retry-after-ms": str(app.retry_after_ms)}
        )
        if app.retry_after is not None:
            quick_retry = {"retry-after": f"{app.retry_after:g}"}
        if (behaviour == "flaky_429" and flaky) or behaviour == "rate_limited":
            received.outcome = "429"
            payload = _error("Rate limit reached for requests", kind="requests")
            self._send(429, payload, quick_retry)
            return
        if behaviour == "auth_error":
            received.outcome = "401"
            self._send(401, _error("Incorrect API key provided: sk-test****.", param=None))
            return
        if behaviour == "server_error":
            received.outcome = "500"
            self._send(
                500,
                _error(
                    app.error_text or "The server had an error while processing your request.",
                    kind="server_error",
                ),
                quick_retry,
            )
            return
        if behaviour == "unknown_model":
            received.outcome = "404"
            model = body.get("model")
            self._send(
                404,
                _error(
                    f"The model `{model}` does not exist or you do not have access to it.",
                    param="model",
                ),
            )
            return
        if behaviour == "slow":
            time.sleep(app.delay)
        try:
            app.validate(body)
        except _Reject as rejection:
            received.outcome = str(rejection.status)
            self._send(rejection.status, rejection.payload, quick_retry)
            return
        content, calls, finish = app.compose(body)
        if app.faulty_now():
            received.outcome = behaviour
            self._fault(body, content, calls, finish)
            return
        if behaviour == "cut_reply":
            received.outcome = "cut"
            self._cut(body, content)
            return
        received.outcome = "answered"
        if body.get("stream"):
            self._stream(body, content, calls, finish)
        else:
            self._send(200, _completion(body, content, calls, finish, app.next_id()))
        app.count_answer()

    def _raw(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _fault(
        self, body: dict[str, Any], content: str | None, calls: list[dict[str, Any]], finish: str
    ) -> None:
        """An HTTP 200 that is no usable reply (see the reply faults above)."""
        behaviour = self.app.behaviour
        streamed = bool(body.get("stream"))
        if behaviour == "invalid_json":
            if streamed:
                self._raw(200, "text/event-stream", b'data: {"id": "chatcmpl-x", oops\n\n')
            else:
                self._raw(200, "application/json", b'{"id": "chatcmpl-x", "choices": [oops')
        elif behaviour == "html_page":
            page = b"<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"
            self._raw(200, "text/html", page)
        elif behaviour == "empty_choices":
            reply = _completion(body, content, calls, finish, self.app.next_id())
            reply["choices"] = []
            if streamed:
                self._raw(200, "text/event-stream", f"data: {json.dumps(reply)}\n\n".encode())
            else:
                self._send(200, reply)
        elif streamed:  # no_finish_reason: half the tokens, then [DONE]
            words = re.findall(r"\S+\s*", content or "")
            self._stream(body, "".join(words[: max(1, len(words) // 2)]), [], None)
        else:
            reply = _completion(body, content, calls, finish, self.app.next_id())
            reply["choices"][0]["finish_reason"] = None
            self._send(200, reply)

    def _cut(self, body: dict[str, Any], content: str | None) -> None:
        """Half a reply, then the connection closes (written raw: http.server speaks HTTP/1.0)."""
        if body.get("stream"):
            token = (content or "").split(" ")[0] + " "
            event = {
                "id": "chatcmpl-cut",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "delta": {"content": token}, "finish_reason": None}],
            }
            data = f"data: {json.dumps(event)}\n\n".encode()
            head = b"Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            sent = f"{len(data):x}\r\n".encode() + data + b"\r\n"
        else:
            full = json.dumps(_completion(body, content, [], "stop", self.app.next_id())).encode()
            head = f"Content-Type: application/json\r\nContent-Length: {len(full)}\r\n".encode()
            sent = full[: len(full) // 2]
        self.wfile.write(b"HTTP/1.1 200 OK\r\n" + head + b"Connection: close\r\n\r\n" + sent)
        self.wfile.flush()
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _stream(
        self,
        body: dict[str, Any],
        content: str | None,
        calls: list[dict[str, Any]],
        finish: str | None,
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        cid = f"chatcmpl-{self.app.next_id()}"
        repeat = self.app.has("repeat_tool_names")

        def emit(
            delta: dict[str, Any] | None, reason: str | None = None, usage: Any = None
        ) -> None:
            chunk: dict[str, Any] = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body["model"],
                "choices": []
                if delta is None
                else [{"index": 0, "delta": delta, "finish_reason": reason}],
            }
            if usage is not None:
                chunk["usage"] = usage
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        emit({"role": "assistant", "content": ""})
        for token in re.findall(r"\S+\s*", content or ""):
            emit({"content": token})
        for index, call in enumerate(calls):
            name, args = call["function"]["name"], call["function"]["arguments"]
            first: dict[str, Any] = {
                "index": index,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            if "id" in call:
                first["id"] = call["id"]
            emit({"tool_calls": [first]})
            for start in range(0, len(args), 8):
                piece: dict[str, Any] = {
                    "index": index,
                    "function": {"arguments": args[start : start + 8]},
                }
                if repeat:
                    piece.update(id=call.get("id"), type="function")
                    piece["function"]["name"] = name
                emit({"tool_calls": [piece]})
        if finish is not None:
            emit({}, finish)
        if finish is not None and (body.get("stream_options") or {}).get("include_usage"):
            emit(None, usage=_usage(body, content, calls))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _usage(
    body: dict[str, Any], content: str | None, calls: list[dict[str, Any]]
) -> dict[str, int]:
    prompt = sum(len(_text_of(m.get("content")).split()) for m in body["messages"])
    completion = len((content or "").split()) + sum(
        len(c["function"]["arguments"]) // 4 for c in calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion(
    body: dict[str, Any], content: str | None, calls: list[dict[str, Any]], finish: str, n: int
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": _usage(body, content, calls),
    }


MODEL_KINDS = ("openai_model", "ChatOpenAI", "init_chat_model")
"""The model kinds a user may hold, each tried against the fake endpoint."""


def model_of_kind(kind: str, server: OpenAIServer, **kwargs: Any) -> Any:
    """A chat model of `kind` (one of `MODEL_KINDS`: graphflow's, LangChain's two) on `server`."""
    from langchain.chat_models import init_chat_model
    from langchain_openai import ChatOpenAI

    from graphflow.models import openai_model

    if kind == "openai_model":
        return openai_model("m", base_url=server.base_url, **kwargs)
    if kind == "ChatOpenAI":
        return ChatOpenAI(model="m", base_url=server.base_url, api_key="sk", **kwargs)  # type: ignore[arg-type]
    return init_chat_model("openai:m", base_url=server.base_url, api_key="sk", **kwargs)
