"""The support desk: routes, the approval-guarded refund, and the fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.support_router import build, desk
from examples.support_router.demo_models import demo_models


@pytest.fixture
def desk_models():
    desk.REFUNDS.clear()
    desk.TICKETS.clear()
    models = demo_models()
    return models, build(models)


@pytest.mark.parametrize(
    ("message", "route", "text"),
    [
        ("I cannot log in since this morning", "tech", "login: operational"),
        ("My sync is stuck", "tech", "degraded"),
        ("I want to return order A-1003, it arrived broken", "returns", "RL-A-1003"),
        ("Is the invoice for A-1002 right?", "billing", "charged once"),
    ],
)
def test_each_message_reaches_its_specialist(desk_models, message, route, text) -> None:
    models, agent = desk_models
    result = agent.invoke(message)
    assert result["agent_status"][route] == "completed"
    assert text in result["reply"]
    assert {n for n, m in models.items() if m.calls} == {"router", route}


def test_a_refund_waits_for_approval_then_runs_once(desk_models, tmp_path: Path) -> None:
    models, agent = desk_models
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    agent.invoke("I was charged twice for order A-1001", thread_id="r", checkpointer=store)
    pending = agent.get_state("r", checkpointer=store).interrupts
    assert [p.value["tool"] for p in pending] == ["refund"]
    assert pending[0].value["args"] == {"order_id": "A-1001", "amount": 29.0}
    assert desk.REFUNDS == []  # nothing moved before the decision
    result = agent.resume("r", {"decision": "approve"}, checkpointer=store)
    assert desk.REFUNDS == [{"order_id": "A-1001", "amount": 29.0}]
    assert "refunded 29.00 EUR" in result["reply"]


def test_a_rejected_refund_never_runs(desk_models) -> None:
    models, agent = desk_models
    agent.invoke("charged twice for A-1001", thread_id="x")
    result = agent.resume("x", {"decision": "reject", "reason": "fraud check"})
    assert desk.REFUNDS == []
    assert "could not refund" in result["reply"] and "fraud check" in result["reply"]


def test_a_message_no_route_fits_goes_to_the_fallback(desk_models) -> None:
    models, agent = desk_models
    result = agent.invoke("What is the meaning of life?")
    assert result["agent_status"]["triage"] == "completed"
    assert "ticket T-0001" in result["reply"]
    assert desk.TICKETS == ["What is the meaning of life?"]
    assert models["router"].calls == 3  # one choice and two retries, all outside the routes
