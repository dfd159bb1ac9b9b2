"""A graphflow pipeline served by LangGraph Server (`langgraph dev` / `langgraph up`).

Runs offline: the models are `ScriptedChatModel`s. The server supplies the checkpointer (its own
store locally; PostgreSQL in production), so the graph is compiled without one.

    langgraph dev --config examples/langgraph.json --no-browser --port 2024
"""

from __future__ import annotations

from langchain_core.tools import tool

from graphflow import LoopAgent, ReactAgent, SequentialAgent, output_contains
from graphflow.messages import instruction_agent
from graphflow.testing import ScriptedChatModel, tool_call


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"{query}: 16:10 foldable screen, Kirin chip"


def _researcher(messages, n):
    if not any(m.type == "tool" for m in messages):
        return tool_call("search", {"query": "Huawei Pura X"})
    return "Pura X: 16:10 foldable screen, Kirin chip."


def _instruction(agent, messages):
    texts = [str(m.content) for m in messages if instruction_agent(m) == agent]
    return texts[-1] if texts else ""


def _writer(messages, n):
    return "Draft v2: detailed" if "detail" in _instruction("writer", messages) else "Draft v1"


def _reviewer(messages, n):
    return "APPROVE" if "v2" in _instruction("reviewer", messages) else "Needs more detail"


researcher = ReactAgent(
    name="researcher",
    model=ScriptedChatModel(fn=_researcher),
    tools=[search],
    instruction="Research {input}.",
    output_key="research_data",
)
writer = ReactAgent(
    name="writer",
    model=ScriptedChatModel(fn=_writer),
    instruction="Write a report from {research_data}. Feedback: {review_feedback?}",
    output_key="draft_article",
)
reviewer = ReactAgent(
    name="reviewer",
    model=ScriptedChatModel(fn=_reviewer),
    instruction="Review {draft_article}. Answer APPROVE or give feedback.",
    output_key="review_feedback",
)
refine = LoopAgent(
    name="refine",
    sub_agents=[writer, reviewer],
    max_iterations=3,
    until=output_contains("review_feedback", "APPROVE"),
)
pipeline = SequentialAgent(name="competitive_analysis", sub_agents=[researcher, refine])

graph = pipeline.compile(checkpointer=False)
