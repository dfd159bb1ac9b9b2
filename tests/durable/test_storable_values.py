"""Values that load back, on every store: checked before they are committed, the same way.

On memory, SQLite and PostgreSQL: a value a checkpoint could not load back is refused when it is
written (nothing is committed); `allow_types` works for every kind of class it accepts —
dataclasses, pydantic models, enums, in state and in tool artifacts — and refuses a plain class
when called (the resume used to die with `TypeError: Type is not msgpack serializable`); a
finished run reads back; a tool whose artifact cannot be stored gets a typed error result instead
of failing its step (and running its side effect again on every resume).
"""

from __future__ import annotations

import dataclasses
import enum
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel
from typing_extensions import TypedDict

from graphflow import ReactAgent, SequentialAgent, StateValueError
from graphflow.checkpoint import allow_types, resolve_checkpointer
from graphflow.checkpoint.leases import FENCE_KEY, hold, lease_store
from graphflow.checkpoint.serde import disallow_types
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.tools import tool_result
from tests.support.helpers import made_then_after
from tests.support.stores import store_url

STORES = ["memory", "sqlite", "postgres"]


@dataclasses.dataclass
class Reading:
    value: int


@dataclasses.dataclass
class Wrapped:
    inner: Reading


class Report(BaseModel):
    title: str


class Level(enum.Enum):
    LOW = 1


class Plain:
    def __init__(self, z: int) -> None:
        self.z = z


class Client:
    """Something no checkpoint can hold (a connection)."""


@pytest.mark.parametrize("value", [Reading(1), Report(title="t")], ids=["dataclass", "pydantic"])
@pytest.mark.parametrize("kind", STORES)
def test_a_value_not_on_the_allowlist_is_refused_when_written_on_every_store(
    kind: str, value: Any, tmp_path: Path
) -> None:
    url = store_url(kind, tmp_path)
    thread = f"refused-{uuid.uuid4().hex[:8]}"
    calls: list[str] = []
    team = made_then_after(value, calls)
    with pytest.raises(StateValueError, match=rf"`make`.*{type(value).__name__}.*`made`"):
        team.invoke("go", thread_id=thread, checkpointer=url)
    assert calls == ["make"]  # the next agent never ran on a value it could not load
    state = team.get_state(thread, checkpointer=url)  # what was committed reads back
    assert "made" not in state.values


@pytest.mark.parametrize(
    "value",
    [Reading(1), Wrapped(inner=Reading(2)), Report(title="t"), Level.LOW],
    ids=["dataclass", "nested-dataclass", "pydantic", "enum"],
)
@pytest.mark.parametrize("kind", STORES)
def test_allowed_classes_round_trip_and_a_finished_run_reads_back(
    kind: str, value: Any, tmp_path: Path
) -> None:
    url = store_url(kind, tmp_path)
    thread = f"allowed-{uuid.uuid4().hex[:8]}"
    allow_types(type(value))
    try:
        calls: list[str] = []
        team = made_then_after(value, calls)
        assert team.invoke("go", thread_id=thread, checkpointer=url)["made"] == value
        reader = team if kind == "memory" else made_then_after(None, [])  # another process's view
        loaded = reader.get_state(thread, checkpointer=url).values["made"]
        assert loaded == value and type(loaded) is type(value)
        assert calls == ["make", "after"]
    finally:
        disallow_types(type(value), Reading)


def test_allow_types_refuses_a_plain_class_when_called() -> None:
    with pytest.raises(TypeError, match=r"Plain is a plain class.*@dataclass or a pydantic model"):
        allow_types(Plain)
    with pytest.raises(TypeError, match="plain class"):
        allow_types((__name__, "Plain"))


@pytest.mark.parametrize("kind", STORES)
def test_an_allowed_dataclass_holding_an_unstorable_object_is_refused_when_written(
    kind: str, tmp_path: Path
) -> None:
    url = store_url(kind, tmp_path)
    allow_types(Reading)
    try:
        team = made_then_after(Reading(value=Client()), [])  # type: ignore[arg-type]
        with pytest.raises(StateValueError, match=r"made\.value: .*Client"):
            team.invoke("go", thread_id=f"inner-{uuid.uuid4().hex[:8]}", checkpointer=url)
    finally:
        disallow_types(Reading)


