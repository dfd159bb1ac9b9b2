"""How a parallel branch's failure is worded, and how its own error is read back from that text.

`ParallelBranchError`'s message names the failed branch and what the finished ones saved; the run
overlay (`graphflow.visualize`) shows the branch's own error, read back with `branch_cause`.
"""

from __future__ import annotations

__all__ = ("FAILED", "SAVED", "branch_cause")

FAILED = "` failed: "
"""Between the failed branch's name and its own error."""
SAVED = " — the branches that finished are saved"
"""After the branch's own error."""


def branch_cause(text: str) -> str | None:
    """The branch's own error (`ValueError: boom`) in a `ParallelBranchError`'s text, else None.

    The run overlay shows a branch's own error, not the whole message of its parent's node.
    """
    head, saved, _ = text.partition(SAVED)
    if not saved or FAILED not in head:
        return None
    return head.split(FAILED, 1)[1]
