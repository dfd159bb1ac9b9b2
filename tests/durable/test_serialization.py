"""Checkpoint serialization: round-trips through memory/SQLite(/PostgreSQL), and no code runs on load.

There is no `ToolResult` type in graphflow yet; tool results are LangChain `ToolMessage`s and are
covered here as such.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import os
import pickle
import re
import sqlite3
import uuid

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from graphflow import (
    CheckpointTypeError,
    FunctionAgent,
    ReactAgent,
    SequentialAgent,
    is_instruction,
)
from graphflow.checkpoint import GraphflowSerializer, allow_types, resolve_checkpointer
from graphflow.checkpoint.serde import disallow_types
from graphflow.exceptions import StateValueError
from graphflow.messages import instruction_agent
from graphflow.testing import ScriptedChatModel, tool_call
from tests.support.helpers import guarded_payer


class Score(BaseModel):
    value: int


class Verdict(BaseModel):
    title: str
    scores: list[Score]


@dataclasses.dataclass
class Opaque:
    payload: str


def _urls(tmp_path):
    urls = ["memory:", f"sqlite:///{tmp_path / 'runs.db'}"]
    pg = os.environ.get("GRAPHFLOW_TEST_POSTGRES_URL")
    if pg:
        urls.append(pg)
    return urls


def _pipeline():
    @tool
    def search(query: str) -> str:
        """Search."""
        return f"found {query}"

    researcher = ReactAgent(
        name="researcher",
        model=ScriptedChatModel(replies=[tool_call("search", {"query": "pura"}), "Pura facts"]),
        tools=[search],
        instruction="Research {input}.",
        output_key="research_data",
        return_reasoning_contents=True,
    )
    rater = ReactAgent(
        name="rater",
        model=ScriptedChatModel(replies=['{"title": "good", "scores": [{"value": 4}]}']),
        output_schema=Verdict,
        output_key="verdict",
        instruction="Rate {research_data}.",
    )
    return SequentialAgent(name="pipeline", sub_agents=[researcher, rater])


@pytest.mark.parametrize("which", [0, 1, 2], ids=["memory", "sqlite", "postgres"])
def test_messages_structured_outputs_and_tool_results_round_trip(tmp_path, which):
    urls = _urls(tmp_path)
    if which >= len(urls):
        pytest.skip("GRAPHFLOW_TEST_POSTGRES_URL is not set")
    url = urls[which]
    pipeline = _pipeline()
    thread = f"serde-{which}-{os.getpid()}-{tmp_path.name}"
    pipeline.invoke("Pura X", thread_id=thread, checkpointer=url)
    # a second agent object = a fresh process's view: everything comes from the store (an
    # in-memory saver belongs to its agent, and it too stores serialized bytes)
    reader = pipeline if url == "memory:" else _pipeline()
    loaded = reader.get_state(thread, checkpointer=url).values
    verdict = loaded["verdict"]
    assert isinstance(verdict, Verdict) and isinstance(verdict.scores[0], Score)
    assert verdict == Verdict(title="good", scores=[Score(value=4)])
    messages = loaded["messages"]
    instructions = [m for m in messages if is_instruction(m)]
    assert [instruction_agent(m) for m in instructions] == ["researcher"]
    assert instructions[0].content == "Research Pura X."
    tools = [m for m in messages if isinstance(m, ToolMessage)]
    assert tools and tools[0].content == "found pura" and tools[0].name == "search"
    assert any(isinstance(m, AIMessage) and m.tool_calls for m in messages)


def test_saver_serializer_is_strict_and_never_pickles(tmp_path):
    for url in ("memory:", f"sqlite:///{tmp_path / 'a.db'}"):
        saver = resolve_checkpointer(url, allowed_types=[Verdict])
        serde = saver.serde
        assert isinstance(serde, GraphflowSerializer)
        assert serde.pickle_fallback is False
        assert (Verdict.__module__, "Verdict") in serde.allowed
        assert (Score.__module__, "Score") in serde.allowed  # nested models come along
        assert ("langchain_core.messages.human", "HumanMessage") in serde.allowed
        with pytest.raises(NotImplementedError):
            serde.loads_typed(("pickle", pickle.dumps(Opaque("x"))))


def test_unknown_type_in_checkpoint_is_an_error_naming_it(tmp_path):
    serde = GraphflowSerializer()
    dumped = serde.dumps_typed({"x": [Opaque("secret")]})
    with pytest.raises(CheckpointTypeError, match=r"test_serialization\.Opaque") as info:
        serde.loads_typed(dumped)
    assert info.value.name == "Opaque"
    # LangGraph's own strict mode only logs and hands back the raw fields
    plain = JsonPlusSerializer(allowed_msgpack_modules=None)
    assert plain.loads_typed(dumped) == {"x": [{"payload": "secret"}]}
    # allowed types load as objects
    assert GraphflowSerializer([Opaque]).loads_typed(dumped) == {"x": [Opaque("secret")]}


def test_unknown_type_in_state_is_refused_when_written_and_allow_types_fixes_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"

    def build():
        return SequentialAgent(
            name="pipe",
            sub_agents=[FunctionAgent(name="make", fn=lambda s: Opaque("p"), output_key="thing")],
        )

    # refused when written (naming the agent, the key, the type and the fix), before any step
    # that a resume would have to repeat
    with pytest.raises(StateValueError, match=r"`make`.*thing: .*Opaque.*`thing`.*allow_types"):
        build().invoke("go", thread_id="t", checkpointer=url)
    allow_types(Opaque)
    try:
        build().invoke("go", thread_id="t2", checkpointer=url)
        assert build().get_state("t2", checkpointer=url).values["thing"] == Opaque("p")
    finally:
        disallow_types(Opaque)
    # a store written while the class was allowed is still never loaded blindly
    with pytest.raises(CheckpointTypeError, match="Opaque"):
        build().get_state("t2", checkpointer=url)


def test_loading_never_imports_or_calls_code(tmp_path):
    # a crafted checkpoint row naming os.system must not run it
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    pipeline = SequentialAgent(
        name="pipe", sub_agents=[FunctionAgent(name="f", fn=lambda s: "ok", output_key="out")]
    )
    pipeline.invoke("go", thread_id="t", checkpointer=url)
    import ormsgpack
    from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_POS_ARGS

    marker = tmp_path / "pwned"
    evil = ormsgpack.packb(
        {
            "out": ormsgpack.Ext(
                EXT_CONSTRUCTOR_POS_ARGS, ormsgpack.packb(["os", "system", [f"touch {marker}"]])
            )
        }
    )
    conn = sqlite3.connect(tmp_path / "runs.db")
    conn.execute("UPDATE writes SET value = ?, type = 'msgpack' WHERE channel = 'out'", (evil,))
    conn.commit()
    rows = conn.execute("SELECT count(*) FROM writes WHERE channel = 'out'").fetchone()[0]
    conn.close()
    assert rows >= 1
    fresh = SequentialAgent(
        name="pipe", sub_agents=[FunctionAgent(name="f", fn=lambda s: "ok", output_key="out")]
    )
    with pytest.raises(CheckpointTypeError, match="os.system"):
        fresh.invoke(None, thread_id="t", checkpointer=url)  # loads pending writes
        fresh.history("t", checkpointer=url, all_namespaces=True)
        for tup in fresh.compile(url).graph.checkpointer.list(None):
            _ = tup.pending_writes
    assert not marker.exists()


def test_instruction_message_round_trips_in_bare_serializer():
    from graphflow.messages import instruction_message

    serde = GraphflowSerializer()
    msg = instruction_message("Do it.", agent="writer")
    back = serde.loads_typed(serde.dumps_typed([msg, HumanMessage("hi")]))
    assert back[0] == msg and is_instruction(back[0]) and not is_instruction(back[1])


# -- values of other types, through SQLite and a resume ------------------------------------------


class Color(enum.Enum):
    RED = "red"


class Inner(BaseModel):
    x: int


class Outer(BaseModel):
    inner: Inner
    when: datetime.datetime


@dataclasses.dataclass
class Point:
    x: int


def _producer(value):
    approve = guarded_payer(1, output_key="po")
    return SequentialAgent(
        name="s",
        sub_agents=[FunctionAgent(name="f", fn=lambda s: value, output_key="out"), approve],
    )


WHEN = datetime.datetime(2024, 1, 2, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    "value",
    [WHEN, decimal.Decimal("1.50"), {1, 2}, uuid.UUID(int=7), b"raw"],
    ids=["datetime", "decimal", "set", "uuid", "bytes"],
)
def test_safe_values_round_trip_through_sqlite(tmp_path, value):
    url = f"sqlite:///{tmp_path}/r.db"
    _producer(value).invoke("go", thread_id="t", checkpointer=url)
    loaded = _producer(value).get_state("t", checkpointer=url).values["out"]
    assert loaded == value and type(loaded) is type(value)
    result = _producer(value).resume("t", {"decision": "approve"}, checkpointer=url)
    assert result["out"] == value


def test_tuple_comes_back_as_list(tmp_path):
    # documented msgpack behavior, surprising for users: a tuple is saved as a list
    url = f"sqlite:///{tmp_path}/r.db"
    _producer((1, "a")).invoke("go", thread_id="t", checkpointer=url)
    assert _producer(None).get_state("t", checkpointer=url).values["out"] == [1, "a"]


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (Color.RED, "Color"),
        (Outer(inner=Inner(x=1), when=WHEN), "(?:Outer|Inner)"),
        (Point(1), "Point"),
    ],
    ids=["enum", "pydantic", "dataclass"],
)
def test_unlisted_types_fail_at_load_naming_the_type(tmp_path, value, named):
    url = f"sqlite:///{tmp_path}/r.db"
    # written: refused at once, naming the agent, the key and the type
    with pytest.raises(StateValueError, match=rf"`f`.*out: .*{named}.*`out`"):
        _producer(value).invoke("go", thread_id="refused", checkpointer=url)
    # written while allowed, loaded after the class is taken off the allowlist: never loaded
    allow_types(type(value))
    try:
        first = _producer(value).invoke("go", thread_id="t", checkpointer=url)
        assert first["out"] == value
    finally:
        disallow_types(type(value), *([Inner] if isinstance(value, Outer) else []))
    for load in (
        lambda: _producer(value).get_state("t", checkpointer=url),
        lambda: _producer(value).resume("t", {"decision": "approve"}, checkpointer=url),
    ):
        with pytest.raises(CheckpointTypeError, match=rf"\.{named}\b.*allow_types\({named}\)"):
            load()
    run = next(r for r in _producer(value).runs(checkpointer=url) if r.thread_id == "t")
    assert run.status == "unreadable" and re.search(named, run.error or "")
