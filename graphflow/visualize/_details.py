"""What the side panel and the labels say about every agent: its common settings, JSON-able.

A kind's own settings come from its strategy (`details`, see `graphflow.strategies.kind`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphflow.hooks.base import AgentHook, ModelHook, ToolHook
from graphflow.strategies.registry import strategy_for

if TYPE_CHECKING:
    from graphflow.agents import Agent


def hook_kinds(hook: Any) -> list[str]:
    kinds = [
        kind
        for klass, kind in ((AgentHook, "agent"), (ModelHook, "model"), (ToolHook, "tool"))
        if isinstance(hook, klass)
    ]
    return kinds or ["other"]


def common_details(agent: Agent) -> dict[str, Any]:
    """The settings every agent has (instruction and its reads, keys, hooks), set ones only.

    Fields the agent's kind does not use (its strategy's `unused_fields`) are left out.
    """
    details: dict[str, Any] = {}
    if agent.instruction is not None:
        details["instruction"] = agent.instruction
        details["reads"] = [{"key": p.name, "optional": p.optional} for p in agent.placeholders()]
    if agent.output_key:
        details["output_key"] = agent.output_key
    if agent.input_keys:
        details["input_keys"] = list(agent.input_keys)
    # (fields of the agents that call a model: a flow has neither; a kind may ignore one)
    unused = strategy_for(agent).unused_fields
    if (
        getattr(agent, "include_contents", "default") != "default"
        and "include_contents" not in unused
    ):
        details["include_contents"] = agent.include_contents  # type: ignore[attr-defined]
    if (
        getattr(agent, "return_reasoning_contents", False)
        and "return_reasoning_contents" not in unused
    ):
        details["return_reasoning_contents"] = True
    if agent.hooks:
        details["hooks"] = [
            {"name": h.name, "kinds": hook_kinds(h), "writes": list(getattr(h, "writes", ()))}
            for h in agent.hooks
        ]
    return details


def title(name: str, kind: str, output_key: str | None) -> str:
    """An agent's title: `name · kind` (and `→ output_key`)."""
    return f"{name} · {kind}" + (f" → {output_key}" if output_key else "")
