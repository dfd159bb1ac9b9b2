"""The support desk's data and tools: orders, invoices, service status, return labels, refunds.

`REFUNDS` records every refund actually made, so a test (or you) can see that a rejected refund
never ran and an approved one ran once.
"""

from __future__ import annotations

from langchain_core.tools import tool

ORDERS = {
    "A-1001": {"customer": "alice", "item": "Pura X case", "amount": 29.0, "charges": 2},
    "A-1002": {"customer": "bob", "item": "USB-C charger", "amount": 45.0, "charges": 1},
    "A-1003": {"customer": "chen", "item": "Smart watch", "amount": 199.0, "charges": 1},
}
SERVICES = {"login": "operational", "sync": "degraded: syncing is delayed by about 20 minutes"}
REFUNDS: list[dict[str, object]] = []
"""Refunds made in this process, in order."""
TICKETS: list[str] = []
"""Messages handed to a human by the fallback."""


@tool
def lookup_invoice(order_id: str) -> str:
    """The invoice of an order: item, amount and how many times it was charged."""
    order = ORDERS.get(order_id)
    if order is None:
        return f"no order {order_id}; known orders: {', '.join(ORDERS)}"
    return f"{order_id}: {order['item']}, {order['amount']:.2f} EUR, charged {order['charges']}x"


@tool
def refund(order_id: str, amount: float) -> str:
    """Refund `amount` EUR of an order to the customer's card."""
    REFUNDS.append({"order_id": order_id, "amount": amount})
    return f"refunded {amount:.2f} EUR on {order_id}"


@tool
def service_status(component: str) -> str:
    """The status of a service component (login, sync)."""
    return f"{component}: {SERVICES.get(component, 'unknown component')}"


@tool
def return_label(order_id: str) -> str:
    """Create a prepaid return label for an order."""
    if order_id not in ORDERS:
        return f"no order {order_id}; known orders: {', '.join(ORDERS)}"
    return f"return label RL-{order_id} created for {ORDERS[order_id]['item']}"
