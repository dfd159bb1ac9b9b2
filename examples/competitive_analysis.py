"""The seed article's competitive-analysis team: researcher → loop(writer ⇄ reviewer).

Runs offline with scripted models by default. With OPENAI_API_KEY set (and OPENAI_BASE_URL for
DashScope, DeepSeek, vLLM, Ollama...), it uses `openai:$GRAPHFLOW_MODEL` (default gpt-4o-mini)
and a stub search tool.

    python examples/competitive_analysis.py "Huawei Pura X"
    graphflow run examples/competitive_analysis.py:pipeline "Huawei Pura X"
"""

from __future__ import annotations

import os
import sys
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import tool

from graphflow import LoopAgent, ReactAgent, SequentialAgent, output_contains
from graphflow.messages import is_instruction
from graphflow.testing import ScriptedChatModel, tool_call


@tool
def web_search(query: str) -> str:
    """Search the web for product information."""
    return (
        f"[offline search results for {query!r}] 6.3-inch 16:10 inward-folding OLED; "
        "Kirin 9020; 4720 mAh battery; 66 W charging; HarmonyOS NEXT; from 7499 CNY."
    )


def _last_instruction(messages: list[BaseMessage]) -> str:
    return next((m.text for m in reversed(messages) if is_instruction(m)), "")


def _researcher(messages: list[BaseMessage], n: int) -> Any:
    if not any(m.type == "tool" for m in messages):
        return tool_call("web_search", {"query": _last_instruction(messages)[9:-1] or "product"})
    return "Key facts: " + messages[-1].text.split("] ", 1)[-1]


def _writer(messages: list[BaseMessage], n: int) -> str:
    instruction = _last_instruction(messages)
    revised = "Feedback: " in instruction and not instruction.rstrip().endswith("Feedback:")
    body = (
        "## Verdict\nA strong compact foldable.\n## Strengths\nScreen ratio, battery.\n"
        "## Weaknesses\nPrice."
    )
    if revised:
        body += "\n## Competitors\nCompared with Galaxy Z Flip and Pocket 2."
    return f"# Competitive analysis (draft {n + 1})\n{body}"


def _reviewer(messages: list[BaseMessage], n: int) -> str:
    return (
        "APPROVE"
        if "Competitors" in _last_instruction(messages)
        else ("Add a competitor comparison section.")
    )


def _models() -> tuple[Any, Any, Any]:
    if os.environ.get("OPENAI_API_KEY"):
        name = "openai:" + os.environ.get("GRAPHFLOW_MODEL", "gpt-4o-mini")
        return name, name, name
    return (
        ScriptedChatModel(fn=_researcher),
        ScriptedChatModel(fn=_writer),
        ScriptedChatModel(fn=_reviewer),
    )


research_model, writer_model, reviewer_model = _models()

researcher = ReactAgent(
    name="researcher",
    description="Finds facts about a product.",
    model=research_model,
    tools=[web_search],
    system_prompt="You research consumer products. Use web_search, then summarise the facts.",
    instruction="Research {input}.",
    output_key="research_data",
    include_contents="none",
)
writer = ReactAgent(
    name="writer",
    description="Writes the report.",
    model=writer_model,
    system_prompt="You write concise competitive-analysis reports in Markdown.",
    instruction="Write a report on {input} from these facts: {research_data}\nFeedback: {review_feedback?}",
    output_key="draft_article",
    include_contents="none",
)
reviewer = ReactAgent(
    name="reviewer",
    description="Reviews the draft.",
    model=reviewer_model,
    system_prompt="You are a demanding editor.",
    instruction="Review this draft. Answer APPROVE, or give concrete feedback.\n\n{draft_article}",
    output_key="review_feedback",
    include_contents="none",
)
refine = LoopAgent(
    name="refine",
    sub_agents=[writer, reviewer],
    max_iterations=3,
    until=output_contains("review_feedback", "APPROVE"),
)
pipeline = SequentialAgent(name="competitive_analysis", sub_agents=[researcher, refine])


def main(argv: list[str]) -> int:
    product = argv[1] if len(argv) > 1 else "Huawei Pura X"
    checkpointer = os.environ.get("GRAPHFLOW_CHECKPOINTER", "sqlite:///runs.db")
    thread_id = f"analysis-{product.lower().replace(' ', '-')}"
    for namespace, update in pipeline.stream(
        product, thread_id=thread_id, checkpointer=checkpointer, stream_mode="updates"
    ):
        where = "/".join(part.split(":")[0] for part in namespace) or pipeline.name
        print(f"[{where}] {', '.join(update)}")
    state = pipeline.get_state(thread_id, checkpointer=checkpointer).values
    print("\n" + state["draft_article"])
    print(f"\nloop ended by: {state['agent_status']['refine']}; thread: {thread_id}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
