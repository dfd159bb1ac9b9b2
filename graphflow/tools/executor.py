"""Run one tool call under its `ToolPolicy`: timeout, retries by error type, typed error results.

The whole interface is `run_tool_call(...)` and its async twin `arun_tool_call(...)`: one call
in, one `ToolMessage` out (or a raised `ToolError` when the failure ends the run).

* **Timeout.** A sync tool runs in a daemon worker thread; when its time is up the thread is
  abandoned — Python cannot kill a thread, so it runs on until the tool returns, but the run
  does not wait for it and the process can still exit. An async tool is cancelled (under sync
  `invoke` an async-only tool runs in the worker thread's own event loop, also cancelled); one
  that takes more than `_GRACE` (1 s) to honour the cancel is abandoned the same way. An async
  tool that blocks its event loop (`time.sleep` in an `async def`) cannot be timed out under
  `ainvoke` — nothing else runs on that loop until it returns.
* **Retries.** A failure whose recovery is `"retry"` (TIMEOUT by default) is tried again up to
  `max_retries` times, waiting `backoff`, `2 * backoff`, ... seconds in between.
* **Approval.** A failure whose recovery is `"approval"` is first recorded as an error
  `ToolMessage` that waits for a human; the agent then runs the call again as its own step,
  which pauses with `interrupt` *before* touching the tool (so nothing runs twice on resume).
  The answer, parsed like `HumanApproval`'s: `retry` (optionally with edited `args`), `skip`
  with a `message` for the model, or `abort` (the run stops with `ToolError`).
* A tool whose sync path only waits for its async one (`bridges_to_async = True`, as MCP tools)
  runs as a coroutine under both APIs, so a timeout cancels it instead of abandoning a thread.
* `sys.exit()` inside a tool is a tool failure (`UNKNOWN`), never the end of the process.
* **Storable results.** A tool's own `ToolMessage` whose artifact (or extra fields) a checkpoint
  could not store — a client, a class nobody allowed — becomes an error result that says so,
  with the artifact dropped: the side effect happened once and the thread goes on (refusing the
  write would fail the step, and every resume would run the tool again).
* **Lease.** Before each attempt the run's lease is checked (`graphflow.checkpoint.leases`): a
  run that lost its thread to another (paused past its heartbeat) raises `LeaseLostError`
  instead of starting the tool — the run that took over runs it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphBubbleUp
from langgraph.types import interrupt

from graphflow._internal.approval import ABORT, EDIT, FAILED_CALL_DECISIONS, REJECT
from graphflow._internal.workers import await_with_timeout, call_in_worker, submit
from graphflow.checkpoint.leases import MemoryLeases, fence_of
from graphflow.checkpoint.serde import allowlist_of, stored_form, unstorable
from graphflow.exceptions import ToolError, ToolExitError, ToolTimeoutError
from graphflow.tools.approval import APPROVAL_REQUEST, parse_decision
from graphflow.tools.batches import AWAITING_APPROVAL, awaiting_approval
from graphflow.tools.errors import ToolErrorType, classify_exception, default_hint
from graphflow.tools.policy import Recovery, ToolPolicy
from graphflow.tools.result import RESULT_KEY, ToolResult, error_content, tool_result
from graphflow.tools.serialize import serialize_result, truncate

__all__ = ("arun_tool_call", "run_tool_call")

logger = logging.getLogger("graphflow.tools")


def run_tool_call(
    tool: BaseTool | None,
    call: dict[str, Any],
    policy: ToolPolicy,
    config: RunnableConfig,
    *,
    agent: str,
    available: Sequence[str],
    history: Mapping[str, Any] | None = None,
) -> ToolMessage:
    """Run `call` with `tool` under `policy` and return its `ToolMessage`.

    Args:
        tool: the tool, or None when the model named a tool that does not exist.
        call: the tool call (`name`, `args`, `id`).
        policy: how to run it.
        config: the run config handed to the tool.
        agent: name of the calling agent (for messages).
        available: the agent's tool names (named when `tool` is None).
        history: `call_history(...)` of the call: its earlier result waiting for a human,
            the tool's INVALID_PARAM streak.

    Raises:
        ToolError: the failure ends the run (UNKNOWN, too many INVALID_PARAM, an abort).
    """
    run = _Call(tool=tool, call=call, policy=policy, config=config, agent=agent, history=history)
    answered = run.before(available)
    if answered is not None:
        return answered
    assert tool is not None
    attempt = 0
    while True:
        attempt += 1
        _check_lease(config, run.name)
        try:
            return run.success(_invoke(tool, run.call, config, policy), attempt)
        except GraphBubbleUp:
            raise
        except (Exception, SystemExit) as exc:
            outcome = run.after_failure(exc, attempt)
            if isinstance(outcome, ToolMessage):
                return outcome
            time.sleep(outcome)


async def arun_tool_call(
    tool: BaseTool | None,
    call: dict[str, Any],
    policy: ToolPolicy,
    config: RunnableConfig,
    *,
    agent: str,
    available: Sequence[str],
    history: Mapping[str, Any] | None = None,
) -> ToolMessage:
    """Async twin of `run_tool_call`."""
    run = _Call(tool=tool, call=call, policy=policy, config=config, agent=agent, history=history)
    answered = run.before(available)
    if answered is not None:
        return answered
    assert tool is not None
    attempt = 0
    while True:
        attempt += 1
        await _acheck_lease(config, run.name)
        try:
            return run.success(await _ainvoke(tool, run.call, config, policy), attempt)
        except GraphBubbleUp:
            raise
        except (Exception, SystemExit) as exc:
            outcome = run.after_failure(exc, attempt)
            if isinstance(outcome, ToolMessage):
                return outcome
            await asyncio.sleep(outcome)


def _check_lease(config: RunnableConfig, tool: str) -> None:
    """`LeaseLostError` if the run no longer holds its thread (before the tool starts)."""
    fence = fence_of(config)
    if fence is not None:
        fence.check(f"starting tool `{tool}`")


async def _acheck_lease(config: RunnableConfig, tool: str) -> None:
    fence = fence_of(config)
    if fence is None:
        return
    if isinstance(fence.store, MemoryLeases):  # a dict behind a lock: no thread hop
        fence.check(f"starting tool `{tool}`")
    else:
        await asyncio.to_thread(fence.check, f"starting tool `{tool}`")


# -- one call ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Failure:
    error_type: ToolErrorType
    message: str
    hint: str
    recovery: Recovery
    attempts: int
    cause: BaseException | None = None


@dataclass(kw_only=True)
class _Call:
    tool: BaseTool | None
    call: dict[str, Any]
    policy: ToolPolicy
    config: RunnableConfig
    agent: str
    history: Mapping[str, Any] | None
    message_id: str | None = None
    """Set when this run answers a call that waited for a human: its message is replaced."""

    @property
    def name(self) -> str:
        return str(self.call["name"])

    def delay(self, attempt: int) -> float:
        return float(self.policy.backoff * (2 ** (attempt - 1)))

    def message(self, content: Any, result: ToolResult, **extra: Any) -> ToolMessage:
        kwargs: dict[str, Any] = {RESULT_KEY: result.as_dict(), **extra}
        fields: dict[str, Any] = {}
        if self.message_id is not None:
            fields["id"] = self.message_id
        return ToolMessage(
            content=content,
            tool_call_id=self.call["id"],
            name=self.name,
            status="success" if result.success else "error",
            additional_kwargs=kwargs,
            **fields,
        )

    # -- the steps both twins share

    def before(self, available: Sequence[str]) -> ToolMessage | None:
        """The call's message when it is settled before the tool runs, else None (run it).

        An unknown tool name is an INVALID_PARAM result; a call whose earlier failure waits for
        a human pauses here, and a "skip" answers it (an "abort" raises `ToolError`).
        """
        if self.tool is None:
            return self.conclude(self.unknown_tool(available))
        pending = self.pending_approval()
        return None if pending is None else self.ask(pending)

    def after_failure(self, exc: BaseException, attempt: int) -> ToolMessage | float:
        """After attempt `attempt` raised `exc`: seconds to wait before a retry, or the result."""
        failure = self.failure(exc, attempt)
        if failure.recovery == "retry" and attempt <= self.policy.max_retries:
            return self.delay(attempt)
        return self.conclude(failure)

    # -- outcomes

    def success(self, output: Any, attempts: int) -> ToolMessage:
        limit = self.policy.max_result_chars
        result = ToolResult(success=True, attempts=attempts)
        if isinstance(output, ToolMessage):
            content = serialize_result(output.content, max_chars=limit)  # blocks too
            ok = output.status != "error"
            update: dict[str, Any] = {
                "content": content,
                "tool_call_id": self.call["id"],
                "name": output.name or self.name,
                "additional_kwargs": {
                    **output.additional_kwargs,
                    RESULT_KEY: ToolResult(success=ok, attempts=attempts).as_dict(),
                },
            }
            if self.message_id is not None:
                update["id"] = self.message_id
            found = self.unstorable_part(output)
            if found is not None:
                return self.unstorable_result(content, found, attempts)
            return output.model_copy(update=update)
        return self.message(serialize_result(output, max_chars=limit), result)

    def unstorable_part(self, output: ToolMessage) -> str | None:
        """What in the tool's own message a checkpoint could not store (None: all of it can)."""
        allowed = allowlist_of(self.config)
        if allowed is None:
            return None
        found = None
        if output.artifact is not None:
            found = unstorable(stored_form(output.artifact), allowed, path="artifact")
        extra = stored_form(output.additional_kwargs)
        return found or unstorable(extra, allowed, path="additional_kwargs")

    def unstorable_result(self, content: Any, found: str, attempts: int) -> ToolMessage:
        message = (
            f"the tool ran, but its result holds {found}, which a checkpoint cannot store; that "
            "part was dropped"
        )
        hint = (
            "use the text result below; do not call the tool again to get the dropped part (to "
            "keep it, the application allows its class with graphflow.allow_types(TheClass))"
        )
        logger.warning("agent %s: tool %s: %s", self.agent, self.name, message)
        text = error_content(ToolErrorType.UNKNOWN, self.name, message, hint)
        result = ToolResult(
            success=False,
            error_type=ToolErrorType.UNKNOWN,
            error_message=message,
            attempts=attempts,
        )
        return self.message(f"{text}\nResult: {_text(content)}", result)

    def failure(self, exc: BaseException, attempts: int) -> _Failure:
        error_type = classify_exception(exc)
        hint = getattr(exc, "hint", None) or default_hint(error_type)
        if isinstance(exc, SystemExit):
            text = f"the tool called sys.exit({exc.code!r})"
        elif isinstance(exc, ToolError):
            text = str(exc)
        else:
            text = f"{type(exc).__name__}: {_clean(str(exc))}"
        logger.debug("tool %s failed (%s, attempt %d): %s", self.name, error_type, attempts, text)
        return _Failure(
            error_type=error_type,
            message=text,
            hint=hint,
            recovery=self.policy.recovery_for(error_type),
            attempts=attempts,
            cause=exc,
        )

    def unknown_tool(self, available: Sequence[str]) -> _Failure:
        names = ", ".join(sorted(available)) or "none"
        return _Failure(
            error_type=ToolErrorType.INVALID_PARAM,
            message=f"there is no tool named {self.name!r}; available tools: {names}",
            hint="call one of the available tools by its exact name",
            recovery="return",
            attempts=0,
        )

    def conclude(self, failure: _Failure) -> ToolMessage:
        """Hand the failure to the model, to a human, or end the run — per its recovery."""
        recovery = failure.recovery
        if recovery == "raise":
            raise self.fatal(failure, "failed with an error the model cannot fix")
        if failure.error_type == ToolErrorType.INVALID_PARAM:
            streak = int((self.history or {}).get("invalid_streak") or 0) + 1
            if streak > self.policy.max_invalid_params:
                what = (
                    "does not exist and was asked for"
                    if self.tool is None
                    else "was called with invalid arguments"
                )
                raise self.fatal(
                    failure,
                    f"{what} {streak} times in a row "
                    f"(max_invalid_params={self.policy.max_invalid_params})",
                )
        result = ToolResult(
            success=False,
            error_type=failure.error_type,
            error_message=failure.message,
            attempts=failure.attempts,
        )
        # an error is a result too: its message is bounded like one, the hint is kept
        message = truncate(failure.message, self.policy.max_result_chars)
        content = error_content(failure.error_type, self.name, message, failure.hint)
        if recovery == "approval":
            if self.message_id is None:
                self.message_id = f"gf-approval-{self.call['id']}"
            return self.message(
                content,
                result,
                **{AWAITING_APPROVAL: True, "graphflow_tool_error_hint": failure.hint},
            )
        if failure.attempts > 1:
            content += f"\n(tried {failure.attempts} times)"
        return self.message(content, result)

    def fatal(self, failure: _Failure, what: str) -> ToolError:
        logger.error("agent %s: tool %s %s: %s", self.agent, self.name, what, failure.message)
        error = ToolError(
            f"Agent `{self.agent}`: tool `{self.name}` {what} ({failure.error_type}): "
            f"{failure.message}. The run stopped with its checkpoints kept; fix the cause, then "
            "`agent.resume(thread_id)` re-runs this call.",
            agent=self.agent,
            tool=self.name,
            tool_call_id=self.call.get("id"),
            hint=failure.hint,
            error_type=str(failure.error_type),
        )
        error.__cause__ = failure.cause
        return error

    # -- approval

    def pending_approval(self) -> ToolMessage | None:
        pending = (self.history or {}).get("awaiting")
        return pending if awaiting_approval(pending) else None

    def ask(self, pending: ToolMessage) -> ToolMessage | None:
        """Pause for a human; a `ToolMessage` for skip, None to retry, `ToolError` for abort."""
        self.message_id = pending.id
        stored = tool_result(pending)
        error_type = (stored.error_type if stored else None) or ToolErrorType.UNKNOWN
        error = (stored.error_message if stored else None) or str(pending.content)
        hint = str(pending.additional_kwargs.get("graphflow_tool_error_hint") or "")
        decision, payload = parse_decision(
            interrupt(
                {
                    "type": APPROVAL_REQUEST,
                    "agent": self.agent,
                    "tool": self.name,
                    "args": dict(self.call.get("args") or {}),
                    "tool_call_id": self.call.get("id"),
                    "description": (
                        f"The call failed with {error_type}: {error}. Answer 'retry' (optionally "
                        "with new 'args'), 'skip' with a 'message' for the model, or 'abort'."
                    ),
                    "error": {"type": str(error_type), "message": error, "hint": hint},
                    "decisions": list(FAILED_CALL_DECISIONS),
                }
            )
        )
        if decision == ABORT:
            because = f": {payload}" if payload else ""
            raise self.fatal(
                _Failure(
                    error_type=error_type,
                    message=error,
                    hint=hint,
                    recovery="raise",
                    attempts=stored.attempts if stored else 1,
                ),
                f"failed and a human reviewer aborted the run{because}",
            )
        if decision == REJECT:
            note = payload or "no message given"
            result = ToolResult(
                success=False,
                error_type=error_type,
                error_message=error,
                attempts=stored.attempts if stored else 1,
            )
            content = (
                f"Error [{error_type}] in tool `{self.name}`: {error}\n"
                f"A human reviewer skipped this call: {note}"
            )
            return self.message(content, result)
        if decision == EDIT:
            self.call = {**self.call, "args": payload}
        return None


