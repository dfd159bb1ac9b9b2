"""The hand-off contract: what a sub-agent is sent, and what it hands back to its parent."""

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from graphflow import (
    FunctionAgent,
    LoopAgent,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
    is_instruction,
)
from graphflow.messages import instruction_agent
from graphflow.testing import ScriptedChatModel, tool_call
from tests.support.helpers import assert_tool_pairs_intact, search


def _pipeline(search_tool, *, include_contents="default", return_reasoning_contents=False):
    m1 = ScriptedChatModel(replies=[tool_call("search", {"query": "Pura X"}), "Pura X facts"])
    m2 = ScriptedChatModel(replies=["Draft"])
    researcher = ReactAgent(
        name="researcher",
        model=m1,
        tools=[search_tool],
        instruction="Research {input}.",
        output_key="research_data",
        return_reasoning_contents=return_reasoning_contents,
    )
    writer = ReactAgent(
        name="writer",
        model=m2,
        system_prompt="You write.",
        instruction="Write from {research_data}.",
        output_key="draft",
        include_contents=include_contents,
    )
    return SequentialAgent(name="pipeline", sub_agents=[researcher, writer]), m1, m2


def test_default_contents_sends_parent_conversation_plus_instruction(search_tool):
    pipeline, m1, m2 = _pipeline(search_tool)
    result = pipeline.invoke("Huawei Pura X")

    sent = m2.requests[0]
    assert [type(m) for m in sent] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert sent[0].content == "You write."
    assert sent[1].content == "Huawei Pura X" and not is_instruction(sent[1])
    assert sent[2].content == "Pura X facts" and sent[2].name == "researcher"
    assert not sent[2].tool_calls
    assert is_instruction(sent[3]) and sent[3].content == "Write from Pura X facts."
    assert instruction_agent(sent[3]) == "writer"
    # the researcher's instruction, tool call and tool result did not leak to the writer
    assert not any(isinstance(m, ToolMessage) for m in sent)
    assert sum(is_instruction(m) for m in sent) == 1

    assert result["research_data"] == "Pura X facts"
    assert result["draft"] == "Draft"


def test_none_contents_sends_only_system_prompt_and_instruction(search_tool):
    pipeline, _, m2 = _pipeline(search_tool, include_contents="none")
    pipeline.invoke("Huawei Pura X")
    sent = m2.requests[0]
    assert [type(m) for m in sent] == [SystemMessage, HumanMessage]
    assert sent[0].content == "You write."
    assert is_instruction(sent[1]) and sent[1].content == "Write from Pura X facts."


def test_parent_gets_only_final_message_by_default(search_tool):
    pipeline, m1, _ = _pipeline(search_tool)
    result = pipeline.invoke("Huawei Pura X")
    messages = result["messages"]
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, AIMessage]
    user, research, draft = messages
    assert user.content == "Huawei Pura X" and not is_instruction(user)
    assert (research.content, research.name) == ("Pura X facts", "researcher")
    assert (draft.content, draft.name) == ("Draft", "writer")
    assert not research.tool_calls and not draft.tool_calls
    assert not any(is_instruction(m) for m in messages)
    # the researcher itself did see its tool loop
    assert isinstance(m1.requests[1][-1], ToolMessage)


def test_none_contents_does_not_drop_parent_messages(search_tool):
    pipeline, _, _ = _pipeline(search_tool, include_contents="none")
    result = pipeline.invoke("Huawei Pura X")
    assert [m.content for m in result["messages"]] == ["Huawei Pura X", "Pura X facts", "Draft"]


def test_return_reasoning_contents_hands_back_everything(search_tool):
    pipeline, _, m2 = _pipeline(search_tool, return_reasoning_contents=True)
    result = pipeline.invoke("Huawei Pura X")
    messages = result["messages"]
    assert [type(m) for m in messages] == [
        HumanMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
        AIMessage,
        AIMessage,
    ]
    user, instruction, calling, tool_result, final, draft = messages
    assert not is_instruction(user)
    assert is_instruction(instruction) and instruction.content == "Research Huawei Pura X."
    assert calling.tool_calls[0]["name"] == "search"
    assert tool_result.tool_call_id == calling.tool_calls[0]["id"]
    assert tool_result.content == "results for Pura X"
    assert final.content == "Pura X facts"
    assert draft.content == "Draft" and draft.name == "writer"
    # and the next agent is sent that reasoning too (include_contents="default")
    assert [type(m) for m in m2.requests[0][1:5]] == [
        HumanMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
    ]


