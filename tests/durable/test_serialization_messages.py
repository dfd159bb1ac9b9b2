"""Instruction messages and structured outputs survive every checkpointer's serializer."""

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import BaseModel

from graphflow import FunctionAgent, ParallelAgent, ReactAgent, SequentialAgent, is_instruction
from graphflow.messages import INSTRUCTION_MARK, instruction_agent, instruction_message
from graphflow.testing import ScriptedChatModel


class Verdict(BaseModel):
    title: str
    score: int


def _researcher(model):
    return ReactAgent(
        name="researcher", model=model, instruction="Research {input}.", output_key="research_data"
    )


def _rater(model):
    return ReactAgent(name="rater", model=model, output_schema=Verdict, output_key="verdict")


def _assert_instruction_intact(messages, *, agent="researcher", text="Research Pura X."):
    found = [m for m in messages if is_instruction(m)]
    assert len(found) == 1
    message = found[0]
    assert type(message) is HumanMessage
    assert message.content == text
    assert message.additional_kwargs == {INSTRUCTION_MARK: agent}
    assert instruction_agent(message) == agent


def test_instruction_message_shape():
    message = instruction_message("Do it.", agent="writer")
    assert is_instruction(message)
    assert not is_instruction(HumanMessage(content="Do it."))
    assert instruction_agent(message) == "writer"


def test_serializer_roundtrip_of_instruction_message():
    saver = InMemorySaver()
    message = instruction_message("Do it.", agent="writer", id="m1")
    restored = saver.serde.loads_typed(saver.serde.dumps_typed(message))
    assert restored == message
    assert is_instruction(restored)


def test_inmemory_saver_roundtrip():
    saver = InMemorySaver()
    _researcher(ScriptedChatModel(replies=["facts"])).invoke(
        "Pura X", thread_id="t1", checkpointer=saver
    )
    fresh = _researcher(ScriptedChatModel(replies=[]))
    values = fresh.get_state("t1", checkpointer=saver).values
    _assert_instruction_intact(values["messages"])
    assert values["research_data"] == "facts"


def test_sqlite_url_roundtrip_in_a_fresh_agent(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    result = _researcher(ScriptedChatModel(replies=["facts"])).invoke(
        "Pura X", thread_id="t1", checkpointer=url
    )
    _assert_instruction_intact(result["messages"])

    fresh = _researcher(ScriptedChatModel(replies=[]))
    graph = fresh.compile(url).graph
    values = graph.get_state({"configurable": {"thread_id": "t1"}}).values
    _assert_instruction_intact(values["messages"])
    assert values["research_data"] == "facts"
    assert values["input"] == "Pura X"
    assert not is_instruction(values["messages"][0])


def test_sqlite_saver_instance_roundtrip_of_reasoning_contents(tmp_path):
    path = tmp_path / "runs.db"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        researcher = _researcher(ScriptedChatModel(replies=["facts"])).model_copy(
            update={"return_reasoning_contents": True}
        )
        writer = ReactAgent(
            name="writer",
            model=ScriptedChatModel(replies=["draft"]),
            instruction="Write from {research_data}.",
            output_key="draft",
            return_reasoning_contents=True,
        )
        SequentialAgent(name="pipeline", sub_agents=[researcher, writer]).invoke(
            "Pura X", thread_id="t2", checkpointer=saver
        )
    with SqliteSaver.from_conn_string(str(path)) as saver:
        fresh = SequentialAgent(
            name="pipeline",
            sub_agents=[
                _researcher(ScriptedChatModel(replies=[])),
                ReactAgent(
                    name="writer",
                    model=ScriptedChatModel(replies=[]),
                    instruction="Write from {research_data}.",
                    output_key="draft",
                ),
            ],
        )
        values = fresh.get_state("t2", checkpointer=saver).values
    instructions = [m for m in values["messages"] if is_instruction(m)]
    assert [instruction_agent(m) for m in instructions] == ["researcher", "writer"]
    assert [m.content for m in instructions] == ["Research Pura X.", "Write from facts."]
    assert [m.content for m in values["messages"]] == [
        "Pura X",
        "Research Pura X.",
        "facts",
        "Write from facts.",
        "draft",
    ]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_structured_output_roundtrips(tmp_path, backend):
    checkpointer = InMemorySaver() if backend == "memory" else f"sqlite:///{tmp_path}/runs.db"
    reply = '{"title": "Pura X", "score": 9}'
    result = _rater(ScriptedChatModel(replies=[reply])).invoke(
        "rate", thread_id="t3", checkpointer=checkpointer
    )
    assert result["verdict"] == Verdict(title="Pura X", score=9)

    values = _rater(ScriptedChatModel(replies=[])).get_state("t3", checkpointer=checkpointer).values
    assert values["verdict"] == Verdict(title="Pura X", score=9)
    assert isinstance(values["verdict"], Verdict)


class Spec(BaseModel):
    name: str
    score: int


def test_structured_output_in_parallel_merged_dict_round_trips_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"

    def build() -> ParallelAgent:
        model = ScriptedChatModel(replies=[Spec(name="x", score=3)])
        return ParallelAgent(
            name="fan",
            sub_agents=[
                ReactAgent(name="s", model=model, output_schema=Spec, output_key="spec"),
                FunctionAgent(name="f", fn=lambda s: 5, output_key="n"),
            ],
            output_key="merged",
        )

    result = build().invoke("go", thread_id="so", checkpointer=url)
    assert result["merged"] == {"spec": Spec(name="x", score=3), "n": 5}
    values = build().get_state("so", checkpointer=url).values
    assert isinstance(values["merged"]["spec"], Spec)
    assert values["merged"]["spec"] == Spec(name="x", score=3)
