"""examples/mcp_tools.py without its servers installed: one line naming the command to run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_missing_servers_are_one_line_naming_the_setup_command(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": str(tmp_path)}  # no node on PATH
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "mcp_tools.py")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "node" in lines[0] and "run `bash .ci/setup_tools.sh .venv`" in lines[0]
