"""A streamed reply cut short and retried is shown once (real HTTP on 127.0.0.1).

Before: the event stream carried the cut attempt's tokens, then the retry's whole reply — the
answer twice, its first half garbled, in every consumer (`graphflow run`'s live view, JSON
lines, a UI). Now the cut attempt is followed by `ModelReplyDiscarded` naming its message id, and
consumers (the CLI's views here) drop its tokens.
"""

from __future__ import annotations

import asyncio
import io
import textwrap
from typing import Any

import pytest

from graphflow import ModelRetry, ReactAgent, SequentialAgent
from graphflow import events as ev
from graphflow.cli._view import LiveView, PlainView
from graphflow.models import chat_openai, openai_model
from tests.cli.conftest import graphflow
from tests.models.openai_server import MODEL_KINDS, PAD_WORDS, model_of_kind


@pytest.fixture(autouse=True)
def _quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chat_openai, "reply_backoff", lambda attempt: 0.0)


def _events(agent: Any, mode: str, **kwargs: Any) -> list[ev.Event]:
    if mode == "sync":
        return list(agent.stream("Weather in Rome?", events=True, **kwargs))

    async def collect() -> list[ev.Event]:
        return [e async for e in agent.astream("Weather in Rome?", events=True, **kwargs)]

    return asyncio.run(collect())


def _shown(events: list[ev.Event]) -> str:
    """The answer as a consumer following the documented rule shows it."""
    void = {e.message_id for e in events if isinstance(e, ev.ModelReplyDiscarded)}
    return "".join(
        e.text for e in events if isinstance(e, ev.ModelToken) and e.message_id not in void
    )


def _check_shown_once(events: list[ev.Event], answer: str) -> ev.ModelReplyDiscarded:
    tokens = [e for e in events if isinstance(e, ev.ModelToken)]
    (discarded,) = [e for e in events if isinstance(e, ev.ModelReplyDiscarded)]
    at = events.index(discarded)
    before = {e.message_id for e in events[:at] if isinstance(e, ev.ModelToken)}
    after = {e.message_id for e in events[at:] if isinstance(e, ev.ModelToken)}
    # the cut attempt's half reply came first, under its own id; the retry's under another
    assert before == {discarded.message_id} and discarded.message_id not in after
    assert len("".join(t.text for t in tokens).split()) == PAD_WORDS + PAD_WORDS // 2
    assert discarded.agent_path == ("team", "writer")
    assert _shown(events) == answer and len(answer.split()) == PAD_WORDS
    # the order a consumer relies on: started, tokens, discarded, tokens, finished — once each
    kinds = [type(e).__name__ for e in events if not isinstance(e, ev.ModelToken)]
    assert kinds.count("ModelStarted") == 1 and kinds.count("ModelFinished") == 1
    assert kinds.index("ModelStarted") < kinds.index("ModelReplyDiscarded")
    assert kinds.index("ModelReplyDiscarded") < kinds.index("ModelFinished")
    assert ev.event_from_json(discarded.to_json_line()) == discarded
    return discarded


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_a_cut_stream_retried_by_the_model_is_shown_once(make_server, kind, mode) -> None:
    server = make_server("no_finish_reason", faults=1).start()
    writer = ReactAgent(name="writer", model=model_of_kind(kind, server), output_key="out")
    team = SequentialAgent(name="team", sub_agents=[writer])
    events = _events(team, mode, thread_id="t")
    answer = team.get_state("t").values["out"]
    discarded = _check_shown_once(events, answer)
    assert discarded.error_type == "BadModelReply"
    assert "ended without a finish_reason" in discarded.error
    assert len(server.requests) == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_cut_stream_retried_by_a_model_retry_hook_is_shown_once(make_server, mode) -> None:
    server = make_server("no_finish_reason", faults=1).start()
    writer = ReactAgent(
        name="writer",
        model=openai_model("m", base_url=server.base_url, max_retries=0),
        hooks=[ModelRetry(max_attempts=2, backoff=0.0)],
        output_key="out",
    )
    team = SequentialAgent(name="team", sub_agents=[writer])
    events = _events(team, mode, thread_id="t")
    _check_shown_once(events, team.get_state("t").values["out"])
    assert len(server.requests) == 2


