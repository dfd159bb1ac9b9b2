"""`BadReply`: an HTTP 200 from a model endpoint that is no usable reply.

Invalid JSON, an HTML page (a proxy's), a reply without `choices`, or a stream that ended
without a `finish_reason` (llama-cpp-python cuts a stream when a parallel request arrives). The
OpenAI SDK retries only statuses and transport errors, so the compatible models retry these
themselves, like a server error; `explain_model_error` then makes the last one a
`ModelServerError` naming the agent, the model and the endpoint.
"""

from __future__ import annotations

__all__ = ("BadReply",)


class BadReply(Exception):
    """A 200 reply that cannot be used (see the module docstring)."""

    def __init__(self, what: str, detail: str = "") -> None:
        super().__init__(f"{what}: {detail}" if detail else what)
        self.what = what
        """What was wrong, in a few words (`the reply was not valid JSON`)."""
        self.detail = detail
        """The parser's words or the start of the body."""
        self.attempts = 1
        """Requests made for this call (set by the retry loop)."""
