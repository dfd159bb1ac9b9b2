"""Issue 9, point 7: checkpoints are safe.

`allow_types` takes classes only and takes effect for savers that already exist; a crafted
checkpoint never calls a function on load; a value a checkpoint could not give back is refused
when it is written (naming agent, key and type), before its side effects could repeat; a tool
that calls `sys.exit` is a tool error; one corrupt checkpoint row does not hide the other runs.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import ormsgpack
import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_SINGLE_ARG, EXT_METHOD_SINGLE_ARG

from graphflow import FunctionAgent, ReactAgent, SequentialAgent
from graphflow.checkpoint import CheckpointTypeError, allow_types, safe_serializer
from graphflow.checkpoint.serde import allowed_types, disallow_types
from graphflow.exceptions import CheckpointStoreError, InputError, StateValueError, ToolError
from graphflow.testing import ScriptedChatModel, tool_call


@dataclass
class Reading:
    """A value some user code puts in state (not an output schema)."""

    sensor: str
    value: float


class Client:
    """Something no checkpoint can store (think: an HTTP client)."""


@pytest.mark.parametrize(
    "item",
    [os.system, os, ("os", "system"), ("posix", "system"), print, lambda: None, ("os", "path")],
    ids=["os.system", "module os", "('os','system')", "posix.system", "print", "lambda", "os.path"],
)
def test_allow_types_refuses_anything_but_a_class(item) -> None:
    before = allowed_types()
    with pytest.raises(TypeError, match="not a class|cannot be found") as caught:
        allow_types(item)
    assert "only classes can be allowed" in str(caught.value) or "pass the class" in str(
        caught.value
    )
    assert allowed_types() == before
    assert ("posix", "system") not in allowed_types() and ("os", "system") not in allowed_types()


def test_a_crafted_checkpoint_never_calls_os_system(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for code, extra in ((EXT_CONSTRUCTOR_SINGLE_ARG, []), (EXT_METHOD_SINGLE_ARG, ["system"])):
        args = ["os", "system", f"touch {marker}", *extra]
        blob = ormsgpack.packb({"value": ormsgpack.Ext(code, ormsgpack.packb(args))})
        with pytest.raises(CheckpointTypeError, match=r"checkpoint contains os\.system"):
            safe_serializer().loads_typed(("msgpack", blob))
        assert not marker.exists()


def _reading_team(calls, reading) -> SequentialAgent:
    def measure(state):
        calls.hit("measure")
        return reading

    return SequentialAgent(
        name="plant",
        sub_agents=[
            FunctionAgent(name="prep", fn=calls.step("prep"), output_key="notes"),
            FunctionAgent(name="measure", fn=measure, output_key="reading"),
        ],
    )


def test_allow_types_takes_effect_for_a_saver_that_already_exists(store, calls) -> None:
    team = _reading_team(calls, Reading(sensor="t1", value=21.5))
    team.compile(checkpointer=store)  # the saver (and its serializer) is built here
    with pytest.raises(StateValueError) as caught:
        team.invoke("go", thread_id="t")
    message = str(caught.value)
    assert caught.value.agent == "measure"
    assert "Agent `measure`" in message and "`reading`" in message
    assert f"{__name__}.Reading" in message
    assert "allow_types(TheClass)" in message  # the fix
    assert team.get_state("t").values["notes"] == "PREP"  # what ran before is stored
    try:
        allow_types(Reading)
        state = team.resume("t")  # the same agent, the same saver
        assert state["reading"] == Reading(sensor="t1", value=21.5)
        assert team.get_state("t").values["reading"] == Reading(sensor="t1", value=21.5)
    finally:
        disallow_types(Reading)
    assert (calls["prep"], calls["measure"]) == (1, 2)


@pytest.mark.parametrize(
    ("value", "where"),
    [
        (lambda x: x, "reading: builtins.function"),
        (Client(), f"reading: {__name__}.Client"),
        ({"rows": [1, Client()]}, f"reading['rows'][1]: {__name__}.Client"),
        (sys, "reading: builtins.module"),
    ],
    ids=["lambda", "object", "nested object", "module"],
)
def test_an_unstorable_function_result_is_refused_when_written(store, calls, value, where) -> None:
    team = _reading_team(calls, value)
    with pytest.raises(StateValueError) as caught:
        team.invoke("go", thread_id="t", checkpointer=store)
    message = str(caught.value)
    assert f"Agent `measure`: its function wrote {where} to state key `reading`" in message
    # the refused value never reached the store, and what is stored still loads
    state = team.get_state("t", checkpointer=store)
    assert state.values["notes"] == "PREP" and "reading" not in state.values
    assert [r.status for r in team.runs(checkpointer=store)] == ["failed"]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_tool_calling_sys_exit_is_a_tool_error_and_the_run_resumes(mode, store) -> None:
    exits = [3]

    @tool
    def shutdown(reason: str) -> str:
        """Stop something."""
        if exits:
            sys.exit(exits.pop())
        return f"stopped: {reason}"

    model = ScriptedChatModel(replies=[tool_call("shutdown", {"reason": "maintenance"}), "ok"])
    agent = ReactAgent(name="ops", model=model, tools=[shutdown], output_key="out")
    team = SequentialAgent(name="team", sub_agents=[agent])
    with pytest.raises(ToolError) as caught:
        if mode == "sync":
            team.invoke("go", thread_id="t", checkpointer=store)
        else:
            await team.ainvoke("go", thread_id="t", checkpointer=store)
    assert not isinstance(caught.value, SystemExit)
    assert "sys.exit(3)" in str(caught.value) and caught.value.tool == "shutdown"
    assert caught.value.error_type == "UNKNOWN"
    state = team.resume("t") if mode == "sync" else await team.aresume("t")
    assert state["out"] == "ok"
    assert model.calls == 2  # the model's tool call was not asked for again


def test_a_corrupt_checkpoint_row_is_listed_unreadable_and_hides_nothing(
    store, db: Path, calls
) -> None:
    team = _reading_team(calls, 1.5)
    for thread in ("good-1", "bad", "good-2"):
        team.invoke("go", thread_id=thread, checkpointer=store)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE checkpoints SET checkpoint = X'c1c1c1c1' WHERE thread_id = 'bad' AND "
            "checkpoint_id = (SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = 'bad' "
            "AND checkpoint_ns = '')"
        )
    fresh = _reading_team(calls, 1.5)  # a new process, as it were
    runs = {r.thread_id: r for r in fresh.runs(checkpointer=store)}
    assert set(runs) == {"good-1", "bad", "good-2"}
    assert runs["good-1"].status == runs["good-2"].status == "done"
    assert runs["bad"].status == "unreadable" and runs["bad"].error.startswith("cannot load:")
    assert fresh.get_state("good-2", checkpointer=store).values["reading"] == 1.5


def test_a_checkpoint_holding_a_forbidden_type_is_listed_unreadable_and_never_run(
    store, db: Path, calls, tmp_path: Path
) -> None:
    team = _reading_team(calls, 1.5)
    team.invoke("go", thread_id="good", checkpointer=store)
    team.invoke("go", thread_id="evil", checkpointer=store)
    marker = tmp_path / "pwned"
    serde = safe_serializer()
    with sqlite3.connect(db) as conn:
        cid, kind, blob = conn.execute(
            "SELECT checkpoint_id, type, checkpoint FROM checkpoints WHERE thread_id = 'evil' "
            "AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1"
        ).fetchone()
        checkpoint = serde.loads_typed((kind, blob))
        payload = ormsgpack.packb(["os", "system", f"touch {marker}"])
        checkpoint["channel_values"]["notes"] = ormsgpack.Ext(EXT_CONSTRUCTOR_SINGLE_ARG, payload)
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'evil' AND checkpoint_id = ?",
            (ormsgpack.packb(checkpoint), cid),
        )
    runs = {r.thread_id: r for r in team.runs(checkpointer=store)}
    assert runs["good"].status == "done"
    assert runs["evil"].status == "unreadable" and "os.system" in runs["evil"].error
    with pytest.raises(CheckpointTypeError):
        team.get_state("evil", checkpointer=store)
    assert not marker.exists()


@pytest.mark.parametrize("damaged", ["checkpoint", "pending write"])
async def test_a_damaged_row_is_one_store_error_naming_the_thread_from_every_method(
    store, db: Path, calls, damaged: str
) -> None:
    team = _reading_team(calls, 1.5)
    for thread in ("good", "bad"):
        team.invoke("go", thread_id=thread, checkpointer=store)
    with sqlite3.connect(db) as conn:
        if damaged == "checkpoint":
            conn.execute(
                "UPDATE checkpoints SET checkpoint = X'c1c1c1' WHERE thread_id = 'bad' "
                "AND checkpoint_ns = ''"
            )
        else:
            conn.execute("UPDATE writes SET value = X'c1c1c1' WHERE thread_id = 'bad'")
    fresh = _reading_team(calls, 1.5)
    attempts = {
        "get_state": lambda: fresh.get_state("bad", checkpointer=store),
        "history": lambda: fresh.history("bad", checkpointer=store),
        "resume": lambda: fresh.resume("bad", checkpointer=store),
        "invoke": lambda: fresh.invoke("again", thread_id="bad", checkpointer=store),
    }
    for method, attempt in attempts.items():
        with pytest.raises(CheckpointStoreError) as caught:  # not the decoder's ValueError
            attempt()
        message = str(caught.value)
        assert f"checkpoint store {store}: a checkpoint of thread 'bad' cannot be loaded" in (
            message
        ), method
        assert "damaged" in message and "new thread id" in message and "\n" not in message
    with pytest.raises(CheckpointStoreError, match="thread 'bad' cannot be loaded"):
        await fresh.ainvoke("again", thread_id="bad", checkpointer=store)
    with pytest.raises(CheckpointStoreError, match="thread 'bad' cannot be loaded"):
        await fresh.aresume("bad", checkpointer=store)
    # the damage stays with that thread
    runs = {r.thread_id: r.status for r in fresh.runs(checkpointer=store)}
    assert runs == {"good": "done", "bad": "unreadable"}
    assert fresh.get_state("good", checkpointer=store).values["reading"] == 1.5
    assert fresh.invoke("more", thread_id="good", checkpointer=store)["reading"] == 1.5


@pytest.mark.parametrize("url", ["memory:", "sqlite"])
@pytest.mark.parametrize(
    ("value", "where"),
    [
        (Client(), f"obj: {__name__}.Client"),
        (lambda: None, "obj: builtins.function"),
        ({"rows": [Client()]}, f"obj['rows'][0]: {__name__}.Client"),
    ],
    ids=["object", "lambda", "nested"],
)
def test_an_unstorable_input_value_is_refused_naming_its_key(
    store, calls, url, value, where
) -> None:
    url = store if url == "sqlite" else url
    team = SequentialAgent(
        name="team",
        input_keys=["obj"],
        sub_agents=[FunctionAgent(name="prep", fn=calls.step("prep"), output_key="notes")],
    )
    for attempt in (
        lambda: team.invoke({"input": "go", "obj": value}, thread_id="t", checkpointer=url),
        lambda: asyncio.run(
            team.ainvoke({"input": "go", "obj": value}, thread_id="t", checkpointer=url)
        ),
    ):
        with pytest.raises(InputError) as caught:  # (was LangGraph's bare TypeError)
            attempt()
        message = str(caught.value)
        assert f"the input's {where} cannot be stored in a checkpoint" in message
        assert "allow_types(TheClass)" in message
    assert calls["prep"] == 0 and team.runs(checkpointer=url) == []
    reading = Reading(sensor="t1", value=2.0)
    with pytest.raises(InputError, match=f"obj: {__name__}.Reading"):
        team.invoke({"input": "go", "obj": reading}, thread_id="t", checkpointer=url)
    try:
        allow_types(Reading)  # the fix the message names, for a class a checkpoint can hold
        state = team.invoke({"input": "go", "obj": reading}, thread_id="t", checkpointer=url)
        assert state["notes"] == "PREP" and team.get_state("t").values["obj"] == reading
    finally:
        disallow_types(Reading)


def test_an_unstorable_value_on_an_input_message_is_refused(store, calls) -> None:
    from langchain_core.messages import HumanMessage

    team = SequentialAgent(
        name="team",
        sub_agents=[FunctionAgent(name="prep", fn=calls.step("prep"), output_key="notes")],
    )
    message = HumanMessage("go", additional_kwargs={"client": Client()})
    with pytest.raises(InputError) as caught:  # (was LangGraph's bare TypeError)
        team.invoke([message], thread_id="t", checkpointer=store)
    assert f"messages[0].additional_kwargs['client']: {__name__}.Client" in str(caught.value)
    assert calls["prep"] == 0
    fine = HumanMessage("go", additional_kwargs={"source": "mail"})
    assert team.invoke([fine], thread_id="t", checkpointer=store)["notes"] == "PREP"
