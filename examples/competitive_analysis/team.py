"""The team: a researcher with a search tool, then a writer ⇄ reviewer loop (APPROVE or 3 passes).

`build()` picks the models when it is called: with `OPENAI_API_KEY` set, every agent runs on
`openai:$GRAPHFLOW_MODEL` (default gpt-4o-mini; `OPENAI_BASE_URL` for DashScope/Qwen, DeepSeek,
vLLM, Ollama or any OpenAI-compatible endpoint); otherwise on the scripted demo models.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import tool

from graphflow import LoopAgent, ReactAgent, SequentialAgent, output_contains

from .corpus import format_results, search_notes
from .demo_models import demo_models


@tool
def web_search(query: str) -> str:
    """Search the product notes for a product; returns its specs, price, strengths, weaknesses and competitors."""
    return format_results(query, search_notes(query, limit=1))


def models() -> tuple[Any, Any, Any]:
    """(researcher, writer, reviewer) models: `openai:<model>` with OPENAI_API_KEY, else demo ones."""
    if os.environ.get("OPENAI_API_KEY"):
        name = "openai:" + os.environ.get("GRAPHFLOW_MODEL", "gpt-4o-mini")
        return name, name, name
    return demo_models()


_OTHER_KEYS = {
    "DASHSCOPE_API_KEY": (
        "OPENAI_API_KEY=$DASHSCOPE_API_KEY "
        "OPENAI_BASE_URL=https://dashscope.aliyuncs.com/compatible-mode/v1 GRAPHFLOW_MODEL=qwen-plus"
    ),
    "DEEPSEEK_API_KEY": (
        "OPENAI_API_KEY=$DEEPSEEK_API_KEY OPENAI_BASE_URL=https://api.deepseek.com "
        "GRAPHFLOW_MODEL=deepseek-chat"
    ),
    "OPENAI_KEY": "OPENAI_API_KEY=$OPENAI_KEY",
}
"""Key variables people set for this example that it does not read, and the setting it reads."""


def models_notice() -> str:
    """Which models the team runs on, in words: the real model, or the demo and how to leave it."""
    if os.environ.get("OPENAI_API_KEY"):
        where = os.environ.get("OPENAI_BASE_URL", "")
        model = os.environ.get("GRAPHFLOW_MODEL", "gpt-4o-mini")
        return f"openai:{model}" + (f" at {where}" if where else "")
    text = "scripted demo models (offline; replies built from the bundled notes)"
    unused = [name for name in _OTHER_KEYS if os.environ.get(name)]
    if unused:
        fixes = "; ".join(f"{name} is set but not read: use {_OTHER_KEYS[name]}" for name in unused)
        return f"{text} — {fixes}"
    return f"{text} — set OPENAI_API_KEY (and OPENAI_BASE_URL, GRAPHFLOW_MODEL) for a real model"


@dataclass(frozen=True)
class Team:
    """The agents of one team, and the models they use."""

    pipeline: SequentialAgent
    researcher: ReactAgent
    refine: LoopAgent
    writer: ReactAgent
    reviewer: ReactAgent
    research_model: Any
    writer_model: Any
    reviewer_model: Any


def build() -> Team:
    """A new team, on the models `models()` picks now."""
    research_model, writer_model, reviewer_model = models()
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
    return Team(
        pipeline, researcher, refine, writer, reviewer, research_model, writer_model, reviewer_model
    )
