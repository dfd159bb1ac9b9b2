"""What a batch reports for each input."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ("BatchResult", "BatchStatus")

BatchStatus = Literal["done", "failed", "interrupted"]


@dataclass(frozen=True, kw_only=True)
class BatchResult:
    """One input's outcome in a batch."""

    id: str
    """The input's key: its `id`, or its position in the inputs."""
    index: int
    """Its position in the inputs (results come back in this order)."""
    thread_id: str
    """The durable thread the input runs on (resume it like any run)."""
    status: BatchStatus
    """`done`, `failed` (the error says why; running the batch again resumes it) or
    `interrupted` (waiting for an answer: `graphflow approve` / `resume(thread_id, value)`)."""
    outputs: dict[str, Any] = field(default_factory=dict)
    """The agents' output keys in the final state (empty unless done)."""
    usage: dict[str, int] | None = None
    """Tokens of this attempt (`input_tokens`, `output_tokens`, `total_tokens`); None when the
    input had finished in an earlier attempt."""
    error: str | None = None
    """What went wrong (failed) or what is pending (interrupted)."""
    error_type: str | None = None
    """The exception's class name, for a failed input."""
    reused: bool = False
    """True when the input had finished in an earlier attempt of the batch (not run again)."""

    def to_json(self) -> str:
        """One JSON line: id, thread, status, outputs, usage, error."""
        return json.dumps(
            {
                "id": self.id,
                "thread": self.thread_id,
                "status": self.status,
                "outputs": self.outputs,
                "usage": self.usage,
                "error": self.error,
                "error_type": self.error_type,
                "reused": self.reused,
            },
            ensure_ascii=False,
            default=_plain,
        )


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    content = getattr(value, "content", None)
    if isinstance(content, str):
        return content
    return repr(value)
