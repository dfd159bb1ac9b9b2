"""Bounded context work: a stalled summarizer, a huge summary, and settings checked at once."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool

from graphflow import ReactAgent
from graphflow.context import (
    ContextStats,
    DirectoryOffload,
    HybridContext,
    LoopBreaker,
    ObservationMasking,
    Summarization,
    count_tokens,
)
from graphflow.exceptions import AgentRunError, GraphflowConfigError
from graphflow.testing import ScriptedChatModel, tool_call
from tests.context.context_helpers import next_round

SUMMARY = "graphflow_summary"
OUTER = 60.0
"""Seconds a test waits for a run before calling it hung (far above any bound it checks)."""


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"{query}: " + "detail " * 150  # about 1,000 characters


def _searching(rounds: int):
    def script(messages: list[BaseMessage], n: int):
        r = next_round(messages)
        return tool_call("lookup", {"query": f"q{r}"}) if r < rounds else "final answer"

    return script


def _finished_within(fn, seconds: float):
    """`fn()`'s result, or a failure when it has not returned after `seconds` (a hang)."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"the run was still going after {seconds} s"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]


# -- a summarizer that stalls ---------------------------------------------------------------------


@pytest.fixture
def stalled():
    """A summarizer that blocks until the test ends (then every abandoned call returns)."""
    release = threading.Event()

    def stall(messages, n):
        release.wait(OUTER * 3)
        return "## Goal\nlate"

    yield ScriptedChatModel(fn=stall)
    release.set()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_stalled_summarizer_is_abandoned_at_the_agents_model_timeout(stalled, mode):
    search = _searching(12)

    def script(messages, n):
        # searches until the summarizer has been tried (and given up on), then answers
        return "final answer" if stalled.calls else search(messages, n)

    model = ScriptedChatModel(fn=script)
    agent = ReactAgent(
        name="analyst",
        model=model,
        tools=[lookup],
        context=Summarization(stalled, keep_last=1, context_window=900),
        model_timeout=1.5,
        max_iterations=20,
    )

    def run():
        if mode == "async":
            return asyncio.run(agent.ainvoke("Find the facts.", thread_id="t"))
        return agent.invoke("Find the facts.", thread_id="t")

    # before: every summarization waited for the stalled model (here until the test's end)
    result = _finished_within(run, OUTER)
    assert result["messages"][-1].content == "final answer"  # it went on without a summary
    stats = ContextStats.from_state(agent.get_state("t"))
    assert stalled.calls == 1
    assert stats.summarizer_failures == 1 and stats.summaries == 0
    assert stats.last_error is not None
    assert stats.last_error.startswith("ModelTimeoutError: Agent `analyst`: the summarizer")
    assert "model_timeout=1.5" in stats.last_error
    assert not any(SUMMARY in m.additional_kwargs for r in model.requests for m in r)


# -- a summary that does not fit --------------------------------------------------------------------


def test_a_huge_summary_is_cut_to_fit_the_window():
    huge = "## Goal\nFind the facts.\n## Progress\n" + "word " * 20_000 + "\n## Next Steps\nAnswer."
    assert len(huge) > 100_000
    summarizer = ScriptedChatModel(fn=lambda m, n: huge)
    model = ScriptedChatModel(fn=_searching(8))
    agent = ReactAgent(
        name="analyst",
        model=model,
        tools=[lookup],
        context=HybridContext(
            ObservationMasking(keep_last=3),
            Summarization(summarizer, keep_last=1),
            context_window=900,
        ),
        max_iterations=30,
    )
    assert agent.invoke("Find the facts.", thread_id="t")["messages"][-1].content == "final answer"
    with_summary = [r for r in model.requests if any(SUMMARY in m.additional_kwargs for m in r)]
    assert with_summary, "the window was small enough to force a summary"
    for request in with_summary:
        # (before: 25,000 tokens and more, most of them the summary)
        assert count_tokens(request, model) <= 900
        [summary] = [m for m in request if SUMMARY in m.additional_kwargs]
        assert "## Next Steps" in summary.text  # cut per section: all five stay
        assert "cut to fit" in summary.text
    stats = ContextStats.from_state(agent.get_state("t"))
    assert stats.summaries >= 1
    record = agent.get_state("t").values["gf_context"]["summary"]
    assert len(record["text"]) < 10_000  # the stored summary is the cut one


def test_max_summary_tokens_bounds_the_summary():
    summarizer = ScriptedChatModel(fn=lambda m, n: "## Progress\n" + "fact " * 2_000)
    model = ScriptedChatModel(fn=_searching(8))
    policy = Summarization(summarizer, keep_last=1, context_window=2_000, max_summary_tokens=120)
    agent = ReactAgent(
        name="analyst", model=model, tools=[lookup], context=policy, max_iterations=30
    )
    agent.invoke("Find the facts.", thread_id="t")
    summaries = [m for r in model.requests for m in r if SUMMARY in m.additional_kwargs]
    assert summaries
    text = agent.get_state("t").values["gf_context"]["summary"]["text"]
    assert count_tokens(text, model) <= 120


# -- settings checked when the policy is made ---------------------------------------------------


@pytest.mark.parametrize("model", [42, object(), "nope:some-model", "openai:"])
def test_a_summarizer_that_is_not_a_chat_model_is_refused_at_once(model):
    # before: accepted, and the run failed (or silently skipped summaries) at the first summary
    with pytest.raises(GraphflowConfigError, match="[Ss]ummari"):
        Summarization(model)


