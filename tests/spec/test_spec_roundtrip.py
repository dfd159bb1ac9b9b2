"""Declarative specs: YAML/JSON ⇄ agent tree, field-path errors with lines, the JSON Schema."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from graphflow import Agent, FunctionAgent, LoopAgent, ReactAgent, SequentialAgent
from graphflow.exceptions import GraphflowConfigError
from graphflow.spec import SpecError, agent_to_spec, dump_spec, load_spec, spec_schema

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TEAM = EXAMPLES / "competitive_analysis.yaml"


@pytest.fixture(autouse=True)
def _examples_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))


def test_competitive_analysis_round_trips_and_draws_the_same() -> None:
    import competitive_analysis as ca

    data = yaml.safe_load(TEAM.read_text())
    agent = load_spec(TEAM)
    assert agent.to_spec() == data  # spec → agent → spec
    assert agent_to_spec(ca.pipeline) == data  # the Python-built team writes the same spec
    assert agent.draw("mermaid") == ca.pipeline.draw("mermaid")
    assert Agent.from_spec(data).to_spec() == data
    result = agent.invoke("Pura X", checkpointer="memory:")
    assert "Competitors" in result["draft_article"] and result["review_feedback"] == "APPROVE"


def test_json_spec_and_dump(tmp_path) -> None:
    agent = load_spec(TEAM)
    path = tmp_path / "team.json"
    path.write_text(dump_spec(agent, "json"))
    again = load_spec(path)
    assert again.to_spec() == agent.to_spec()
    assert yaml.safe_load(dump_spec(agent, "yaml")) == agent.to_spec()


def test_kind_from_class_and_hooks_by_path() -> None:
    spec = {
        "name": "solo",
        "model": {"ref": "competitive_analysis:writer_model"},
        "instruction": "Write about {input}.",
        "hooks": [
            "graphflow:LoggingHook",
            {"call": "graphflow:ModelCallLimit", "kwargs": {"run_limit": 2}},
        ],
    }
    agent = ReactAgent.from_spec(spec)
    assert type(agent).__name__ == "ReactAgent"
    assert [type(h).__name__ for h in agent.hooks] == ["LoggingHook", "ModelCallLimit"]
    assert agent.hooks[1].run_limit == 2
    assert agent.to_spec() == {"kind": "ReactAgent", **spec}


EVERY_KIND = """
kind: SequentialAgent
name: team
sub_agents:
  - kind: FunctionAgent
    name: prep
    fn: spec_kinds_parts:prep
    output_key: cleaned
  - kind: ParallelAgent
    name: fan
    merge: spec_kinds_parts:join
    merge_output_key: both
    sub_agents:
      - {kind: FunctionAgent, name: left, fn: "spec_kinds_parts:left", output_key: l}
      - {kind: FunctionAgent, name: right, fn: "spec_kinds_parts:right", output_key: r}
  - kind: LoopAgent
    name: again
    max_iterations: 2
    until: spec_kinds_parts:done
    sub_agents:
      - kind: LlmRoutingAgent
        name: route
        model: {ref: "spec_kinds_parts:router"}
        fallback: plain
        sub_agents:
          - {kind: FunctionAgent, name: plain, fn: "spec_kinds_parts:left", output_key: p}
"""

PARTS = """
from graphflow.testing import ScriptedChatModel

def prep(state): return state["input"].strip()
def left(state): return "L:" + state["cleaned"]
def right(state): return "R:" + state["cleaned"]
def join(values): return " + ".join(values.values())
def done(state): return True
router = ScriptedChatModel(replies=[{"agent": "plain"}])
"""


def test_every_kind_round_trips_with_functions_by_import_path(tmp_path) -> None:
    (tmp_path / "spec_kinds_parts.py").write_text(PARTS)
    path = tmp_path / "every.yaml"
    path.write_text(EVERY_KIND)
    agent = load_spec(path)
    assert agent.to_spec() == yaml.safe_load(EVERY_KIND)
    again = tmp_path / "every.json"
    again.write_text(dump_spec(agent, "json"))
    assert load_spec(again).draw("mermaid") == agent.draw("mermaid")
    jsonschema.validate(agent.to_spec(), spec_schema())
    state = agent.invoke("  x ", checkpointer="memory:")
    assert state["both"] == "L:x + R:x" and state["p"] == "L:x"


def _write(tmp_path, text: str) -> Path:
    path = tmp_path / "team.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


BASE = """
kind: SequentialAgent
name: team
sub_agents:
  - kind: ReactAgent
    name: researcher
    model: {ref: "competitive_analysis:research_model"}
    instruction: Research {input}.
    output_key: research_data
  - kind: LoopAgent
    name: refine
    sub_agents:
      - kind: ReactAgent
        name: writer
        model: {ref: "competitive_analysis:writer_model"}
        instruction: Write from {research_data}.
        output_key: draft_article