@pytest.mark.parametrize("kind", STORES)
def test_dataclass_and_pydantic_tool_artifacts_are_stored_as_their_data(
    kind: str, tmp_path: Path
) -> None:
    # a message is stored as its pydantic dump: an artifact comes back as plain data, whatever
    # its class (allowed or not) — it is never refused, and the run reads back
    url = store_url(kind, tmp_path)
    thread = f"artifact-{uuid.uuid4().hex[:8]}"

    @tool(response_format="content_and_artifact")
    def measure(probe: str) -> tuple[str, Any]:
        """Measure something."""
        return f"measured {probe}", {"reading": Reading(7), "report": Report(title="r")}

    agent = ReactAgent(
        name="ops",
        model=ScriptedChatModel(replies=[tool_call("measure", {"probe": "p1"}), "done"]),
        tools=[measure],
        output_key="out",
    )
    assert agent.invoke("go", thread_id=thread, checkpointer=url)["out"] == "done"
    messages = agent.get_state(thread, checkpointer=url).values["messages"]
    [result] = [m for m in messages if isinstance(m, ToolMessage)]
    assert result.status == "success"
    assert result.artifact == {"reading": {"value": 7}, "report": {"title": "r"}}


@pytest.mark.parametrize("kind", STORES)
def test_a_tool_whose_artifact_cannot_be_stored_gets_a_typed_error_result(
    kind: str, tmp_path: Path
) -> None:
    url = store_url(kind, tmp_path)
    thread = f"unstorable-{uuid.uuid4().hex[:8]}"
    effects: list[str] = []

    @tool(response_format="content_and_artifact")
    def connect(host: str) -> tuple[str, Client]:
        """Open a connection."""
        effects.append(host)
        return f"connected to {host}", Client()

    ops = ReactAgent(
        name="ops",
        model=ScriptedChatModel(replies=[tool_call("connect", {"host": "db1"}), "done"]),
        tools=[connect],
        output_key="out",
        return_reasoning_contents=True,
    )
    team = SequentialAgent(name="team", sub_agents=[ops])
    assert team.invoke("go", thread_id=thread, checkpointer=url)["out"] == "done"
    assert effects == ["db1"]  # the side effect happened once, and the run went on
    # the model was told why, with the text result it can still use
    sent = ops.model.requests[-1][-1]
    assert isinstance(sent, ToolMessage) and sent.status == "error"
    assert "Error [UNKNOWN] in tool `connect`" in sent.text
    assert f"artifact: {__name__}.Client" in sent.text and "cannot store" in sent.text
    assert "connected to db1" in sent.text
    stored = [
        m
        for m in team.get_state(thread, checkpointer=url).values["messages"]
        if isinstance(m, ToolMessage)
    ]
    assert stored[0].artifact is None
    result = tool_result(stored[0])
    assert result is not None and not result.success and result.error_type == "UNKNOWN"


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_write_from_outside_graphflow_strategies_is_checked_by_the_saver(
    kind: str, tmp_path: Path
) -> None:
    # a node graphflow did not build (a custom strategy, a tool's Command): the saver itself
    # refuses the value before it is committed
    class S(TypedDict, total=False):
        made: Any

    builder = StateGraph(S)
    builder.add_node("custom", lambda s: {"made": Reading(3)})
    builder.add_edge(START, "custom")
    builder.add_edge("custom", END)
    url = store_url(kind, tmp_path)
    saver = resolve_checkpointer(url)
    graph = builder.compile(checkpointer=saver)
    store = lease_store(url, saver)
    with hold(store, "raw", store_name=url) as fence:
        config: Any = {"configurable": {"thread_id": "raw", FENCE_KEY: fence}}
        with pytest.raises(StateValueError, match=r"made: .*Reading"):
            graph.invoke({}, config, durability="sync")
    assert "made" not in graph.get_state({"configurable": {"thread_id": "raw"}}).values
    assert isinstance(saver, InMemorySaver) == (kind == "memory")
