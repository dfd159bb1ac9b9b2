"""What is checked when (issue 20): credentials at the first call, providers at construction,
windows by the resolved model, and an `output_schema` agent never ends without its output."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from graphflow import ModelFallback, ReactAgent, SequentialAgent
from graphflow.cli import main as cli_main
from graphflow.context import context_window
from graphflow.exceptions import GraphflowConfigError, OutputValidationError
from graphflow.models import openai_model, require_api_key
from graphflow.spec import load_spec
from graphflow.testing import ScriptedChatModel, tool_call

SPEC = """\
kind: SequentialAgent
name: team
sub_agents:
  - kind: ReactAgent
    name: writer
    model: openai:gpt-4o-mini
    instruction: Write about {input}.
    output_key: draft
  - kind: ReactAgent
    name: editor
    model: deepseek:deepseek-chat
    instruction: Edit {draft}.
"""


def test_a_spec_loads_and_draws_without_credentials(clean_env, tmp_path: Path, capsys) -> None:
    spec = tmp_path / "team.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    team = load_spec(spec)
    assert "writer" in team.draw("mermaid") and "editor" in team.draw("mermaid")
    team.compile()
    assert cli_main(["draw", str(spec)]) == 0
    assert "writer" in capsys.readouterr().out
    # the key is asked for when a call is made, naming the variable to set
    with pytest.raises(GraphflowConfigError, match=r"`writer`.*needs an API key.*OPENAI_API_KEY"):
        team.invoke("tea")


def test_a_missing_key_is_raised_by_the_first_call_or_require_api_key(clean_env) -> None:
    model = openai_model("gpt-4o-mini")  # no key anywhere: building is fine
    with pytest.raises(GraphflowConfigError, match=r"needs an API key.*OPENAI_API_KEY"):
        require_api_key(model)  # what a runner calls when a run starts
    with pytest.raises(GraphflowConfigError, match=r"needs an API key"):
        model.invoke("hi")
    require_api_key(openai_model("gpt-4o-mini", api_key="sk"))  # a key: nothing to say


@pytest.mark.parametrize("model", ["foo:bar", "anthropic:claude-3", "gpt-4o-mini"])
def test_an_unknown_provider_in_a_fallback_is_refused_at_construction(model) -> None:
    with pytest.raises(GraphflowConfigError, match=r"deepseek.*openai") as caught:
        ModelFallback([model])
    assert repr(model) in str(caught.value)


def test_the_context_window_is_the_resolved_models() -> None:
    assert context_window("dashscope:qwen-max") == context_window("qwen-max") == 32_768
    assert context_window("qwen:qwen-plus") == 131_072
    assert context_window("deepseek:deepseek-chat") == 128_000
    assert context_window(openai_model("qwen-max", api_key="sk")) == 32_768


class Verdict(BaseModel):
    score: int


@pytest.mark.parametrize("second", ["", "   "])
def test_an_output_schema_agent_never_ends_empty(tmp_path: Path, second: str) -> None:
    model = ScriptedChatModel(replies=["", second])
    judge = ReactAgent(name="judge", model=model, output_schema=Verdict, output_key="verdict")
    team = SequentialAgent(name="team", sub_agents=[judge])
    url = f"sqlite:///{tmp_path}/runs.db"
    with pytest.raises(OutputValidationError, match=r"`judge`.*empty reply twice.*Verdict"):
        team.invoke("go", thread_id="t", checkpointer=url)
    assert model.calls == 2
    assert [r.status for r in team.runs(checkpointer=url)] == ["failed"]


def test_an_output_schema_agent_at_max_iterations_fails(tmp_path: Path) -> None:
    @tool
    def search(query: str) -> str:
        """Search."""
        return "nothing"

    model = ScriptedChatModel(replies=[tool_call("search", {"query": "a"})] * 3)
    judge = ReactAgent(
        name="judge",
        model=model,
        tools=[search],
        output_schema=Verdict,
        max_iterations=2,
        output_key="verdict",
    )
    with pytest.raises(OutputValidationError, match=r"max_iterations=2 without a final answer"):
        judge.invoke("go")


def test_tool_calls_without_ids_each_run_once() -> None:
    ran: list[str] = []

    @tool
    def search(query: str) -> str:
        """Search."""
        ran.append(query)
        return f"found {query}"

    turn = AIMessage(
        content="",
        tool_calls=[
            {"name": "search", "args": {"query": "a"}, "id": "", "type": "tool_call"},
            {"name": "search", "args": {"query": "b"}, "id": "", "type": "tool_call"},
            {"name": "search", "args": {"query": "c"}, "id": None, "type": "tool_call"},
        ],
    )
    model = ScriptedChatModel(replies=[turn, "done"])
    agent = ReactAgent(name="a", model=model, tools=[search], output_key="out")
    state = agent.invoke("go")
    assert sorted(ran) == ["a", "b", "c"] and state["out"] == "done"
    results = [m for m in state["messages"] if m.type == "tool"]
    assert len({m.tool_call_id for m in results}) == 3
