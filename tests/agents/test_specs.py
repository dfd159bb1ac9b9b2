"""Agent specs: validation at construction, dataflow checks at build, compile and graph shape."""

from typing import Any

import pytest
from langgraph.graph import StateGraph

from graphflow import (
    DataflowError,
    GraphflowConfigError,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
)
from graphflow.exceptions import AgentSpecError
from graphflow.testing import ScriptedChatModel
from graphflow.tools.exit_loop import exit_loop


def _agent(name, model=None, **kwargs):
    return ReactAgent(name=name, model=model or ScriptedChatModel(replies=["x"]), **kwargs)


# -- build-time dataflow errors (before any model call) -------------------------------------------


def test_placeholder_nobody_writes_names_agent_key_and_known_keys():
    model = ScriptedChatModel(replies=["x"])
    first = _agent("researcher", model, output_key="research_data")
    writer = _agent("writer", model, instruction="Write from {reserch_data}.", output_key="draft")
    pipeline = SequentialAgent(name="pipeline", sub_agents=[first, writer])
    with pytest.raises(DataflowError) as info:
        pipeline.invoke("go")
    message = str(info.value)
    assert "writer" in message
    assert "reserch_data" in message
    assert "research_data" in message and "input" in message  # the keys that do exist
    assert model.calls == 0


def test_placeholder_written_only_by_a_later_agent():
    model = ScriptedChatModel(replies=["x"])
    writer = _agent("writer", model, instruction="Write from {research_data}.", output_key="draft")
    later = _agent("researcher", model, output_key="research_data")
    pipeline = SequentialAgent(name="pipeline", sub_agents=[writer, later])
    with pytest.raises(DataflowError, match=r"writer.*research_data.*not before") as info:
        pipeline.to_graph()
    assert "reorder" in str(info.value)
    assert model.calls == 0


def test_errors_raise_at_to_graph_and_compile_too():
    agent = _agent("writer", instruction="{missing}")
    with pytest.raises(DataflowError):
        agent.to_graph()
    with pytest.raises(DataflowError):
        agent.compile()


def test_optional_placeholder_passes_build():
    model = ScriptedChatModel(replies=["x"])
    agent = _agent("writer", model, instruction="Feedback: {feedback?}", output_key="draft")
    assert agent.invoke("go")["draft"] == "x"


def test_declared_input_keys_pass_build():
    model = ScriptedChatModel(replies=["x"])
    writer = _agent("writer", model, instruction="Write for {audience}.", output_key="draft")
    pipeline = SequentialAgent(name="pipeline", sub_agents=[writer], input_keys=["audience"])
    result = pipeline.invoke({"input": "go", "audience": "kids"})
    assert result["draft"] == "x"
    assert model.requests[0][-1].content == "Write for kids."


def test_duplicate_agent_names_in_a_tree():
    model = ScriptedChatModel(replies=["x"])
    a = _agent("worker", model, output_key="a")
    b = _agent("worker", model, output_key="b")
    with pytest.raises(DataflowError, match="worker"):
        SequentialAgent(name="pipeline", sub_agents=[a, b]).to_graph()
    assert model.calls == 0


def test_same_agent_object_twice_in_a_tree():
    a = _agent("worker", output_key="a")
    with pytest.raises(DataflowError, match="same agent object twice"):
        SequentialAgent(name="pipeline", sub_agents=[a, a]).to_graph()


def test_agent_name_equal_to_an_output_key():
    model = ScriptedChatModel(replies=["x"])
    a = _agent("research", model, output_key="notes")
    b = _agent("writer", model, output_key="research")
    with pytest.raises(DataflowError, match="research"):
        SequentialAgent(name="pipeline", sub_agents=[a, b]).to_graph()
    assert model.calls == 0


def test_config_errors_are_graphflow_config_errors():
    assert issubclass(DataflowError, GraphflowConfigError)


# -- construction-time validation -----------------------------------------------------------------


def test_include_contents_none_needs_an_instruction():
    with pytest.raises(AgentSpecError, match="include_contents"):
        _agent("writer", include_contents="none")


def test_misspelt_option_is_rejected():
    with pytest.raises(AgentSpecError, match="output_kay") as info:
        _agent("writer", output_kay="draft")
    assert info.value.errors()[0]["type"] == "extra_forbidden"


@pytest.mark.parametrize("name", ["my agent", "1writer", "writer-2", "", "gf_writer"])
def test_invalid_names(name):
    with pytest.raises(AgentSpecError, match="name"):
        _agent(name)


@pytest.mark.parametrize("key", ["messages", "input", "agent_status", "loop_iteration"])
def test_reserved_output_keys(key):
    with pytest.raises(AgentSpecError, match="reserved"):
        _agent("writer", output_key=key)


