"""The README's code blocks run, and its commands are the ones CI uses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, re.DOTALL)


@pytest.mark.parametrize(
    "code", [code for lang, code in BLOCKS if lang == "python"], ids=lambda c: c.splitlines()[0]
)
def test_python_blocks_run(code: str, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})


def test_there_is_a_python_block() -> None:
    assert any(lang == "python" for lang, _ in BLOCKS)


def test_ci_runs_the_readme_test_command() -> None:
    bash = [code for lang, code in BLOCKS if lang == "bash"]
    test_command = bash[1].strip()
    assert test_command == ".venv/bin/pytest"
    ci = (ROOT / ".ci" / "run").read_text()
    assert any(line.strip().startswith(test_command) for line in ci.splitlines())


def test_setup_commands_match_ci() -> None:
    setup = [code for lang, code in BLOCKS if lang == "bash"][0].strip().splitlines()
    assert setup[0] == 'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]"'
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python3 -m venv .venv" in ci
    assert '.venv/bin/pip install -e ".[dev]"' in ci
    assert setup[1] in ci, "CI runs the README's main example"
