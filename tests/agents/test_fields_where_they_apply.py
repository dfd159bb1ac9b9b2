"""Model-facing fields live on the agents that call a model (issue 19.3).

`include_contents` and `return_reasoning_contents` are fields of `ReactAgent` and
`LlmRoutingAgent` (their base, `ModelAgent`), as ADK puts them on `LlmAgent`: a flow or a
`FunctionAgent` given one is a `GraphflowConfigError` naming the field, the agent and the kinds
that take it — not a field silently ignored and drawn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphflow import (
    AgentSpecError,
    FunctionAgent,
    GraphflowConfigError,
    LlmRoutingAgent,
    LoopAgent,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
    SpecError,
    load_spec,
)
from graphflow.testing import ScriptedChatModel

MODEL_FIELDS = {"include_contents": "none", "return_reasoning_contents": True}


def _step(name: str = "step") -> FunctionAgent:
    return FunctionAgent(name=name, fn=lambda s: "x", output_key=f"{name}_out")


def _flows(**extra: Any) -> dict[str, Any]:
    return {
        "SequentialAgent": lambda: SequentialAgent(name="team", sub_agents=[_step()], **extra),
        "ParallelAgent": lambda: ParallelAgent(name="team", sub_agents=[_step()], **extra),
        "LoopAgent": lambda: LoopAgent(
            name="team", sub_agents=[_step()], max_iterations=2, **extra
        ),
        "FunctionAgent": lambda: FunctionAgent(
            name="team", fn=lambda s: "x", output_key="o", **extra
        ),
    }


@pytest.mark.parametrize("field", sorted(MODEL_FIELDS))
@pytest.mark.parametrize("kind", sorted(_flows()))
def test_a_flow_given_a_model_field_is_a_config_error_naming_it(kind: str, field: str) -> None:
    with pytest.raises(GraphflowConfigError) as caught:
        _flows(**{field: MODEL_FIELDS[field]})[kind]()
    error = caught.value
    assert isinstance(error, AgentSpecError)
    message = str(error)
    assert message.startswith(f"{kind} `team`: {field}:")
    assert "LlmRoutingAgent, ReactAgent" in message  # the kinds that take it
    assert error.fields[0][0] == field and error.agent == "team"


@pytest.mark.parametrize("field", sorted(MODEL_FIELDS))
def test_assigning_a_model_field_to_a_flow_is_refused_too(field: str) -> None:
    team = SequentialAgent(name="team", sub_agents=[_step()])
    with pytest.raises(AgentSpecError, match=f"`{field}` does not apply to a SequentialAgent"):
        setattr(team, field, MODEL_FIELDS[field])
    with pytest.raises(AgentSpecError, match="team`: colour: no such field"):
        team.colour = "red"  # type: ignore[attr-defined]
    assert not hasattr(team, field)


def test_the_agents_that_call_a_model_take_them() -> None:
    model = ScriptedChatModel(replies=["x"])
    react = ReactAgent(name="r", model=model, instruction="Do {input}.", **MODEL_FIELDS)
    router = LlmRoutingAgent(name="route", model=model, sub_agents=[_step()], **MODEL_FIELDS)
    for agent in (react, router):
        assert agent.include_contents == "none" and agent.return_reasoning_contents is True


def test_drawings_show_them_on_model_agents_only() -> None:
    model = ScriptedChatModel(replies=["x"])
    react = ReactAgent(name="r", model=model, instruction="Do {input}.", **MODEL_FIELDS)
    team = SequentialAgent(name="team", sub_agents=[react, _step()])
    drawing = json.loads(str(team.draw("json")))
    details = {box["name"]: box.get("details", {}) for box in drawing["agents"]}
    assert details["r"]["include_contents"] == "none"
    assert details["r"]["return_reasoning_contents"] is True
    for name in ("team", "step"):
        assert "include_contents" not in details[name]
        assert "return_reasoning_contents" not in details[name]


def test_a_spec_file_names_the_kinds_that_take_the_field(tmp_path: Path) -> None:
    path = tmp_path / "team.yaml"
    path.write_text(
        "kind: SequentialAgent\n"
        "name: team\n"
        "include_contents: none\n"
        "sub_agents:\n"
        "  - kind: FunctionAgent\n"
        "    name: step\n"
        "    fn: os.path:basename\n"
    )
    with pytest.raises(
        SpecError, match=r"team.yaml:3: include_contents: .*LlmRoutingAgent, ReactAgent"
    ):
        load_spec(path)