def test_invalid_output_key():
    with pytest.raises(AgentSpecError, match="output_key"):
        _agent("writer", output_key="my key")


def test_max_iterations_must_be_positive():
    with pytest.raises(AgentSpecError, match="max_iterations"):
        _agent("writer", max_iterations=0)


def test_sequential_takes_no_instruction():
    with pytest.raises(AgentSpecError, match="instruction"):
        SequentialAgent(name="pipeline", sub_agents=[_agent("w")], instruction="do {input}")


# -- compile, to_graph, drawing -------------------------------------------------------------------


def test_compile_is_cached_per_checkpointer_arg(tmp_path):
    agent = _agent("writer")
    assert agent.compile() is agent.compile()
    assert agent.compile(False) is agent.compile(False)
    assert agent.compile(False) is not agent.compile()
    url = f"sqlite:///{tmp_path}/runs.db"
    assert agent.compile(url) is agent.compile(url)


def test_to_graph_returns_a_state_graph():
    graph = _agent("writer").to_graph()
    assert isinstance(graph, StateGraph)
    # a root ReAct agent: its entry (the instruction) is the `prepare` step; a final answer is
    # written by the model step, so there is no finish node
    assert set(graph.nodes) == {"prepare", "model", "tools"}


def test_xray_graph_shows_nested_agent_nodes():
    researcher = _agent("researcher", output_key="research_data")
    writer = _agent("writer", output_key="draft")
    pipeline = SequentialAgent(name="pipeline", sub_agents=[researcher, writer])
    ids = set(pipeline.compile().graph.get_graph(xray=True).nodes)
    for agent in ("researcher", "writer"):
        # a sub-agent's instruction is sent with its input: no prepare step of its own
        for inner in ("model", "tools"):
            assert f"{agent}:{inner}" in ids
        assert f"{agent}:prepare" not in ids and f"{agent}:finish" not in ids
    mermaid = pipeline.draw("mermaid", xray=True)
    assert "subgraph c_researcher" in mermaid and "subgraph c_writer" in mermaid


def test_model_copy_gets_its_own_compile_cache_and_template():
    model = ScriptedChatModel(replies=["x", "y"])
    original = _agent("a", model, instruction="A {input}", output_key="o")
    compiled = original.compile()
    copy = original.model_copy(update={"name": "b", "output_key": "p", "instruction": "B {input}"})
    assert copy.compile() is not compiled
    result = copy.invoke("hi")
    assert result["p"] == "x"
    assert model.requests[0][-1].content == "B hi"
    assert original.compile() is compiled


# -- build errors name the agent, the key and the fix --------------------------------------------


def _react(name: str, **kw: Any) -> ReactAgent:
    return ReactAgent(name=name, model=ScriptedChatModel(replies=["x"]), **kw)


@pytest.mark.parametrize(
    ("build", "must"),
    [
        (
            lambda: SequentialAgent(name="s", sub_agents=[_react("a"), _react("a")]),
            ["`a`", "unique", "rename"],
        ),
        (
            lambda: SequentialAgent(name="s", sub_agents=[_react("a", instruction="Use {nope}.")]),
            ["`a`", "{nope}", "Fix", "nope?"],
        ),
        (
            lambda: ParallelAgent(
                name="p", sub_agents=[_react("a", output_key="k"), _react("b", output_key="k")]
            ),
            ["`a`", "`b`", "`k`", "rename"],
        ),
        (
            lambda: SequentialAgent(name="s", sub_agents=[_react("a", tools=[exit_loop])]),
            ["`a`", "exit_loop", "LoopAgent"],
        ),
        (
            lambda: SequentialAgent(name="s", sub_agents=[_react("a", output_key="model")]),
            ["'model'", "'a'", "rename"],
        ),
        (
            lambda: SequentialAgent(
                name="s", sub_agents=[_react("a", output_key="b"), _react("b")]
            ),
            ["'b'", "rename"],
        ),
    ],
)
def test_build_errors_name_agent_key_and_fix(build: Any, must: list[str]) -> None:
    with pytest.raises((DataflowError, GraphflowConfigError)) as err:
        build().to_graph()
    for part in must:
        assert part in str(err.value), (part, str(err.value))


@pytest.mark.parametrize("field", ["output_key", "input_keys"])
def test_gf_prefixed_keys_are_reserved(field: str) -> None:
    # graphflow's private channels are never handed to sub-agents, so a user key may not use them
    from graphflow.exceptions import AgentSpecError

    value: Any = "gf_notes" if field == "output_key" else ["gf_notes"]
    with pytest.raises(AgentSpecError, match="names starting with 'gf_' are reserved"):
        ReactAgent(name="a", model=ScriptedChatModel(replies=["x"]), **{field: value})
