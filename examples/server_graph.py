"""The competitive-analysis team served by LangGraph Server (`langgraph dev` / `langgraph up`).

A compiled graphflow agent is a plain LangGraph graph. The server supplies the checkpointer (its
own store locally; PostgreSQL in production), so the graph is compiled without one. Offline, the
team runs on scripted models; with OPENAI_API_KEY set it uses a real model.

From the repository root, where `langgraph.json` points the server at this file:

    .venv/bin/langgraph dev --no-browser --port 2024
"""

from __future__ import annotations

import sys
from pathlib import Path

# the server loads this file by path; make the examples package importable whatever the cwd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.competitive_analysis import pipeline  # noqa: E402

graph = pipeline.compile(checkpointer=False).graph  # the LangGraph CompiledStateGraph