def test_root_react_string_input_sets_input_key_and_user_message():
    model = ScriptedChatModel(replies=["hi there"])
    result = ReactAgent(name="solo", model=model, output_key="answer").invoke("hello")
    assert result["input"] == "hello"
    assert isinstance(result["messages"][0], HumanMessage)
    assert result["messages"][0].content == "hello"
    assert not is_instruction(result["messages"][0])
    assert result["answer"] == "hi there"
    assert [m.content for m in model.requests[0]] == ["hello"]


@pytest.mark.parametrize(
    "given",
    [
        "Pura X",
        HumanMessage(content="Pura X"),
        [HumanMessage(content="Pura X")],
        {"input": "Pura X"},
    ],
    ids=["string", "message", "list", "dict"],
)
def test_input_forms(given):
    model = ScriptedChatModel(replies=["ok"])
    agent = ReactAgent(name="solo", model=model, instruction="About {input}.", output_key="o")
    result = agent.invoke(given)
    assert result["input"] == "Pura X"
    sent = model.requests[0]
    assert [m.content for m in sent] == ["Pura X", "About Pura X."]
    assert not is_instruction(sent[0]) and is_instruction(sent[1])


def test_list_input_keeps_the_whole_conversation():
    model = ScriptedChatModel(replies=["ok"])
    history = [
        HumanMessage(content="first"),
        AIMessage(content="answer"),
        HumanMessage(content="second"),
    ]
    result = ReactAgent(name="solo", model=model).invoke(history)
    assert result["input"] == "second"
    assert [m.content for m in model.requests[0]] == ["first", "answer", "second"]


def test_dict_input_with_declared_input_keys():
    model = ScriptedChatModel(replies=["ok"])
    agent = ReactAgent(
        name="solo",
        model=model,
        instruction="Write about {topic} for {audience}.",
        input_keys=["topic", "audience"],
        output_key="o",
    )
    result = agent.invoke({"topic": "foldables", "audience": "buyers"})
    assert result["topic"] == "foldables"
    sent = model.requests[0]
    assert len(sent) == 1 and is_instruction(sent[0])
    assert sent[0].content == "Write about foldables for buyers."


# -- return_reasoning_contents inside a parallel and a loop --------------------------------------


def test_reasoning_contents_inside_parallel_keeps_tool_pairs() -> None:
    model = ScriptedChatModel(replies=[tool_call("search", {"query": "x"}), "final r"])
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            ReactAgent(
                name="reasoner",
                model=model,
                tools=[search],
                instruction="Research.",
                output_key="r_out",
                return_reasoning_contents=True,
            ),
            FunctionAgent(name="fn", fn=lambda s: "v", output_key="f_out"),
        ],
    )
    messages = fan.invoke("go", checkpointer=False)["messages"]
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["HumanMessage", "HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert is_instruction(messages[1])
    assert_tool_pairs_intact(messages)


def test_reasoning_contents_inside_loop_keeps_tool_pairs() -> None:
    model = ScriptedChatModel(
        fn=lambda m, n: tool_call("search", {"query": str(n)}) if n % 2 == 0 else f"final {n}"
    )
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            ReactAgent(
                name="worker",
                model=model,
                tools=[search],
                instruction="Pass {loop_iteration}.",
                output_key="w",
                return_reasoning_contents=True,
            )
        ],
        max_iterations=2,
    )
    result = SequentialAgent(name="outer", sub_agents=[loop]).invoke("go", checkpointer=False)
    messages = result["messages"]
    assert_tool_pairs_intact(messages)
    assert [m.content for m in messages if isinstance(m, AIMessage) and not m.tool_calls] == [
        "final 1",
        "final 3",
    ]
    assert [m.content for m in messages if is_instruction(m)] == ["Pass 0.", "Pass 1."]
