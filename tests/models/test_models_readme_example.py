"""The README's example runs unchanged against the local server, in every behaviour.

`python examples/competitive_analysis.py "Huawei Pura X"` with `OPENAI_API_KEY` set and
`OPENAI_BASE_URL` pointing at the server: the team runs on `openai:gpt-4o-mini`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]


def test_readme_example_completes(openai_env: OpenAIServer, tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_BASE_URL": openai_env.base_url, "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "competitive_analysis.py"), "Huawei Pura X"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[researcher]" in out and "[refine/writer]" in out and "[refine/reviewer]" in out
    assert "gpt-4o-mini answers: Write a report on Huawei Pura X" in out
    assert "loop ended by: until; thread: analysis-huawei-pura-x" in out
    assert (tmp_path / "runs.db").exists()
    answered = openai_env.answered
    assert {r.body["model"] for r in answered} == {"gpt-4o-mini"}
    assert sum(any(m["role"] == "tool" for m in r.body["messages"]) for r in answered) == 1
    assert len(answered) == 4  # researcher x2, writer, reviewer (it approves: APPROVE is echoed)