# -- invoking the tool -------------------------------------------------------------------------


def _invoke(
    tool: BaseTool, call: dict[str, Any], config: RunnableConfig, policy: ToolPolicy
) -> Any:
    timeout = policy.timeout
    if _has_sync(tool) and not (getattr(tool, "bridges_to_async", False) and _has_async(tool)):
        if timeout is None:
            return _call_sync(tool, call, config)
        return call_in_worker(
            _exits(_call_sync, tool, call, config), timeout, _timed_out(tool, timeout)
        )
    # an async-only tool under sync invoke: its own event loop in a worker thread, which cancels
    # it at `timeout`; the thread waits out the grace on top
    limit = None if timeout is None else timeout + _GRACE
    return call_in_worker(
        lambda: asyncio.run(_ainvoke(tool, call, config, policy)), limit, _timed_out(tool, timeout)
    )


async def _ainvoke(
    tool: BaseTool, call: dict[str, Any], config: RunnableConfig, policy: ToolPolicy
) -> Any:
    timeout = policy.timeout
    if _has_async(tool) or not _has_sync(tool):
        running: Any = _call_async(tool, call, config)
    else:
        running = asyncio.wrap_future(submit(_exits(_call_sync, tool, call, config)))
    return await await_with_timeout(running, timeout, _timed_out(tool, timeout), grace=_GRACE)


