"""Scripted demo models: a keyword router and specialists that read their tool results.

The router names no valid route for a message it cannot place (`{"agent": "none"}`), so the
router's retries run out and the `fallback` route handles the message, as with a real model
that keeps answering outside the list.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage

from graphflow.testing import ScriptedChatModel, tool_call

KEYWORDS = {
    "billing": ("charged", "invoice", "refund", "payment", "bill"),
    "tech": ("login", "log in", "sync", "crash", "error", "password"),
    "returns": ("return", "broken", "exchange", "send back"),
}


def _user_text(messages: list[BaseMessage]) -> str:
    return next((m.text for m in reversed(messages) if m.type == "human"), "")


def _order(text: str) -> str:
    found = re.search(r"\b[A-Z]-\d{4}\b", text)
    return found.group(0) if found else "unknown"


def router_reply(messages: list[BaseMessage], n: int) -> Any:
    """Route by keywords; the rewritten query keeps the order id and the request."""
    # the customer's message is the first user message (later ones are the router's feedback)
    asked = next((m.text for m in messages if m.type == "human"), "")
    for route, words in KEYWORDS.items():
        if any(w in asked.lower() for w in words):
            return {"agent": route, "query": asked}
    return {"agent": "none"}


def _tool_results(messages: list[BaseMessage]) -> list[BaseMessage]:
    return [m for m in messages if m.type == "tool"]


def billing_reply(messages: list[BaseMessage], n: int) -> Any:
    """Look the invoice up; refund one charge when it was charged twice; then answer."""
    order = _order(_user_text(messages))
    results = _tool_results(messages)
    if not results:
        return tool_call("lookup_invoice", {"order_id": order})
    if len(results) == 1 and "charged 2x" in results[0].text:
        amount = float(re.search(r"([0-9.]+) EUR", results[0].text).group(1))  # type: ignore[union-attr]
        return tool_call("refund", {"order_id": order, "amount": amount})
    last = results[-1]
    if last.name == "refund":
        if getattr(last, "status", "success") == "error":
            return f"I could not refund {order}: {last.text}"
        return f"Sorry about the double charge: {last.text}."
    return f"Your invoice: {last.text}. It was charged once, so no refund is due."


def tech_reply(messages: list[BaseMessage], n: int) -> Any:
    """Check the component the user mentions, then explain."""
    results = _tool_results(messages)
    if not results:
        text = _user_text(messages).lower()
        return tool_call("service_status", {"component": "sync" if "sync" in text else "login"})
    return f"Status check: {results[-1].text}. If it persists, sign out and in again."


def returns_reply(messages: list[BaseMessage], n: int) -> Any:
    """Create a return label for the order, then answer."""
    results = _tool_results(messages)
    if not results:
        return tool_call("return_label", {"order_id": _order(_user_text(messages))})
    return f"Done: {results[-1].text}. Drop the parcel at any post office within 14 days."


def demo_models() -> dict[str, ScriptedChatModel]:
    """Fresh demo models by agent name."""
    return {
        "router": ScriptedChatModel(fn=router_reply),
        "billing": ScriptedChatModel(fn=billing_reply),
        "tech": ScriptedChatModel(fn=tech_reply),
        "returns": ScriptedChatModel(fn=returns_reply),
    }
