"""examples/mcp_tools.py runs offline against the real time and filesystem servers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_mcp_example_answers_offline(filesystem, time_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = importlib.util.spec_from_file_location(
        "mcp_tools_example", REPO / "examples" / "mcp_tools.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    answer = example.main("What time is it in Tokyo?")
    assert answer.startswith("In Tokyo it is ") and "+09:00" in answer
    assert "mcp.json starts with '{'" in answer
    assert "PERMISSION_DENIED" in answer
