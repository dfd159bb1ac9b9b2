"""The support desk: an `LlmRoutingAgent` over billing / tech / returns, with a fallback.

The billing specialist may refund, and every refund waits for a human (`HumanApproval`): the run
pauses at a checkpoint, and `resume(thread_id, {"decision": "approve" | "reject", ...})` goes
on. A message the router cannot place goes to `triage`, a `FunctionAgent` that files it for a
human.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from graphflow import FunctionAgent, HumanApproval, LlmRoutingAgent, ReactAgent

from . import desk
from .demo_models import demo_models


def _models() -> dict[str, Any]:
    if os.environ.get("OPENAI_API_KEY"):
        name = "openai:" + os.environ.get("GRAPHFLOW_MODEL", "gpt-4o-mini")
        return dict.fromkeys(("router", "billing", "tech", "returns"), name)
    return demo_models()


def file_ticket(state: Mapping[str, Any]) -> str:
    """The fallback: hand the message to a human."""
    desk.TICKETS.append(str(state["input"]))
    return f"Thanks, a colleague will answer you personally (ticket T-{len(desk.TICKETS):04d})."


def build(models: Mapping[str, Any] | None = None) -> LlmRoutingAgent:
    """The desk; `models` by agent name (default: demo models, or OpenAI with a key)."""
    m = dict(models or _models())
    billing = ReactAgent(
        name="billing",
        description="Invoices, double charges and refunds.",
        model=m["billing"],
        tools=[desk.lookup_invoice, desk.refund],
        system_prompt="You are the billing desk. Check the invoice before any refund.",
        hooks=[HumanApproval({"refund": "Refunds move money: a person approves each one."})],
        output_key="billing_reply",
    )
    tech = ReactAgent(
        name="tech",
        description="Log-in, sync and app problems.",
        model=m["tech"],
        tools=[desk.service_status],
        system_prompt="You are technical support. Check the service status first.",
        output_key="tech_reply",
    )
    returns = ReactAgent(
        name="returns",
        description="Returns and exchanges of delivered items.",
        model=m["returns"],
        tools=[desk.return_label],
        system_prompt="You handle returns. Create a return label for the order.",
        output_key="returns_reply",
    )
    triage = FunctionAgent(
        name="triage",
        description="Anything else: filed for a human.",
        fn=file_ticket,
        output_key="triage_reply",
    )
    return LlmRoutingAgent(
        name="support",
        model=m["router"],
        sub_agents=[billing, tech, returns, triage],
        fallback="triage",
        output_key="reply",
    )


desk_agent = build()
