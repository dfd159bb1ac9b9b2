"""What the side panel and the labels say about an agent: its kind and settings, JSON-able."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphflow.agents import (
    Agent,
    FunctionAgent,
    LlmRoutingAgent,
    LoopAgent,
    ParallelAgent,
    ReactAgent,
)
from graphflow.hooks.base import AgentHook, ModelHook, ToolHook


def default_kind(agent: Agent) -> str:
    """A custom kind's name: its class name without `Agent`, lower case (`MapReduceAgent` → mapreduce)."""
    name = type(agent).__name__
    return (name[: -len("Agent")] if name.endswith("Agent") and name != "Agent" else name).lower()


def callable_name(fn: Any) -> str:
    """A stable, readable name for a function (never its address)."""
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return str(name)


def model_name(model: Any) -> str:
    if isinstance(model, str):
        return model
    for attr in ("model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def hook_kinds(hook: Any) -> list[str]:
    kinds = [
        kind
        for klass, kind in ((AgentHook, "agent"), (ModelHook, "model"), (ToolHook, "tool"))
        if isinstance(hook, klass)
    ]
    return kinds or ["other"]


def common_details(agent: Agent) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if agent.instruction is not None:
        details["instruction"] = agent.instruction
        details["reads"] = [{"key": p.name, "optional": p.optional} for p in agent.placeholders()]
    if agent.output_key:
        details["output_key"] = agent.output_key
    if agent.input_keys:
        details["input_keys"] = list(agent.input_keys)
    # (fields of the agents that call a model: a flow has neither)
    if getattr(agent, "include_contents", "default") != "default":
        details["include_contents"] = agent.include_contents  # type: ignore[attr-defined]
    if getattr(agent, "return_reasoning_contents", False):
        details["return_reasoning_contents"] = True
    if agent.hooks:
        details["hooks"] = [
            {"name": h.name, "kinds": hook_kinds(h), "writes": list(getattr(h, "writes", ()))}
            for h in agent.hooks
        ]
    return details


def builtin_details(agent: Agent, exit_loop_in_body: bool = False) -> dict[str, Any]:
    """Settings of a built-in kind (common ones first)."""
    details = common_details(agent)
    if isinstance(agent, ReactAgent):
        details["model"] = model_name(agent.model)
        details["tools"] = [t.name for t in agent.tool_objects()]
        if agent.system_prompt:
            details["system_prompt"] = agent.system_prompt
        details["max_iterations"] = agent.max_iterations
        if agent.output_schema is not None:
            details["output_schema"] = agent.output_schema.__name__
    elif isinstance(agent, LoopAgent):
        details["max_iterations"] = agent.max_iterations
        if agent.until is not None:
            details["until"] = callable_name(agent.until)
        details["exit_loop"] = exit_loop_in_body
    elif isinstance(agent, ParallelAgent):
        merge = agent.merge if isinstance(agent.merge, str) else callable_name(agent.merge)
        details["merge"] = merge
        if agent.merged_key:
            details["merge_output_key"] = agent.merged_key
        details["max_concurrency"] = agent.max_concurrency
    elif isinstance(agent, LlmRoutingAgent):
        details["model"] = model_name(agent.model)
        details["routes"] = [
            {"name": a.name, "description": a.description} for a in agent.sub_agents
        ]
        details["fallback"] = agent.fallback
        details["multi"] = agent.multi
        details["max_retries"] = agent.max_retries
    elif isinstance(agent, FunctionAgent):
        details["fn"] = callable_name(agent.fn)
        if agent.writes:
            details["writes"] = list(agent.writes)
    return details


def title(name: str, kind: str, output_key: str | None) -> str:
    return f"{name} · {kind}" + (f" → {output_key}" if output_key else "")


def card_label(agent: Agent, kind: str, details: dict[str, Any]) -> str:
    """A leaf agent's card: name, kind line, output key."""
    lines = [agent.name]
    if kind == "react":
        tools = details.get("tools") or []
        lines.append("react" + (f" · tools: {', '.join(tools)}" if tools else ""))
    elif kind == "function":
        lines.append(f"function · {details.get('fn')}")
    else:
        lines.append(kind)
    if agent.output_key:
        lines.append(f"→ {agent.output_key}")
    return "\n".join(lines)


def loop_ends(details: Mapping[str, Any]) -> list[str]:
    """What ends a loop, from its details: `until=<predicate>`, `exit_loop`, `≤ N passes`."""
    ends = [f"until={details['until']}"] if details.get("until") else []
    if details.get("exit_loop"):
        ends.append("exit_loop")
    ends.append(f"≤ {details.get('max_iterations')} passes")
    return ends