def test_an_offload_directory_below_a_file_is_refused_at_once(tmp_path: Path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory")
    below = blocker / "offload"
    # before: accepted; the first masked result raised a raw NotADirectoryError mid-run
    with pytest.raises(GraphflowConfigError, match="file.txt.*not a directory"):
        DirectoryOffload(below)
    with pytest.raises(GraphflowConfigError, match="offload"):
        ObservationMasking(offload=str(below))
    with pytest.raises(GraphflowConfigError, match="offload"):
        HybridContext(offload=below)
    with pytest.raises(GraphflowConfigError, match="not a directory"):
        DirectoryOffload(blocker)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only directories")
def test_a_read_only_offload_directory_is_refused_at_once(tmp_path: Path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(GraphflowConfigError, match="not writable"):
            DirectoryOffload(locked / "offload")
    finally:
        locked.chmod(0o700)


def test_a_new_offload_directory_is_fine(tmp_path: Path):
    store = DirectoryOffload(tmp_path / "a" / "b")
    assert store.root == (tmp_path / "a" / "b").resolve()


@pytest.mark.parametrize(
    "make",
    [
        lambda: ObservationMasking(keep_last="3"),  # type: ignore[arg-type]
        lambda: ObservationMasking(keep_last=2.5),  # type: ignore[arg-type]
        lambda: ObservationMasking(keep_last=True),  # type: ignore[arg-type]
        lambda: ObservationMasking(keep_tokens=-1),
        lambda: ObservationMasking(min_chars=-5),
        lambda: ObservationMasking(gist_chars="80"),  # type: ignore[arg-type]
        lambda: ObservationMasking(offload=42),
        lambda: Summarization(trigger=0),
        lambda: Summarization(trigger=float("nan")),
        lambda: Summarization(trigger="0.8"),  # type: ignore[arg-type]
        lambda: Summarization(keep_last=0),
        lambda: Summarization(context_window=0),
        lambda: Summarization(max_input_tokens=10),
        lambda: Summarization(max_summary_tokens=0),
        lambda: Summarization(max_summary_tokens=10),
        lambda: LoopBreaker(repeats=1),
        lambda: LoopBreaker(repeats="3"),  # type: ignore[arg-type]
        lambda: HybridContext(context_window=0),
        lambda: HybridContext(context_window=-4_096),
        lambda: HybridContext(masking=Summarization()),  # type: ignore[arg-type]
        lambda: HybridContext(summarization=ObservationMasking()),  # type: ignore[arg-type]
        lambda: HybridContext(loop_breaker=3),  # type: ignore[arg-type]
    ],
)
def test_bad_settings_are_config_errors_when_the_policy_is_made(make):
    with pytest.raises(GraphflowConfigError):
        make()


def test_a_summary_from_an_older_version_is_cut_too():
    """A summary recorded before the cut existed (in a checkpoint) is cut when it is applied."""
    model = ScriptedChatModel(fn=_searching(3))
    agent = ReactAgent(
        name="analyst",
        model=model,
        tools=[lookup],
        context=Summarization(ScriptedChatModel(replies=[]), keep_last=1, context_window=900),
    )
    agent.invoke("go", thread_id="t")
    snapshot = agent.get_state("t")
    history = snapshot.values["messages"]
    through = next(m.id for m in history if getattr(m, "tool_calls", None))
    old = {"text": "## Progress\n" + "old " * 20_000, "through": through, "rounds": 1, "number": 1}
    agent.compile().graph.update_state(snapshot.config, {"gf_context": {"summary": old}})
    model.reset()
    agent.invoke(HumanMessage(content="and again"), thread_id="t")
    [summary] = [m for m in model.requests[0] if SUMMARY in m.additional_kwargs]
    assert count_tokens(summary.text, model) <= 900


def test_an_offload_directory_that_breaks_mid_run_is_a_clear_run_error(tmp_path: Path):
    root = tmp_path / "offload"
    policy = ObservationMasking(keep_last=1, offload=root)
    root.write_text("a file took the directory's place after the policy was made")
    model = ScriptedChatModel(fn=_searching(3))
    agent = ReactAgent(name="analyst", model=model, tools=[lookup], context=policy)
    # before: a raw NotADirectoryError (or FileExistsError) from the first masked result
    with pytest.raises(AgentRunError, match=r"Agent `analyst`: the context policy could not keep"):
        agent.invoke("go", thread_id="t")


@pytest.mark.parametrize("limit", [64, 100, 400])
def test_a_cut_summary_keeps_its_sections_within_the_limit(limit):
    from graphflow.context._summarizer import SECTIONS, fit, normalize
    from graphflow.context.tokens import token_counter

    counter = token_counter("gpt-4o")
    text = normalize("\n".join(f"## {s}\n" + f"{s.lower()} fact. " * 500 for s in SECTIONS))
    cut = fit(text, counter, limit)
    assert counter.count_text(cut) <= limit
    if limit >= 100:
        assert [line for line in cut.splitlines() if line.startswith("## ")] == [
            f"## {s}" for s in SECTIONS
        ]
    assert fit("## Goal\nshort", counter, limit) == "## Goal\nshort"
