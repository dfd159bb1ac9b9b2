"""A failed parallel branch resumes from its own last checkpoint, not from its start."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from graphflow import ParallelBranchError
from tests.durable.parallel_trees import LOOKUPS, _tree


def test_failed_branches_continue_from_their_last_checkpoint(tmp_path, run_mode) -> None:
    fan, flaky, steady, steps = _tree()
    url = f"sqlite:///{tmp_path}/runs.db"

    async def arun() -> dict[str, Any]:
        with pytest.raises(ParallelBranchError):
            await fan.ainvoke("go", thread_id="t", checkpointer=url)
        return await fan.aresume("t", checkpointer=url)

    if not run_mode.is_async:
        with pytest.raises(ParallelBranchError) as err:
            fan.invoke("go", thread_id="t", checkpointer=url)
        assert err.value.agent == "fan"
        # both failed tasks of the step are re-run by one resume
        result = fan.resume("t", checkpointer=url)
    else:
        result = asyncio.run(arun())

    assert result["merged"] == {
        "research": "final answer",
        "two": "two",
        "draft": "steady 0",
    }
    # the ReAct branch failed at its 3rd model call: calls 1-2 and both tool calls are not redone
    assert flaky.calls == 4
    assert LOOKUPS == ["q0", "q1"]
    # the Sequential branch failed in its 2nd step: the 1st step is not redone
    assert steps.count("first") == 1
    assert steps.count("second") == 2
    # the healthy branch ran once
    assert steady.calls == 1
