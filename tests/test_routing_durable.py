"""Each routing attempt is its own durable step: a resumed run never repeats a finished one."""

from __future__ import annotations

import pytest

from graphflow import FunctionAgent, LlmRoutingAgent
from graphflow.testing import ScriptedChatModel


def test_resume_after_a_failed_second_attempt_does_not_repeat_the_first(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    chooser = ScriptedChatModel(
        replies=[
            '{"agent": "nobody"}',  # invalid: fed back
            ConnectionError("router endpoint reset"),  # the run fails here
            '{"agent": "billing"}',  # after resume
            '{"agent": "support"}',  # a later, separate invocation on the thread
        ]
    )
    billing = FunctionAgent(name="billing", fn=lambda s: "refund issued", output_key="answer")
    support = FunctionAgent(name="support", fn=lambda s: "ticket opened", output_key="answer")
    router = LlmRoutingAgent(name="router", model=chooser, sub_agents=[billing, support])

    with pytest.raises(ConnectionError):
        router.invoke("my card was charged twice", thread_id="t", checkpointer=url)
    result = router.resume("t", checkpointer=url)

    assert result["answer"] == "refund issued"
    assert chooser.calls == 3  # the first (invalid) attempt was not repeated
    resumed_request = chooser.requests[2]
    assert "That choice was invalid" in resumed_request[-1].content
    assert "nobody" in resumed_request[-1].content

    # a new invocation on the same thread starts without the old attempts' feedback
    again = router.invoke("and open a ticket", thread_id="t", checkpointer=url)
    assert again["answer"] == "ticket opened"
    assert all("That choice was invalid" not in m.content for m in chooser.requests[3])
