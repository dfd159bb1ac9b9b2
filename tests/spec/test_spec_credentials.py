"""Loading, checking, drawing a spec and its schema need no model credentials; a run does."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from graphflow.exceptions import GraphflowError
from graphflow.spec import load_spec, spec_schema

SPEC = """
kind: SequentialAgent
name: team
sub_agents:
  - kind: ReactAgent
    name: writer
    model: openai:gpt-4o-mini
    model_settings: {temperature: 0}
    instruction: Write about {input}.
    output_key: text
  - kind: LlmRoutingAgent
    name: route
    model: deepseek:deepseek-chat
    sub_agents:
      - {kind: ReactAgent, name: editor, model: "openai:gpt-4o", output_key: edited}
"""

KEYS = ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_BASE_URL", "GRAPHFLOW_MODEL")


@pytest.fixture
def no_keys(monkeypatch, tmp_path: Path) -> Path:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    spec = tmp_path / "team.yaml"
    spec.write_text(textwrap.dedent(SPEC))
    return spec


def test_a_spec_loads_and_draws_without_an_api_key(no_keys: Path) -> None:
    team = load_spec(no_keys)
    assert [a.name for a in team.sub_agents] == ["writer", "route"]
    assert "writer" in team.draw("mermaid") and "editor" in team.draw("mermaid")
    assert team.to_spec()["sub_agents"][0]["model"] == "openai:gpt-4o-mini"
    assert "ReactAgent" in spec_schema()["$defs"]


def test_the_cli_draws_a_spec_without_an_api_key(no_keys: Path, capsys) -> None:
    from graphflow.cli import main

    assert main(["draw", str(no_keys)]) == 0
    assert "writer" in capsys.readouterr().out
    assert main(["schema"]) == 0
    assert "ReactAgent" in json.loads(capsys.readouterr().out)["$defs"]


def test_the_key_is_checked_when_a_run_starts(no_keys: Path) -> None:
    team = load_spec(no_keys)
    with pytest.raises(GraphflowError, match="OPENAI_API_KEY"):
        team.invoke("x", checkpointer="memory:")