"""


@pytest.mark.parametrize(
    ("old", "new", "path", "line", "says"),
    [
        (
            "Write from {research_data}.",
            "Write from {draft}.",
            "sub_agents[1].sub_agents[0].instruction",
            15,
            "{draft}",
        ),
        (
            "    name: refine\n",
            "    name: refine\n    max_iterations: 0\n",
            "sub_agents[1].max_iterations",
            11,
            "greater than 0",
        ),
        (
            "kind: LoopAgent",
            "kind: LoopThing",
            "sub_agents[1].kind",
            9,
            "unknown agent kind 'LoopThing'",
        ),
        (
            "output_key: draft_article",
            "output_kee: draft_article",
            "sub_agents[1].sub_agents[0].output_kee",
            16,
            "no field 'output_kee'",
        ),
        (
            '{ref: "competitive_analysis:writer_model"}',
            '{ref: "competitive_analysis:nobody"}',
            "sub_agents[1].sub_agents[0].model.ref",
            14,
            "no attribute 'nobody'",
        ),
        (
            '{ref: "competitive_analysis:research_model"}',
            '{ref: "no_such_module_xyz:m"}',
            "sub_agents[0].model.ref",
            6,
            "cannot import 'no_such_module_xyz'",
        ),
        (
            "    name: researcher\n",
            "    name: researcher\n    tools: [not-a-path]\n",
            "sub_agents[0].tools[0]",
            6,
            "not an import path",
        ),
        (
            "output_key: research_data",
            "output_key: 'bad key'",
            "sub_agents[0].output_key",
            8,
            "not an identifier",
        ),
    ],
)
def test_errors_name_the_field_path_and_line(tmp_path, old, new, path, line, says) -> None:
    assert old in BASE
    spec = _write(tmp_path, BASE.replace(old, new, 1))
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    err = info.value
    assert err.path == path, str(err)
    assert err.line == line, str(err)
    assert says in str(err) and str(err).startswith(f"{spec}:{line}: {path}: ")


NAMED = """
kind: SequentialAgent
name: team
sub_agents:
  - kind: ReactAgent
    name: writer
    model: openai:gpt-4o-mini
    model_settings: {temperature: 0, max_tokens: 200}
    instruction: Write about {input}.
    output_key: text
"""


def test_models_by_name_with_settings(tmp_path, monkeypatch) -> None:
    spec = _write(tmp_path, NAMED)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    agent = load_spec(spec)
    assert agent.to_spec() == yaml.safe_load(NAMED)
    chat = agent.sub_agents_list[0].chat_model()
    assert (chat.model_name, chat.temperature, chat.max_tokens) == ("gpt-4o-mini", 0, 200)
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    again = load_spec(spec)  # loading needs no credentials (issue 20): a call names the key
    with pytest.raises(GraphflowConfigError, match=r"`writer`.*OPENAI_API_KEY"):
        again.invoke("tea")


def test_json_spec_errors_name_the_line(tmp_path) -> None:
    data = yaml.safe_load(BASE)
    data["sub_agents"][1]["sub_agents"][0]["instruction"] = "Write from {draft}."
    path = tmp_path / "team.json"
    path.write_text(json.dumps(data, indent=2))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "{draft}" in text)
    assert info.value.path == "sub_agents[1].sub_agents[0].instruction"
    assert info.value.line == line


def test_errors_without_a_file_name_the_field_path() -> None:
    data = yaml.safe_load(BASE)
    data["sub_agents"][0]["max_iterations"] = -1
    with pytest.raises(SpecError) as info:
        Agent.from_spec(data)
    assert str(info.value).startswith("sub_agents[0].max_iterations: ")
    assert info.value.line is None


def test_file_level_errors(tmp_path) -> None:
    with pytest.raises(SpecError, match="no spec file"):
        load_spec(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: ReactAgent\nname: [unclosed\n")
    with pytest.raises(SpecError, match=r"bad.yaml:\d+: not valid YAML"):
        load_spec(bad)
    nokind = _write(tmp_path, "name: x\n")
    with pytest.raises(SpecError, match="kind: missing; give the agent kind: FunctionAgent, "):
        load_spec(nokind)
    base = _write(tmp_path, "kind: ModelAgent\nname: x\n")
    with pytest.raises(SpecError, match="unknown agent kind 'ModelAgent'"):
        load_spec(base)


def test_to_spec_names_what_it_cannot_write() -> None:
    step = FunctionAgent(name="step", fn=lambda s: 1, output_key="one")
    with pytest.raises(SpecError, match=r"^sub_agents\[0\]\.fn: cannot write function"):
        SequentialAgent(name="app", sub_agents=[step]).to_spec()


def test_schema_validates_the_example_specs_and_rejects_typos(tmp_path) -> None:
    schema = spec_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    data = yaml.safe_load(TEAM.read_text())
    jsonschema.validate(data, schema)
    jsonschema.validate(json.loads(dump_spec(load_spec(TEAM), "json")), schema)
    typo = json.loads(json.dumps(data))
    typo["sub_agents"][0]["instructions"] = "x"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(typo, schema)
    no_name = {"kind": "LoopAgent", "sub_agents": []}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(no_name, schema)
    # every agent kind and every field of it is in the schema
    for kind in (
        "ReactAgent",
        "SequentialAgent",
        "ParallelAgent",
        "LoopAgent",
        "LlmRoutingAgent",
        "FunctionAgent",
    ):
        props = schema["$defs"][kind]["properties"]
        assert "name" in props and "checkpointer" not in props
    assert "ModelAgent" not in schema["$defs"]  # a shared base, not a kind
    assert len(schema["$defs"]["Agent"]["oneOf"]) == 6
    assert set(schema["$defs"]["LoopAgent"]["properties"]) >= set(LoopAgent.model_fields) - {
        "checkpointer"
    }
