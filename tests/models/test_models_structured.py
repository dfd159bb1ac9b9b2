"""`structured_output` methods, `auto`'s fallback and memory, and the JSON parsing."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from pydantic import BaseModel, ValidationError

from graphflow import ReactAgent
from graphflow.exceptions import ModelServerError
from graphflow.models import (
    ainvoke_structured,
    get_preset,
    invoke_structured,
    openai_model,
    parse_structured,
    register_preset,
    structured_methods,
)
from graphflow.testing import ScriptedChatModel, tool_call
from tests.models.openai_server import OpenAIServer


class Verdict(BaseModel):
    """A product verdict."""

    product: str
    score: int


def _agent(server: OpenAIServer, method: str, **extra: object) -> ReactAgent:
    return ReactAgent(
        name="rater",
        model=openai_model("m", base_url=server.base_url),
        output_schema=Verdict,
        structured_output=method,  # type: ignore[arg-type]
        output_key="verdict",
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("method", "shape"),
    [
        ("json_schema", {"response_format": "json_schema"}),
        ("json_mode", {"response_format": "json_object"}),
        (
            "function_calling",
            {"tool_choice": {"type": "function", "function": {"name": "Verdict"}}},
        ),
        ("prompt", {}),
    ],
)
def test_each_method_against_a_strict_server(make_server, clean_env, method, shape) -> None:
    server = make_server("openai_strict").start()
    verdict = _agent(server, method).invoke("rate it")["verdict"]
    assert verdict == Verdict(product="rate it", score=1)
    (received,) = server.requests
    body = received.body
    if "response_format" in shape:
        assert body["response_format"]["type"] == shape["response_format"]
    else:
        assert "response_format" not in body
    if "tool_choice" in shape:
        assert body["tool_choice"] == shape["tool_choice"]
        assert [t["function"]["name"] for t in body["tools"]] == ["Verdict"]
    else:
        assert "tools" not in body
    system = body["messages"][0]
    assert system["role"] == "system" and "JSON schema:" in system["content"]


def test_function_calling_with_real_tools_runs_them_first(make_server, clean_env) -> None:
    server = make_server("openai_strict").start()
    looked: list[str] = []

    @tool
    def lookup(product: str) -> str:
        """Look a product up."""
        looked.append(product)
        return "facts"

    result = _agent(server, "function_calling", tools=[lookup]).invoke("rate the Pura X")
    assert looked == ["rate the Pura X"]
    assert result["verdict"] == Verdict(product="rate the Pura X", score=1)
    first, second = (r.body for r in server.requests)
    assert first["tool_choice"] == second["tool_choice"] == "required"
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup", "Verdict"]
    # the final message is plain JSON text: no dangling schema tool call in the history
    final = result["messages"][-1]
    assert isinstance(final, AIMessage) and not final.tool_calls
    assert Verdict.model_validate_json(final.text) == result["verdict"]


def test_auto_falls_back_and_remembers(make_server, clean_env) -> None:
    server = make_server("no_json_schema").start()
    agent = _agent(server, "auto")
    assert agent.invoke("rate it")["verdict"].score == 1
    outcomes = [
        (r.outcome, (r.body.get("response_format") or {}).get("type")) for r in server.requests
    ]
    assert outcomes == [("500", "json_schema")] * 3 + [("answered", None)]
    assert server.requests[-1].body["tool_choice"]["function"]["name"] == "Verdict"
    # remembered for this model: the next run goes straight to function_calling
    assert structured_methods(agent.chat_model())[0] == "function_calling"
    before = len(server.requests)
    assert agent.invoke("rate it again")["verdict"].score == 1
    assert [r.outcome for r in server.requests[before:]] == ["answered"]


def test_auto_falls_back_when_tools_are_rejected(make_server, clean_env) -> None:
    # a DeepSeek-like preset starts with a forced tool call; a model without tool calling
    # (deepseek-reasoner) answers 400 naming tools, which the SDK does not retry
    server = make_server("no_tools").start()
    model = openai_model("m", base_url=server.base_url, provider="deepseek", api_key="sk")
    agent = ReactAgent(name="a", model=model, output_schema=Verdict, output_key="v")
    assert agent.invoke("rate it")["v"] == Verdict(product="rate it", score=1)
    sent = [
        (r.outcome, "tools" in r.body, (r.body.get("response_format") or {}).get("type"))
        for r in server.requests
    ]
    assert sent == [("400", True, None), ("answered", False, "json_object")]
    assert structured_methods(model)[0] == "json_mode"


def test_explicit_method_is_not_replaced(make_server, clean_env) -> None:
    server = make_server("no_json_schema").start()
    with pytest.raises(ModelServerError, match=r"structured_output='json_mode'") as caught:
        _agent(server, "json_schema").invoke("rate it")
    # the server's own words, from its non-OpenAI error body
    assert "(body.response_format.type: Input should be 'text' or 'json_object')" in str(
        caught.value
    )


def test_preset_order_is_followed(make_server, clean_env) -> None:
    server = make_server("openai_strict").start()
    original = get_preset("llamacpp")
    try:
        register_preset(dataclasses.replace(original, structured_output=("prompt",)))
        model = openai_model("m", base_url=server.base_url, provider="llamacpp")
        agent = ReactAgent(name="a", model=model, output_schema=Verdict, output_key="v")
        assert agent.invoke("rate it")["v"].score == 1
    finally:
        register_preset(original)
    body = server.requests[0].body
    assert "response_format" not in body and "tools" not in body


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_invoke_structured_adds_the_schema_to_the_first_system_message(
    make_server, clean_env, mode
) -> None:
    server = make_server("openai_strict").start()
    model = openai_model("m", base_url=server.base_url)
    messages = [SystemMessage(content="You rate products."), HumanMessage(content="rate")]
    if mode == "sync":
        verdict = invoke_structured(model, Verdict, messages, method="json_mode")
    else:
        verdict = asyncio.run(ainvoke_structured(model, Verdict, messages, method="json_mode"))
    assert verdict == Verdict(product="rate", score=1)
    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[0]["content"].startswith("You rate products.\n\nWhen you give your final answer")


def test_other_chat_models_keep_their_paths() -> None:
    # auto: the prompt method in a ReAct agent, LangChain's with_structured_output in a router
    model = ScriptedChatModel(replies=['{"product": "x", "score": 3}'])
    assert structured_methods(model) == ("prompt",)
    agent = ReactAgent(name="a", model=model, output_schema=Verdict, output_key="v")
    assert agent.invoke("rate")["v"] == Verdict(product="x", score=3)
    assert model.request_tools == [[]]
    chooser = ScriptedChatModel(replies=[Verdict(product="y", score=2)])
    assert invoke_structured(chooser, Verdict, [HumanMessage(content="rate")]) == Verdict(
        product="y", score=2
    )


def test_a_react_agent_takes_json_wrapped_in_prose() -> None:
    # small local models often say a word before the JSON: no re-ask is needed for that
    model = ScriptedChatModel(replies=['Sure! Here it is: {"product": "c", "score": 3} Done.'])
    agent = ReactAgent(name="a", model=model, output_schema=Verdict, output_key="v")
    assert agent.invoke("rate")["v"] == Verdict(product="c", score=3)
    assert model.calls == 1


def test_function_calling_on_any_tool_calling_model() -> None:
    model = ScriptedChatModel(replies=[tool_call("Verdict", {"product": "z", "score": 9})])
    agent = ReactAgent(
        name="a",
        model=model,
        output_schema=Verdict,
        structured_output="function_calling",
        output_key="v",
    )
    assert agent.invoke("rate")["v"] == Verdict(product="z", score=9)
    assert model.request_tools == [["Verdict"]]


def test_parse_structured() -> None:
    assert parse_structured(Verdict, '{"product": "a", "score": 1}').score == 1
    fenced = AIMessage(content='Here:\n```json\n{"product": "b", "score": 2}\n```')
    assert parse_structured(Verdict, fenced).product == "b"
    assert parse_structured(Verdict, 'Sure! {"product": "c", "score": 3} Done.').score == 3
    with pytest.raises(ValueError, match="no JSON object"):
        parse_structured(Verdict, "I cannot do that")
    with pytest.raises(ValidationError):
        parse_structured(Verdict, '{"product": "d"}')
