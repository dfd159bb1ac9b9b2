"""Issue 9, point 9: agent specs that cannot work are build-time errors; changed specs rebuild.

An agent containing itself (directly, or by a later reassignment) is a cycle error naming the
path; trees deeper than `MAX_DEPTH` fail with that limit (and trees up to it run); LangGraph's
reserved names are refused when the agent is defined; a model that is not a chat model, and
`"openai:"` without a model name, too. A sub-agent changed after its parent compiled — a field,
or the `sub_agents` list — is rebuilt, never served from the stale graph.
"""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake import FakeListLLM

from graphflow import FunctionAgent, LoopAgent, ParallelAgent, ReactAgent, SequentialAgent
from graphflow.exceptions import AgentSpecError, DataflowError, GraphflowConfigError
from graphflow.strategies.validation import MAX_DEPTH
from graphflow.testing import ScriptedChatModel


def _leaf(name: str = "leaf", value: str = "LEAF", key: str = "out") -> FunctionAgent:
    return FunctionAgent(name=name, fn=lambda state: value, output_key=key)


# -- cycles -------------------------------------------------------------------------------------


def test_an_agent_appended_to_its_own_sub_agents_is_a_cycle(store) -> None:
    team = SequentialAgent(name="team", sub_agents=[_leaf()])
    team.sub_agents.append(team)  # an in-place edit: no validation runs here
    for attempt in (team.compile, lambda: team.invoke("go", checkpointer=store), team.draw):
        with pytest.raises(DataflowError) as caught:
            attempt()
        assert "agent `team` contains itself (team → team)" in str(caught.value)
        assert "use a LoopAgent to repeat agents" in str(caught.value)


def test_a_cycle_made_by_reassignment_names_the_path() -> None:
    inner = SequentialAgent(name="inner", sub_agents=[_leaf()])
    middle = ParallelAgent(name="middle", sub_agents=[inner, _leaf("other", key="o2")])
    outer = SequentialAgent(name="outer", sub_agents=[middle])
    outer.compile()
    inner.sub_agents = [_leaf(), outer]  # now outer → middle → inner → outer
    with pytest.raises(DataflowError) as caught:
        outer.invoke("go")
    assert "agent `outer` contains itself (outer → middle → inner → outer)" in str(caught.value)
    with pytest.raises(
        DataflowError, match=r"`inner` contains itself \(inner → outer → middle → inner\)"
    ):
        inner.compile()


# -- depth ---------------------------------------------------------------------------------------


def _chain(depth: int) -> SequentialAgent:
    """`depth` levels: SequentialAgents nested in each other, a FunctionAgent at the bottom."""
    agent: SequentialAgent | FunctionAgent = _leaf("bottom", "BOTTOM")
    for level in range(depth - 1, 0, -1):
        agent = SequentialAgent(name=f"level{level}", sub_agents=[agent])
    assert isinstance(agent, SequentialAgent)
    return agent


def test_a_tree_as_deep_as_the_limit_runs(store) -> None:
    team = _chain(MAX_DEPTH)
    assert sum(1 for _ in team.walk()) == MAX_DEPTH
    state = team.invoke("go", thread_id="deep", checkpointer=store)
    assert state["out"] == "BOTTOM"
    assert team.get_state("deep").values["out"] == "BOTTOM"


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 150])
def test_a_tree_deeper_than_the_limit_is_a_clear_error(depth: int) -> None:
    team = _chain(depth)
    with pytest.raises(DataflowError) as caught:
        team.compile()
    message = str(caught.value)
    assert f"is nested {MAX_DEPTH + 1} levels deep in `level1`" in message
    assert f"up to {MAX_DEPTH} levels" in message and "flatten the tree" in message


