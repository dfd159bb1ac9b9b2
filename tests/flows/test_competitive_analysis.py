"""The seed example: researcher → LoopAgent(writer, reviewer) until the reviewer approves."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphflow import LoopAgent, ReactAgent, SequentialAgent, output_contains
from graphflow.messages import is_instruction
from graphflow.testing import ScriptedChatModel, tool_call

FEEDBACK = "Needs battery life numbers and a price comparison."


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}: 16:10 foldable, 5000mAh"


def _pipeline() -> tuple[SequentialAgent, dict[str, ScriptedChatModel]]:
    models = {
        "researcher": ScriptedChatModel(
            replies=[
                tool_call("search", {"query": "Huawei Pura X"}),
                "Pura X facts: 16:10, 5000mAh",
            ]
        ),
        "writer": ScriptedChatModel(replies=["Draft v1", "Draft v2 with battery and price"]),
        "reviewer": ScriptedChatModel(replies=[FEEDBACK, "APPROVE"]),
    }
    researcher = ReactAgent(
        name="researcher",
        model=models["researcher"],
        tools=[search],
        system_prompt="You research products.",
        instruction="Research {input}.",
        output_key="research_data",
    )
    writer = ReactAgent(
        name="writer",
        model=models["writer"],
        output_key="draft_article",
        instruction="Write a report from {research_data}. Feedback: {review_feedback?}",
    )
    reviewer = ReactAgent(
        name="reviewer",
        model=models["reviewer"],
        output_key="review_feedback",
        instruction="Review {draft_article}. Answer APPROVE or give feedback.",
    )
    refine = LoopAgent(
        name="refine",
        sub_agents=[writer, reviewer],
        max_iterations=3,
        until=output_contains("review_feedback", "APPROVE"),
    )
    return SequentialAgent(name="competitive_analysis", sub_agents=[researcher, refine]), models


def _check(result: dict[str, Any], models: dict[str, ScriptedChatModel]) -> None:
    assert {k: m.calls for k, m in models.items()} == {"researcher": 2, "writer": 2, "reviewer": 2}
    # the researcher used its tool and got the result back
    assert models["researcher"].request_tools[0] == ["search"]
    tool_result = models["researcher"].requests[1][-1]
    assert isinstance(tool_result, ToolMessage) and "5000mAh" in tool_result.content
    # first pass: no feedback yet
    first = models["writer"].requests[0][-1]
    assert is_instruction(first)
    assert first.content == "Write a report from Pura X facts: 16:10, 5000mAh. Feedback: "
    # second pass: the reviewer's feedback is in the writer's instruction message
    second = models["writer"].requests[1][-1]
    assert is_instruction(second)
    assert FEEDBACK in second.content
    assert models["reviewer"].requests[1][-1].content.startswith("Review Draft v2 with battery")
    assert result["draft_article"] == "Draft v2 with battery and price"
    assert result["review_feedback"] == "APPROVE"
    assert result["research_data"] == "Pura X facts: 16:10, 5000mAh"
    assert result["agent_status"]["refine"] == "until"
    assert result["agent_status"]["competitive_analysis"] == "completed"
    assert [(m.type, getattr(m, "name", None)) for m in result["messages"]] == [
        ("human", None),
        ("ai", "researcher"),
        ("ai", "writer"),
        ("ai", "reviewer"),
        ("ai", "writer"),
        ("ai", "reviewer"),
    ]


def test_competitive_analysis_invoke() -> None:
    pipeline, models = _pipeline()
    _check(pipeline.invoke("Huawei Pura X", thread_id="run-1"), models)


def test_competitive_analysis_ainvoke() -> None:
    pipeline, models = _pipeline()
    _check(asyncio.run(pipeline.ainvoke("Huawei Pura X", thread_id="run-1a")), models)


def test_competitive_analysis_stream_yields_subgraph_events() -> None:
    pipeline, models = _pipeline()
    events = list(pipeline.stream("Huawei Pura X", thread_id="run-2", stream_mode="updates"))
    assert events
    namespaces = [ns for ns, _ in events]
    assert () in namespaces  # root events
    flat = {part.split(":")[0] for ns in namespaces for part in ns}
    assert {"researcher", "refine"} <= flat
    # events from the ReAct loop inside the loop inside the sequence
    deep = [ns for ns in namespaces if len(ns) >= 2]
    assert any(ns[0].startswith("refine:") and ns[1].startswith("writer:") for ns in deep)
    updates = [chunk for ns, chunk in events if ns and ns[-1].startswith("researcher:")]
    assert any("tools" in u for u in updates)
    final = pipeline.get_state("run-2").values
    assert final["draft_article"] == "Draft v2 with battery and price"
    assert models["writer"].calls == 2


def test_competitive_analysis_messages_stream_mode() -> None:
    pipeline, _ = _pipeline()
    tokens = [
        chunk[0].content
        for ns, chunk in pipeline.stream("Huawei Pura X", stream_mode="messages")
        if chunk[1].get("langgraph_node") == "model"
    ]
    assert "".join(tokens).count("APPROVE") == 1


def test_competitive_analysis_loop_hits_max_iterations_without_approval() -> None:
    pipeline, models = _pipeline()
    models["reviewer"] = ScriptedChatModel(fn=lambda m, n: f"still weak {n}")
    refine = pipeline.sub_agents[1]
    reviewer = refine.sub_agents[1].model_copy(update={"model": models["reviewer"]})
    writer = refine.sub_agents[0].model_copy(
        update={"model": ScriptedChatModel(fn=lambda m, n: f"draft {n}")}
    )
    refine2 = refine.model_copy(update={"sub_agents": [writer, reviewer]})
    pipeline2 = pipeline.model_copy(update={"sub_agents": [pipeline.sub_agents[0], refine2]})
    result = pipeline2.invoke("Huawei Pura X")
    assert result["agent_status"]["refine"] == "max_iterations"
    assert result["draft_article"] == "draft 2"
    assert models["reviewer"].calls == 3