def test_a_stream_cut_every_time_ends_failed_with_every_attempt_discarded(make_server) -> None:
    server = make_server("no_finish_reason").start()
    writer = ReactAgent(name="writer", model=openai_model("m", base_url=server.base_url))
    team = SequentialAgent(name="team", sub_agents=[writer])
    events: list[ev.Event] = []
    with pytest.raises(Exception, match="finish_reason"):
        for event in team.stream("hi", thread_id="t", events=True):
            events.append(event)
    discarded = [e for e in events if isinstance(e, ev.ModelReplyDiscarded)]
    assert len(discarded) == len(server.requests) == 3
    assert _shown(events) == ""  # no half answer is left standing
    assert isinstance(events[-1], ev.AgentFailed)


def test_a_reply_that_streamed_whole_is_never_discarded(make_server) -> None:
    server = make_server("openai_strict").start()
    writer = ReactAgent(name="writer", model=openai_model("m", base_url=server.base_url))
    events = list(SequentialAgent(name="team", sub_agents=[writer]).stream("hi", events=True))
    assert not any(isinstance(e, ev.ModelReplyDiscarded) for e in events)
    ids = {e.message_id for e in events if isinstance(e, ev.ModelToken)}
    assert len(ids) == 1 and all(ids)


def test_the_cli_views_show_the_answer_once(make_server) -> None:
    server = make_server("no_finish_reason", faults=1).start()
    writer = ReactAgent(name="writer", model=openai_model("m", base_url=server.base_url))
    team = SequentialAgent(name="team", sub_agents=[writer])
    events = list(team.stream("Weather in Rome?", thread_id="t", events=True))
    answer = team.get_state("t").values["messages"][-1].text
    live = LiveView(io.StringIO(), team)
    shown_at_finish = None
    try:
        for event in events:
            live.show(event)
            if isinstance(event, ev.ModelFinished):
                shown_at_finish = live.answer[("team", "writer")]
    finally:
        live.close()
    assert shown_at_finish == answer  # the retry's reply alone, not the cut half before it
    out = io.StringIO()
    plain = PlainView(out)
    for event in events:
        plain.show(event)
    lines = out.getvalue().splitlines()
    assert [line for line in lines if "model reply discarded (BadModelReply:" in line]
    assert len([line for line in lines if line.startswith("[team/writer] model: ")]) == 1


def test_graphflow_run_json_and_plain_lines_show_the_cut_reply_discarded(
    make_server, tmp_path
) -> None:
    (tmp_path / "app.py").write_text(
        textwrap.dedent(
            """
            import os

            from graphflow import ReactAgent, SequentialAgent
            from graphflow.models import openai_model

            writer = ReactAgent(
                name="writer",
                model=openai_model("m", base_url=os.environ["GF_TEST_BASE_URL"], api_key="sk"),
                output_key="out",
            )
            team = SequentialAgent(name="team", sub_agents=[writer])
            """
        )
    )
    server = make_server("no_finish_reason", faults=1).start()
    done = graphflow(
        tmp_path, "run", "app.py:team", "Rome?", "--json", GF_TEST_BASE_URL=server.base_url
    )
    assert done.returncode == 0, done.stderr
    events = [ev.event_from_json(line) for line in done.stdout.splitlines() if line.startswith("{")]
    finished = next(e for e in events if isinstance(e, ev.RunFinished))
    assert _shown(events) == finished.state["out"]
    assert sum(isinstance(e, ev.ModelReplyDiscarded) for e in events) == 1
    server = make_server("no_finish_reason", faults=1).start()
    plain = graphflow(
        tmp_path, "run", "app.py:team", "Rome?", "--plain", GF_TEST_BASE_URL=server.base_url
    )
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert [
        x for x in lines if x.startswith("[team/writer] model reply discarded (BadModelReply: ")
    ]
    assert len([x for x in lines if x.startswith("[team/writer] model: ")]) == 1