# -- names and models ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["__start__", "__end__", "__anything__"])
def test_langgraph_reserved_names_are_refused_at_construction(name: str) -> None:
    with pytest.raises(AgentSpecError) as caught:
        FunctionAgent(name=name, fn=lambda s: 1, output_key="x")
    assert caught.value.fields[0][0] == "name" and "reserved by LangGraph" in str(caught.value)
    with pytest.raises(AgentSpecError, match="output_key"):
        FunctionAgent(name="ok", fn=lambda s: 1, output_key=name)


@pytest.mark.parametrize(
    ("model", "says"),
    [
        (FakeListLLM(responses=["hi"]), "FakeListLLM, not a chat model (a completion LLM"),
        (object(), "object, not a chat model"),
        ("openai:", "openai:"),
        ("openai:   ", "openai:"),
    ],
    ids=["completion LLM", "object", "openai: with no model", "openai: blank"],
)
def test_a_model_that_cannot_chat_is_refused_at_construction(model, says: str) -> None:
    with pytest.raises(GraphflowConfigError) as caught:
        ReactAgent(name="writer", model=model)
    assert "writer" in str(caught.value) and says in str(caught.value)
    agent = ReactAgent(name="writer", model=ScriptedChatModel(replies=["x"]))
    with pytest.raises(GraphflowConfigError) as assigned:
        agent.model = model  # an assignment is checked as well
    assert str(assigned.value).startswith("ReactAgent `writer`: model: ")
    assert says in str(assigned.value)


def test_openai_without_a_model_name_says_how_to_name_one() -> None:
    with pytest.raises(GraphflowConfigError) as caught:
        ReactAgent(name="writer", model="openai:")
    assert str(caught.value).startswith("Agent `writer`: model 'openai:' names no model")
    assert "'openai:gpt-4o-mini'" in str(caught.value)  # what to write instead


# -- changes after compile ----------------------------------------------------------------------------


def test_a_changed_sub_agent_field_is_rebuilt_never_stale(store) -> None:
    model = ScriptedChatModel(fn=lambda messages, n: f"reply {n}")
    writer = ReactAgent(name="writer", model=model, instruction="Write A.", output_key="draft")
    team = SequentialAgent(name="team", sub_agents=[writer])
    compiled = team.compile(checkpointer=store)
    team.invoke("go", thread_id="t1")
    assert model.requests[-1][-1].text == "Write A."
    writer.instruction = "Write B about {input}."
    assert team.compile(checkpointer=store) is not compiled
    team.invoke("pumps", thread_id="t2")
    assert model.requests[-1][-1].text == "Write B about pumps."
    writer.output_key = "article"
    state = team.invoke("go", thread_id="t3")
    assert state["article"] == "reply 2" and "draft" not in state
    # the old runs are still in the store, readable by the rebuilt graph
    assert {r.thread_id for r in team.runs()} == {"t1", "t2", "t3"}


def test_a_changed_sub_agents_list_is_rebuilt_never_stale(store) -> None:
    team = SequentialAgent(name="team", sub_agents=[_leaf("first", "ONE", "one")])
    team.compile(checkpointer=store)
    assert team.invoke("go", thread_id="a")["one"] == "ONE"
    team.sub_agents.append(_leaf("second", "TWO", "two"))  # in place
    assert team.invoke("go", thread_id="b")["two"] == "TWO"
    team.sub_agents = [_leaf("third", "THREE", "three")]  # reassigned
    state = team.invoke("go", thread_id="c")
    assert state["three"] == "THREE" and "one" not in state
    # a grandchild's list, changed in place, too
    loop = LoopAgent(name="loop", sub_agents=[_leaf("body", "B1", "b")], max_iterations=1)
    outer = SequentialAgent(
        name="outer", sub_agents=[SequentialAgent(name="mid", sub_agents=[loop])]
    )
    assert outer.invoke("go", checkpointer=store)["b"] == "B1"
    loop.sub_agents[0] = _leaf("body2", "B2", "b")
    assert outer.invoke("go", checkpointer=store)["b"] == "B2"
