"""What a context policy did, as recorded in the agent's private `gf_context` state channel.

The record is written with each model call (in the same checkpointed step), so it is exact after
a crash and a resume. Read it from a state snapshot::

    stats = ContextStats.from_state(agent.get_state(thread_id))
    stats.masking_fired, stats.summaries, stats.tokens_saved
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from graphflow.state import CONTEXT

__all__ = ("ContextStats",)


@dataclass(frozen=True, kw_only=True)
class ContextStats:
    """Counters of one agent run's context policy."""

    model_calls: int = 0
    """Model calls the policy prepared."""
    masking_fired: int = 0
    """Calls whose request had at least one tool result masked."""
    masked_results: int = 0
    """Tool results masked in the last request."""
    summaries: int = 0
    """Summaries made (a summary found in the store after a crash counts, without a call)."""
    summarizer_calls: int = 0
    """Calls of the summarizer model (one per chunk and per merge), those of a summary made just
    before a crash included (the summary itself is reused from the offload store, not remade)."""
    summarizer_failures: int = 0
    """Summarizations that failed; the run went on with masking only."""
    last_error: str | None = None
    """The last summarizer failure, `Type: message`."""
    tokens_saved: int = 0
    """Tokens not sent, summed over calls (the full history's count minus the request's)."""
    last_request_tokens: int = 0
    """Tokens of the last request (messages and tool schemas, as counted locally)."""
    largest_request_tokens: int = 0
    """Tokens of the largest request so far."""
    loops_detected: int = 0
    """Times the last tool calls and results repeated (`LoopBreaker`)."""
    pair_repairs: int = 0
    """Orphan tool calls or results repaired before sending."""

    @classmethod
    def from_state(cls, state: Any) -> ContextStats:
        """The stats in a state dict or a LangGraph `StateSnapshot` (zeros when none)."""
        values = state if isinstance(state, dict) else getattr(state, "values", None) or {}
        record = (values.get(CONTEXT) or {}).get("stats") or {}
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in record.items() if k in known})

    def as_dict(self) -> dict[str, Any]:
        """The counters as a plain dict (what is stored in state)."""
        return asdict(self)
