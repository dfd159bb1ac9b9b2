"""Deep nesting: Parallel ⊃ Sequential ⊃ Loop ⊃ ReAct runs, keeps state right, draws nested ids."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.tools import tool

from graphflow import FunctionAgent, LoopAgent, ParallelAgent, ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel, tool_call


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def _tree() -> tuple[ParallelAgent, dict[str, ScriptedChatModel]]:
    def worker_reply(messages: list[Any], n: int) -> Any:
        # every pass: call the tool once, then answer with the pass number from the instruction
        last = messages[-1]
        if last.type == "tool":
            return f"draft after {last.content}"
        return tool_call("lookup", {"topic": last.content})

    worker_model = ScriptedChatModel(fn=worker_reply)
    planner_model = ScriptedChatModel(replies=["plan: fold"])
    side_model = ScriptedChatModel(replies=["side answer"])
    worker = ReactAgent(
        name="worker",
        model=worker_model,
        tools=[lookup],
        instruction="pass {loop_iteration} on {plan}",
        output_key="draft",
    )
    loop = LoopAgent(name="polish", sub_agents=[worker], max_iterations=2, output_key="polished")
    seq = SequentialAgent(
        name="pipeline",
        sub_agents=[ReactAgent(name="planner", model=planner_model, output_key="plan"), loop],
        output_key="pipeline_out",
    )
    side = ReactAgent(name="side", model=side_model, output_key="side_out")
    stamp = FunctionAgent(
        name="stamp", fn=lambda s: f"stamped {s['input']}", output_key="stamp_out"
    )
    root = ParallelAgent(name="root", sub_agents=[seq, side, stamp], output_key="everything")
    return root, {"worker": worker_model, "planner": planner_model, "side": side_model}


def _check(result: dict[str, Any], models: dict[str, ScriptedChatModel]) -> None:
    assert models["planner"].calls == 1
    assert models["side"].calls == 1
    assert models["worker"].calls == 4  # 2 passes x (tool call + answer)
    instructions = [r[-1].content for r in models["worker"].requests if r[-1].type == "human"]
    assert instructions == ["pass 0 on plan: fold", "pass 1 on plan: fold"]
    assert result["draft"] == "draft after facts about pass 1 on plan: fold"
    assert result["polished"] == result["draft"]
    assert result["pipeline_out"] == result["draft"]
    assert result["everything"] == {
        "pipeline_out": result["draft"],
        "side_out": "side answer",
        "stamp_out": "stamped phones",
    }
    status = result["agent_status"]
    assert status["polish"] == "max_iterations"
    assert status["pipeline"] == status["root"] == status["worker"] == "completed"
    # only final answers reach the root conversation, never tool calls or instructions
    contents = [m.content for m in result["messages"]]
    assert contents[0] == "phones"
    assert all("pass " not in c or c.startswith("draft") for c in contents)
    assert not any(m.type == "tool" for m in result["messages"])


def test_three_levels_deep_sync() -> None:
    root, models = _tree()
    _check(root.invoke("phones", thread_id="deep"), models)


def test_three_levels_deep_async() -> None:
    root, models = _tree()
    _check(asyncio.run(root.ainvoke("phones", thread_id="deep-a")), models)


def test_xray_graph_shows_nested_node_ids() -> None:
    root, models = _tree()
    nodes = set(root.compile().graph.get_graph(xray=True).nodes)
    assert "pipeline:polish:worker:model" in nodes
    assert "pipeline:polish:worker:tools" in nodes
    assert not any(n.startswith("pipeline:polish:gf_") for n in nodes)  # no bookkeeping nodes
    assert "pipeline:planner:model" in nodes
    assert "side:model" in nodes
    assert "stamp" in nodes and "stamp:run" not in nodes  # a FunctionAgent runs inline
    assert "gf_merge" in nodes
    mermaid = root.draw("mermaid")
    assert "subgraph c_pipeline" in mermaid and "subgraph c_polish" in mermaid
    assert all(m.calls == 0 for m in models.values())


def test_nested_state_visible_in_checkpoint() -> None:
    root, models = _tree()
    root.invoke("phones", thread_id="deep-state")
    values = root.get_state("deep-state").values
    assert values["plan"] == "plan: fold"
    assert values["everything"]["side_out"] == "side answer"


def test_messages_stream_namespaces_in_nested_tree() -> None:
    tree = SequentialAgent(
        name="s",
        sub_agents=[
            ParallelAgent(
                name="p",
                sub_agents=[
                    ReactAgent(
                        name="a", model=ScriptedChatModel(replies=["alpha beta"]), output_key="ao"
                    ),
                    ReactAgent(
                        name="b", model=ScriptedChatModel(replies=["gamma delta"]), output_key="bo"
                    ),
                ],
            ),
            ReactAgent(name="c", model=ScriptedChatModel(replies=["eps zeta"]), output_key="co"),
        ],
    )
    text: dict[tuple[str, ...], str] = {}
    for ns, (chunk, _meta) in tree.stream("go", stream_mode="messages"):
        key = tuple(part.split(":")[0] for part in ns)
        text[key] = text.get(key, "") + chunk.text
    assert text == {("p", "a"): "alpha beta", ("p", "b"): "gamma delta", ("c",): "eps zeta"}
