"""Compiled graphs are cached: reused while the spec is unchanged, rebuilt when any part changes."""

from __future__ import annotations

from graphflow import CompiledAgent, ReactAgent, SequentialAgent
from graphflow.runtime.graphs import SUBGRAPHS
from graphflow.testing import ScriptedChatModel


def _graphs(agent: ReactAgent) -> list[object]:
    """The compiled sub-agent graphs of `agent` the runtime keeps, current spec only."""
    fingerprint = agent.fingerprint()
    return [
        entry[2]
        for key in list(SUBGRAPHS)
        if key[0] == id(agent) and (entry := SUBGRAPHS[key])[0] == fingerprint
    ]


def _tree() -> tuple[SequentialAgent, ReactAgent, ReactAgent]:
    model = ScriptedChatModel(fn=lambda messages, n: f"r{n}")
    a = ReactAgent(name="a", model=model, instruction="A {input}", output_key="ao")
    b = ReactAgent(name="b", model=model, instruction="B {ao}", output_key="bo")
    return SequentialAgent(name="root", sub_agents=[a, b]), a, b


def test_compile_is_cached_until_the_tree_changes() -> None:
    root, _, b = _tree()
    first = root.compile()
    assert isinstance(first, CompiledAgent)
    assert root.compile() is first
    assert root.compile().graph is first.graph
    b.instruction = "B2 {ao}"  # a sub-agent's field
    assert root.compile() is not first


def test_an_unchanged_sub_agent_keeps_its_compiled_graph() -> None:
    root, a, b = _tree()
    root.compile(False)
    (a_graph,) = _graphs(a)
    (b_graph,) = _graphs(b)
    b.instruction = "B2 {ao}"
    root.compile(False)
    assert _graphs(a) == [a_graph]  # reused
    assert _graphs(b) != [b_graph]  # rebuilt


def test_editing_the_sub_agent_list_in_place_rebuilds() -> None:
    root, a, _ = _tree()
    first = root.compile(False)
    extra = ReactAgent(
        name="c", model=ScriptedChatModel(replies=["c!"]), instruction="C", output_key="co"
    )
    root.sub_agents.append(extra)  # no assignment: only the fingerprint sees it
    second = root.compile(False)
    assert second is not first
    assert root.invoke("go", checkpointer=False)["co"] == "c!"


def test_changing_a_spec_after_compile_rebuilds_the_graph() -> None:
    from graphflow import ReactAgent
    from graphflow.testing import ScriptedChatModel

    model = ScriptedChatModel(replies=["one", "two"])
    agent = ReactAgent(name="a", model=model, instruction="First {input}.", output_key="out")
    first = agent.compile()
    agent.invoke("x")
    agent.instruction = "Second {input}."
    assert agent.compile() is not first
    agent.invoke("y")
    assert model.requests[1][-1].content == "Second y."


def test_editing_model_settings_in_place_rebuilds() -> None:
    root, _, b = _tree()
    first = root.compile(False)
    b.model_settings["temperature"] = 0.1  # no assignment: the dict changes in place
    assert root.compile(False) is not first
    assert root.compile(False) is root.compile(False)  # and is cached again
