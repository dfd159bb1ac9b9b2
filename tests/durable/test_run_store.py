"""Issue 9, point 1: where runs are stored is never a surprise; bad run requests are clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from graphflow import FunctionAgent, HumanApproval, ReactAgent, SequentialAgent
from graphflow.exceptions import (
    CheckpointStoreError,
    GraphflowConfigError,
    InputError,
    RunNotFoundError,
    RunStateError,
)
from graphflow.testing import ScriptedChatModel, tool_call


def _team(calls, **options) -> SequentialAgent:
    writer = ReactAgent(
        name="writer",
        model=ScriptedChatModel(fn=lambda messages, n: f"draft {n}"),
        instruction="Write about {input}.",
        output_key="draft",
    )
    return SequentialAgent(
        name="team",
        sub_agents=[FunctionAgent(name="prep", fn=calls.step("prep"), output_key="notes"), writer],
        **options,
    )


def test_compile_with_a_url_then_invoke_stores_there(calls, db: Path, store, threads_in) -> None:
    team = _team(calls)
    team.compile(checkpointer=store)
    team.invoke("pumps", thread_id="t1")  # no checkpointer named: the compiled one
    assert threads_in(db) == ["t1"]
    # a crash-free resume path: the same (fresh) agent finds the run through the URL
    again = _team(calls)
    state = again.get_state("t1", checkpointer=store)
    assert state.values["draft"] == "draft 0" and state.values["notes"] == "PREP"
    # and every run method of the compiled agent keeps using that store
    assert [r.thread_id for r in team.runs()] == ["t1"]
    assert team.get_state("t1").values["draft"] == "draft 0"
    assert team.history("t1")
    team.invoke("valves", thread_id="t2")
    assert threads_in(db) == ["t1", "t2"]


def test_the_agent_field_names_the_store(calls, db: Path, store, threads_in) -> None:
    team = _team(calls, checkpointer=store)
    team.invoke("pumps", thread_id="field")
    assert threads_in(db) == ["field"]
    assert [r.thread_id for r in _team(calls, checkpointer=store).runs()] == ["field"]


def test_the_environment_names_the_store(
    calls, db: Path, store, threads_in, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHFLOW_CHECKPOINTER", store)
    _team(calls).invoke("pumps", thread_id="env")
    assert threads_in(db) == ["env"]
    # a second process (a fresh agent) resumes/inspects the run from the same variable
    assert _team(calls).get_state("env").values["draft"] == "draft 0"


def test_an_explicit_checkpointer_wins_and_memory_is_only_the_last_resort(
    calls, tmp_path: Path, store, db: Path, threads_in, no_checkpointer_env
) -> None:
    other = tmp_path / "other.db"
    team = _team(calls, checkpointer=store)
    team.invoke("pumps", thread_id="explicit", checkpointer=f"sqlite:///{other}")
    assert threads_in(other) == ["explicit"] and threads_in(db) == []
    plain = _team(calls)  # nothing configured anywhere: an in-memory saver kept by the agent
    plain.invoke("pumps", thread_id="mem")
    assert plain.get_state("mem").values["draft"] == "draft 0"
    assert [r.thread_id for r in plain.runs()] == ["mem"]


@pytest.mark.parametrize("method", ["resume", "get_state", "history"])
def test_an_unknown_thread_is_run_not_found_naming_thread_and_store(
    calls, store, method: str
) -> None:
    team = _team(calls)
    team.invoke("pumps", thread_id="known", checkpointer=store)
    with pytest.raises(RunNotFoundError) as caught:
        getattr(team, method)("ghost-thread")
    message = str(caught.value)
    assert "'ghost-thread'" in message and store in message
    assert "runs()" in message  # the fix: see which runs exist
    assert team.get_state("known").values["draft"] == "draft 0"  # nothing lost


def test_resume_of_a_finished_run_says_so(calls, store) -> None:
    team = _team(calls)
    team.invoke("pumps", thread_id="done", checkpointer=store)
    with pytest.raises(RunStateError, match=r"'done' has finished; there is nothing to resume"):
        team.resume("done")
    assert "invoke(input, thread_id='done')" in _message(lambda: team.resume("done"))
    assert calls["prep"] == 1  # nothing was re-run


def test_an_answer_when_nothing_is_pending_says_so(calls, store) -> None:
    team = _team(calls)
    team.invoke("pumps", thread_id="t", checkpointer=store)
    with pytest.raises(RunStateError, match=r"'t' is not waiting for an answer"):
        team.resume("t", {"decision": "approve"})
    assert calls["prep"] == 1


def test_an_answer_the_pending_interrupt_cannot_take_is_an_input_error(store) -> None:
    paid: list[int] = []

    @tool
    def pay(amount: int) -> str:
        """Pay an amount."""
        paid.append(amount)
        return f"paid {amount}"

    model = ScriptedChatModel(replies=[tool_call("pay", {"amount": 5}), "done"])
    payer = ReactAgent(
        name="payer", model=model, tools=[pay], hooks=[HumanApproval(["pay"])], output_key="out"
    )
    team = SequentialAgent(name="team", sub_agents=[payer])
    team.invoke("pay it", thread_id="p", checkpointer=store)
    with pytest.raises(InputError) as caught:  # bad input (the CLI's exit code 2), not a crash
        team.resume("p", {"decision": "perhaps"})
    assert "thread 'p'" in str(caught.value) and "'perhaps'" in str(caught.value)
    assert team.get_state("p").interrupts  # still waiting, nothing ran
    assert paid == [] and model.calls == 1
    assert team.resume("p", {"decision": "approve"})["out"] == "done" and paid == [5]


def test_invoke_none_on_a_new_thread_is_an_input_error(calls, store) -> None:
    team = _team(calls)
    team.compile(checkpointer=store)
    with pytest.raises(InputError) as caught:
        team.invoke(None, thread_id="fresh")
    assert "'fresh'" in str(caught.value) and store in str(caught.value)
    assert "pass an input" in str(caught.value)
    assert calls["prep"] == 0


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({}, "input dict is empty"),
        ([], "list is empty"),
        ("", "input string '' is empty"),
        (" \n\t", r"input string ' \\n\\t' is empty"),
    ],
    ids=["{}", "[]", "''", "whitespace"],
)
def test_empty_input_is_an_input_error(calls, store, value, says: str) -> None:
    team = _team(calls)
    with pytest.raises(InputError, match=says):
        team.invoke(value, thread_id="t", checkpointer=store)
    assert calls["prep"] == 0
    assert team.runs(checkpointer=store) == []  # the refused input left no run behind
    # what a non-empty input of that kind looks like
    good = {
        dict: {"input": "pumps"},
        list: [HumanMessage("pumps")],
        str: "pumps",
    }[type(value)]
    assert team.invoke(good, thread_id="t", checkpointer=store)["input"] == "pumps"
    if isinstance(value, str):  # an empty input on purpose: the dict form says so
        assert team.invoke({"input": ""}, thread_id="t2", checkpointer=store)["input"] == ""


def test_unknown_input_keys_are_refused_naming_the_known_ones(calls, store) -> None:
    team = _team(calls)
    with pytest.raises(InputError) as caught:
        team.invoke({"inptu": "pumps"}, thread_id="t", checkpointer=store)
    message = str(caught.value)
    assert "['inptu']" in message and "known keys:" in message
    known = message.split("known keys: ")[1].split(". ")[0].split(", ")
    # the keys a caller may pass, and nothing of LangGraph's internals
    assert {"input", "messages", "notes", "draft"} <= set(known)
    assert all(key.isidentifier() for key in known), known
    assert "input_keys=[...]" in message
    assert calls["prep"] == 0
    # the fix works: a declared input key is taken
    declared = _team(calls, input_keys=["audience"])
    state = declared.invoke(
        {"input": "pumps", "audience": "kids"}, thread_id="t", checkpointer=store
    )
    assert state["audience"] == "kids"


@pytest.mark.parametrize("thread_id", ["", "   "])
def test_an_empty_thread_id_is_an_input_error(calls, store, thread_id: str) -> None:
    team = _team(calls)
    with pytest.raises(InputError, match="cannot name a run"):
        team.invoke("pumps", thread_id=thread_id, checkpointer=store)
    with pytest.raises(InputError, match="cannot name a run"):
        team.resume(thread_id, checkpointer=store)
    assert calls["prep"] == 0


def _message(fn) -> str:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return str(exc)
    raise AssertionError("no error")


@pytest.mark.parametrize("method", ["resume", "get_state", "history"])
def test_reading_a_run_without_a_store_says_so(calls, method: str) -> None:
    team = _team(calls)
    team.invoke("pumps", thread_id="t", checkpointer=False)
    with pytest.raises(InputError) as caught:  # (was LangGraph's "No checkpointer set")
        getattr(team, method)("t", checkpointer=False)
    message = str(caught.value)
    assert f"{method} reads a stored run, but checkpointer=False stores none" in message
    assert "sqlite:///runs.db" in message


@pytest.mark.parametrize(
    ("value", "error", "says"),
    [
        ("bogus", GraphflowConfigError, "is not supported"),
        ("sqlite:///", GraphflowConfigError, "names no file"),
        ("sqlite:///{blocker}/runs.db", CheckpointStoreError, "is a file, not a folder"),
    ],
)
def test_a_bad_environment_store_names_the_variable(
    calls, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, error, says: str
) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file")
    url = value.format(blocker=blocker)
    monkeypatch.setenv("GRAPHFLOW_CHECKPOINTER", url)
    with pytest.raises(error) as caught:  # the URL came from nowhere the code shows
        _team(calls).invoke("pumps", thread_id="t")
    assert f"{url!r} (from GRAPHFLOW_CHECKPOINTER)" in str(caught.value) and says in str(
        caught.value
    )
    assert calls["prep"] == 0


def test_two_thread_ids_for_one_run_are_refused(calls, store) -> None:
    team = _team(calls)
    config = {"configurable": {"thread_id": "b"}}
    with pytest.raises(InputError, match=r"thread_id='a' and .*='b' name two threads"):
        team.invoke("pumps", thread_id="a", config=config, checkpointer=store)  # (ran on 'a')
    assert calls["prep"] == 0 and team.runs(checkpointer=store) == []
    same = {"configurable": {"thread_id": "a"}}
    assert team.invoke("pumps", thread_id="a", config=same, checkpointer=store)["notes"] == "PREP"