_GRACE = 1.0
"""Seconds a timed-out async tool gets to honour its cancellation before it is abandoned."""


def _exits(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """`fn(*args)` for a worker: `sys.exit` in the tool becomes a tool failure."""

    def work() -> Any:
        try:
            return fn(*args)
        except SystemExit as exc:  # must end neither the worker quietly nor an event loop
            raise ToolExitError(exc.code) from None

    return work


def _timed_out(tool: BaseTool, timeout: float | None) -> Callable[[], ToolTimeoutError]:
    return lambda: ToolTimeoutError(f"no answer within {timeout:g} s", tool=tool.name)


def _call_sync(tool: BaseTool, call: dict[str, Any], config: RunnableConfig) -> Any:
    return tool.invoke(_tool_input(tool, call), config)


async def _call_async(tool: BaseTool, call: dict[str, Any], config: RunnableConfig) -> Any:
    try:
        return await tool.ainvoke(_tool_input(tool, call), config)
    except SystemExit as exc:  # asyncio would let it out of the event loop
        raise ToolExitError(exc.code) from None


def _tool_input(tool: BaseTool, call: dict[str, Any]) -> Any:
    # the raw return value is serialized here (predictably); LangChain's ToolMessage wrapping
    # would str() a pydantic model. Tools that need the call itself (an artifact, an injected
    # tool-call id) get it and return their own ToolMessage.
    injected: frozenset[str] = getattr(tool, "_injected_args_keys", frozenset())
    if tool.response_format == "content_and_artifact" or injected:
        return {**call, "type": "tool_call"}
    return dict(call.get("args") or {})


def _has_sync(tool: BaseTool) -> bool:
    if isinstance(tool, StructuredTool):
        return tool.func is not None
    return True


def _has_async(tool: BaseTool) -> bool:
    if isinstance(tool, StructuredTool):
        return tool.coroutine is not None
    return type(tool)._arun is not BaseTool._arun


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(str(b.get("text", b)) if isinstance(b, dict) else str(b) for b in blocks)


def _clean(text: str) -> str:
    # pydantic appends documentation links that only cost the model tokens
    return "\n".join(
        line for line in text.splitlines() if "For further information visit" not in line
    )
