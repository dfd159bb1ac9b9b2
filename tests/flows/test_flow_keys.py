"""What a sub-agent's graph gets: only the keys it reads or writes, and what its instructions need.

Sub-agents run on narrow schemas (their checkpoints hold their own data, not a copy of the whole
state), so these tests pin that every value an agent at any depth reads still reaches it.
"""

from __future__ import annotations

from graphflow import FunctionAgent, LoopAgent, ReactAgent, SequentialAgent
from graphflow.strategies import FlowGraphBuilder
from graphflow.testing import ScriptedChatModel


def _echo() -> ScriptedChatModel:
    return ScriptedChatModel(fn=lambda messages, n: f"r{n}")


def test_loop_pass_reaches_an_agent_nested_in_a_flow_inside_the_loop() -> None:
    model = _echo()
    inner = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(name="w", model=model, instruction="pass {loop_iteration}", output_key="o")
        ],
    )
    LoopAgent(name="loop", sub_agents=[inner], max_iterations=3).invoke("x")
    assert [r[-1].content for r in model.requests] == ["pass 0", "pass 1", "pass 2"]


def test_input_and_earlier_outputs_reach_an_agent_three_levels_down() -> None:
    model = _echo()
    deep = SequentialAgent(
        name="l1",
        sub_agents=[
            SequentialAgent(
                name="l2",
                sub_agents=[
                    ReactAgent(
                        name="reader",
                        model=model,
                        instruction="{input} / {early}",
                        output_key="late",
                    )
                ],
            )
        ],
    )
    root = SequentialAgent(
        name="root",
        sub_agents=[FunctionAgent(name="first", fn=lambda s: "E", output_key="early"), deep],
    )
    result = root.invoke("IN")
    assert model.requests[0][-1].content == "IN / E"
    assert result["late"] == "r0"


def test_a_react_sub_agent_graph_carries_only_its_own_keys() -> None:
    writer = ReactAgent(name="writer", model=_echo(), instruction="{input}", output_key="draft")
    other = ReactAgent(name="other", model=_echo(), instruction="{draft}", output_key="extra")
    tree = SequentialAgent(name="root", sub_agents=[writer, other])
    builder = FlowGraphBuilder()
    builder.build(tree)
    keys = builder.keys_for(writer, frozenset({"input", "draft", "extra"}))
    # the instruction is rendered by the parent's node: not even `input` is a channel of its graph
    assert keys == frozenset({"draft"})


def test_a_function_agent_in_a_flow_gives_its_flow_every_key() -> None:
    seen: dict[str, object] = {}

    def look(state: dict) -> str:
        seen.update(state)
        return "ok"

    inner = SequentialAgent(
        name="inner", sub_agents=[FunctionAgent(name="f", fn=look, output_key="fo")]
    )
    root = SequentialAgent(
        name="root",
        sub_agents=[ReactAgent(name="a", model=_echo(), output_key="ao"), inner],
        input_keys=["extra"],
    )
    root.invoke({"input": "x", "extra": 7})
    assert seen["ao"] == "r0" and seen["extra"] == 7 and seen["input"] == "x"
