"""The competitive-analysis team served by LangGraph Server (`langgraph dev` / `langgraph up`).

A compiled graphflow agent is a plain LangGraph graph. The server supplies the checkpointer (its
own store locally; PostgreSQL in production), so the graph is compiled without one. Offline, the
team runs on scripted models; with OPENAI_API_KEY set it uses a real model.

    langgraph dev --config examples/langgraph.json --no-browser --port 2024
"""

from __future__ import annotations

import sys
from pathlib import Path

# the server loads this file by path; make its sibling module importable
sys.path.insert(0, str(Path(__file__).resolve().parent))

from competitive_analysis import pipeline  # noqa: E402

graph = pipeline.compile(checkpointer=False).graph  # the LangGraph CompiledStateGraph
