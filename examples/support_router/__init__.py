"""A support desk: an LlmRoutingAgent to billing / tech / returns, a guarded refund, a fallback.

python -m examples.support_router "I was charged twice for order A-1001"
"""

from .desk_team import build, desk_agent

__all__ = ("build", "desk_agent")
