"""What one agent invocation did, for the run page's agent panel.

From the checkpoints (a stored invocation, see `_timeline`): its instruction as rendered (the
instruction message the agent put in its own conversation, placeholders filled from the state
of that moment), the conversation it was handed and its own messages, its answer, its tool calls
with arguments, results and typed errors (`graphflow.tools.result`), what it wrote to which key
(its task's writes in its parent), and what its context policy masked or summarised
(`gf_context`: the last call's record and the counters).

From the typed events (an invocation going on in this server): its model calls with their
streamed text, its tool calls as they start and finish, the context events of its calls and
what it wrote when it finished.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from graphflow.instructions import render_template
from graphflow.messages import MASK_MARK, SUMMARY_MARK, instruction_agent
from graphflow.state import AGENT_STATUS, CONTEXT, MESSAGES
from graphflow.tools.result import tool_result
from graphflow.ui._jsonable import jsonable, public_values
from graphflow.ui._timeline import Invocation

if TYPE_CHECKING:
    from graphflow.runtime.compiled import CompiledAgent

__all__ = ("events_detail", "stored_detail")


def _config(thread_id: str, ns: str) -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}


def stored_detail(compiled: CompiledAgent, thread_id: str, item: Invocation) -> dict[str, Any]:
    """What the stored invocation `item` did, read from its checkpoints."""
    graph = compiled.graph
    out: dict[str, Any] = {"invocation": item.as_dict(), "source": "store"}
    member = next((a for a in compiled.agent.walk() if a.name == item.agent), None)
    out["description"] = getattr(member, "description", "") or ""
    own = list(graph.get_state_history(_config(thread_id, item.id), limit=1))
    has_graph = bool(own) and own[0].created_at is not None
    values: Mapping[str, Any] = (own[0].values or {}) if has_graph else {}
    handed = _handed_ids(graph, thread_id, item.id) if has_graph else set()
    messages = list(values.get(MESSAGES) or [])
    out["instruction"] = next(
        (_text(m) for m in messages if instruction_agent(m) == item.agent), None
    )
    if not has_graph and member is not None:
        # it ran in its parent's node (a tool-less leaf's one call): no conversation of its own
        # is stored; its instruction is rendered from the state its task started from, and its
        # answer is the reply it handed back to its parent
        seen, handed_back = _inline_task(graph, thread_id, item)
        if getattr(member, "instruction", None) and seen is not None:
            try:
                out["instruction"] = render_template(member.template, seen, agent=member.name)
            except KeyError:
                pass
        messages = handed_back
    out["messages"] = [_message(m, handed) for m in messages]
    answer = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    out["answer"] = None if answer is None or (answer.id or "") in handed else _text(answer)
    out["tool_calls"] = _tool_calls([m for m in messages if (m.id or "") not in handed])
    out["context"] = _context(values.get(CONTEXT))
    out["writes"] = _writes(graph, thread_id, item, values)
    return out


def _inline_task(
    graph: Any, thread_id: str, item: Invocation
) -> tuple[Mapping[str, Any] | None, list[BaseMessage]]:
    """(the parent's state the task started from, the messages the task wrote to its parent)."""
    if item.parent is None or item.task_id is None:
        return None, []
    # (the whole list first: the saver holds its lock while a listing is read)
    for tup in list(graph.checkpointer.list(_config(thread_id, item.parent))):
        writes = [(c, v) for task_id, c, v in tup.pending_writes or () if task_id == item.task_id]
        if not writes:
            continue
        handed_back = [
            m
            for channel, value in writes
            if channel == MESSAGES
            for m in (value if isinstance(value, list) else [value])
            if isinstance(m, BaseMessage)
        ]
        return graph.get_state(tup.config).values, handed_back
    return None, []


def _handed_ids(graph: Any, thread_id: str, ns: str) -> set[str]:
    """Ids of the messages the invocation was started with (its input checkpoint's writes)."""
    saver = graph.checkpointer
    first = None
    for tup in saver.list(_config(thread_id, ns)):
        if (tup.metadata or {}).get("source") == "input":
            first = tup
    ids: set[str] = set()
    for _task, channel, value in (first.pending_writes or ()) if first is not None else ():
        if channel == MESSAGES:
            for message in value if isinstance(value, list) else [value]:
                if instruction_agent(message) is None and getattr(message, "id", None):
                    ids.add(str(message.id))
    return ids


def _writes(
    graph: Any, thread_id: str, item: Invocation, values: Mapping[str, Any]
) -> dict[str, Any]:
    """The public keys the invocation's task wrote in its parent's state (root: its result).

    The conversation and the agents' statuses are shown apart (messages, status), not here.
    """
    shown_apart = (MESSAGES, AGENT_STATUS)
    if item.parent is None or item.task_id is None:
        return public_values({k: v for k, v in values.items() if k not in shown_apart})
    written: dict[str, Any] = {}
    for tup in graph.checkpointer.list(_config(thread_id, item.parent)):
        for task_id, channel, value in tup.pending_writes or ():
            if task_id == item.task_id and channel not in shown_apart:
                written[str(channel)] = value  # (a task's writes are saved with one checkpoint)
    # LangGraph's own channels (`__error__`, `branch:to:x`, `join:a+b:x`) are not state keys
    return public_values(
        {k: v for k, v in written.items() if not k.startswith("__") and ":" not in k}
    )


def _text(message: BaseMessage) -> str:
    return message.text if hasattr(message, "text") else str(message.content)


def _message(message: BaseMessage, handed: set[str]) -> dict[str, Any]:
    data = jsonable(message)
    extra = message.additional_kwargs or {}
    if instruction_agent(message) is not None:
        data["role"] = "instruction"
    elif (message.id or "") in handed:
        data["role"] = "handed"
    else:
        data["role"] = "own"
    if MASK_MARK in extra:
        data["masked"] = str(extra[MASK_MARK])
    if SUMMARY_MARK in extra:
        data["summary"] = extra[SUMMARY_MARK]
    return data


def _tool_calls(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Each call the agent's model asked for, with what the tool answered."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    calls = []
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls or ():
            reply = results.get(str(call.get("id")))
            entry: dict[str, Any] = {
                "id": call.get("id"),
                "name": call.get("name"),
                "args": jsonable(call.get("args")),
                "result": None,
                "status": "pending" if reply is None else (reply.status or "success"),
                "error_type": None,
                "error": None,
            }
            if reply is not None:
                typed = tool_result(reply)
                if typed is not None and not typed.success:
                    entry["error_type"] = str(typed.error_type) if typed.error_type else None
                    entry["error"] = typed.error_message
                    entry["status"] = "error"
                elif reply.status == "error":
                    entry["error"] = _text(reply)
                else:
                    entry["result"] = jsonable(reply.content)
            calls.append(entry)
    return calls


def _context(record: Any) -> dict[str, Any] | None:
    """What the agent's context policy did (its `gf_context` record), or None without one."""
    if not isinstance(record, Mapping) or not record:
        return None
    summary = record.get("summary")
    return {
        "stats": jsonable(record.get("stats") or {}),
        "last_call": jsonable(record.get("last_call")),
        "summary": None
        if not isinstance(summary, Mapping)
        else {"rounds": summary.get("rounds"), "text": summary.get("text")},
    }


# -- from events ---------------------------------------------------------------------------------


def events_detail(
    events: Sequence[Mapping[str, Any]], item: Invocation, stored: dict[str, Any] | None
) -> dict[str, Any]:
    """What the invocation `item` (read from `events`) did so far, from its events.

    `stored` is the detail of the same invocation read from the checkpoints written so far
    (its instruction and conversation), or None.
    """
    key = (item.path, item.branch, item.iteration)
    start = int(item.id.removeprefix("ev-"))
    models: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] = {}
    context: list[Any] = []
    writes: dict[str, Any] = {}
    for event in events:
        if int(event.get("seq", -1)) <= start:
            continue
        if (list(event.get("agent_path") or ()), event.get("branch"), event.get("iteration")) != (
            key
        ):
            continue
        kind = event.get("type")
        if kind == "AgentStarted":
            break  # a later invocation of the same agent
        if kind == "ModelStarted":
            models.append({"text": "", "done": False, "message": None})
        elif kind == "ModelToken" and models:
            models[-1]["text"] += str(event.get("text") or "")
        elif kind == "ModelFinished":
            if not models:
                models.append({"text": "", "done": False, "message": None})
            models[-1]["done"] = True
            models[-1]["message"] = _event_message(event.get("message"))
        elif kind == "ToolCallStarted":
            tools[str(event.get("call_id"))] = {
                "id": event.get("call_id"),
                "name": event.get("name"),
                "args": event.get("args"),
                "result": None,
                "status": "running",
                "error_type": None,
                "error": None,
            }
        elif kind == "ToolCallFinished":
            entry = tools.setdefault(
                str(event.get("call_id")), {"id": event.get("call_id"), "name": event.get("name")}
            )
            entry["result"] = event.get("result")
            entry["error"] = event.get("error")
            entry["status"] = "error" if event.get("error") else "success"
        elif kind == "CustomEvent":
            data = event.get("data")
            if isinstance(data, Mapping) and "graphflow_context" in data:
                context.append(data["graphflow_context"])
        elif kind in ("AgentFinished", "AgentFailed"):
            if event.get("output_key"):
                writes[str(event["output_key"])] = event.get("value")
            break
    out: dict[str, Any] = dict(stored or {})
    out.update(
        {
            "invocation": item.as_dict(),
            "source": "events",
            "model_calls": models,
            "tool_calls": list(tools.values()),
            "context_events": context,
        }
    )
    out.setdefault("instruction", None)
    out.setdefault("messages", [])
    out["writes"] = writes or out.get("writes") or {}
    answer = next((m for m in reversed(models) if m["done"]), None)
    out["answer"] = (answer["message"] or {}).get("content") if answer else out.get("answer")
    return out


def _event_message(data: Any) -> dict[str, Any] | None:
    """An event's `{"$message": ...}` as the page shows messages."""
    if not isinstance(data, Mapping) or "$message" not in data:
        return None
    raw = data["$message"].get("data", {}) if isinstance(data["$message"], Mapping) else {}
    calls = [{"name": c.get("name"), "args": c.get("args")} for c in raw.get("tool_calls") or ()]
    return {"type": raw.get("type"), "content": raw.get("content"), "tool_calls": calls}
