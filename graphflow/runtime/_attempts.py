"""Model call attempts that failed after streaming part of a reply: their tokens are void.

LangGraph's `messages` stream forwards each token of a model call as it arrives and forgets a
call that fails without a word (its handler only drops the run). A stream the server cuts short
and that is then retried — a compatible model retrying a bad reply, `ModelRetry`, a node's retry
policy — reached a consumer as the first attempt's tokens followed by the whole reply again: the
answer shown twice, its first half garbled. LangChain's own streaming protocol ends such a
message with an `error` event; `AttemptWatcher` does the same for graphflow's typed events.

It rides along in the callbacks of an event stream's run (inherited by every model call, at any
depth) and, for a call whose tokens were streamed and which then failed, writes a `custom` chunk
`{MODEL_DISCARDED: message id, "error": ..., "error_type": ...}` with LangGraph's stream writer —
into the same stream as the tokens, so it comes after them and before any retry's. The
translator turns it into `ModelReplyDiscarded` and drops tokens of that message that come later
still (a call abandoned on a timeout keeps streaming in the background).
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import ChatGenerationChunk
from langgraph.constants import TAG_NOSTREAM

__all__ = ("MODEL_DISCARDED", "AttemptWatcher", "with_watcher")

MODEL_DISCARDED = "graphflow_model_discarded"
"""Key of the `custom` chunk that says a streamed model reply was discarded (its message id)."""

_ERROR_CHARS = 500
"""At most this many characters of the error are carried by the event."""


class AttemptWatcher(BaseCallbackHandler):
    """Announces the model calls that failed after streaming tokens (see the module docstring)."""

    run_inline = True
    """Called in the model call's own thread and context, where the node's stream writer is."""

    def __init__(self) -> None:
        self._streaming: dict[UUID, str | None] = {}
        """Model runs whose tokens LangGraph streams -> the id of their message (once a token
        came)."""
        self._lock = threading.Lock()

    def on_chat_model_start(  # noqa: D102
        self,
        serialized: dict[str, Any],
        messages: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        # (LangGraph's rule for which calls' tokens reach the `messages` stream)
        if metadata and not (tags and TAG_NOSTREAM in tags):
            with self._lock:
                self._streaming[run_id] = None

    def on_llm_new_token(  # noqa: D102
        self, token: Any, *, chunk: Any = None, run_id: UUID, **kwargs: Any
    ) -> None:
        if not isinstance(chunk, ChatGenerationChunk):
            return
        with self._lock:
            if run_id in self._streaming and self._streaming[run_id] is None:
                self._streaming[run_id] = chunk.message.id

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:  # noqa: D102
        with self._lock:
            self._streaming.pop(run_id, None)

    def on_llm_error(  # noqa: D102
        self, error: BaseException, *, run_id: UUID, **kwargs: Any
    ) -> None:
        with self._lock:
            message_id = self._streaming.pop(run_id, None)
        if message_id is None:  # nothing of it was shown
            return
        try:
            from langgraph.config import get_stream_writer

            writer = get_stream_writer()
        except RuntimeError:  # (a call outside the graph's context)
            return
        text = " ".join(str(error).split()) or type(error).__name__
        if len(text) > _ERROR_CHARS:
            text = text[: _ERROR_CHARS - 1] + "…"
        writer({MODEL_DISCARDED: message_id, "error": text, "error_type": type(error).__name__})


def with_watcher(config: Any) -> Any:
    """`config` (a run's) with an `AttemptWatcher` among its callbacks (a new dict)."""
    watcher = AttemptWatcher()
    callbacks = config.get("callbacks")
    if callbacks is None:
        callbacks = [watcher]
    elif isinstance(callbacks, list):
        callbacks = [*callbacks, watcher]
    else:  # a callback manager: a copy with the watcher added for every child run
        callbacks = callbacks.copy()
        callbacks.add_handler(watcher, inherit=True)
    return {**config, "callbacks": callbacks}
