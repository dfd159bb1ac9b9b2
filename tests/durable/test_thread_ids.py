"""A thread id is checked once, the same for every store and every printed command.

Found by the second adversarial round (issue 20): a thread id with bytes that are not UTF-8
failed the run mid-way with a raw `UnicodeEncodeError` from SQLite (after `graphflow run` had
announced it and printed a resume command for it); a newline or an escape sequence in one went
into listings and pasted commands; a 10,000-character id worked on SQLite and failed on
PostgreSQL (`index row size exceeds maximum`), after the run had started.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from graphflow import FunctionAgent, InputError, SequentialAgent
from graphflow.runtime.inputs import MAX_THREAD_ID
from tests.support.stores import store_url


def _team(calls: list[str]) -> SequentialAgent:
    def step(state: dict) -> str:
        calls.append("step")
        return "done"

    return SequentialAgent(
        name="team", sub_agents=[FunctionAgent(name="s", fn=step, output_key="o")]
    )


@pytest.mark.parametrize(
    ("thread", "says"),
    [
        ("t\udcff", "is not valid Unicode (a lone surrogate at character 1"),
        ("a\nb", r"holds a control character ('\n' at character 1)"),
        ("\x1b]0;owned\x07", r"holds a control character ('\x1b' at character 0)"),
        (
            "x" * (MAX_THREAD_ID + 1),
            f"is {MAX_THREAD_ID + 1} characters long (at most {MAX_THREAD_ID})",
        ),
    ],
    ids=["surrogate", "newline", "escape", "too-long"],
)
def test_a_thread_id_no_store_or_command_can_carry_is_refused_before_anything_runs(
    tmp_path: Path, thread: str, says: str
) -> None:
    calls: list[str] = []
    team = _team(calls)
    url = f"sqlite:///{tmp_path}/runs.db"
    with pytest.raises(InputError) as caught:
        team.invoke("go", thread_id=thread, checkpointer=url)
    assert says in str(caught.value)
    with pytest.raises(InputError):
        list(team.stream("go", thread_id=thread, checkpointer=url))
    with pytest.raises(InputError):
        team.get_state(thread, checkpointer=url)
    with pytest.raises(InputError):
        team.resume(thread, checkpointer=url)
    assert calls == []


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_longest_thread_id_works_on_every_store(kind: str, tmp_path: Path) -> None:
    url = store_url(kind, tmp_path)
    thread = ("limits-" + secrets.token_hex(MAX_THREAD_ID))[:MAX_THREAD_ID]  # incompressible
    calls: list[str] = []
    team = _team(calls)
    assert team.invoke("go", thread_id=thread, checkpointer=url)["o"] == "done"
    assert team.get_state(thread, checkpointer=url).values["o"] == "done"
    assert thread in {r.thread_id for r in team.runs(checkpointer=url)}


def test_printable_unicode_thread_ids_are_fine(tmp_path: Path) -> None:
    team = _team([])
    url = f"sqlite:///{tmp_path}/runs.db"
    for thread in ("naïve run", "运行-1", "a/b:c d"):
        assert team.invoke("go", thread_id=thread, checkpointer=url)["o"] == "done"
