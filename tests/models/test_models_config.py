"""Model strings, `openai_model`, settings, environment variables and provider presets."""

from __future__ import annotations

import dataclasses

import pytest
from langchain_openai import OpenAI

from graphflow import (
    FunctionAgent,
    GraphflowConfigError,
    LlmRoutingAgent,
    ReactAgent,
    SequentialAgent,
)
from graphflow.models import (
    CompatibleChatOpenAI,
    ProviderPreset,
    detect_preset,
    get_preset,
    openai_model,
    register_preset,
    resolve_model,
    structured_methods,
)
from graphflow.testing import ScriptedChatModel
from tests.models.openai_server import OpenAIServer


@pytest.mark.parametrize("kind", [ReactAgent, LlmRoutingAgent])
@pytest.mark.parametrize(
    ("model", "match"),
    [
        ("openai:", r"names no model.*GRAPHFLOW_MODEL"),
        ("openai:  ", r"names no model"),
        ("gpt-4o-mini", r"use 'openai:<model name>'"),
        ("anthropic:claude-3", r"unknown model provider 'anthropic'.*deepseek"),
        ("openai:text-embedding-3-small", r"not a chat model"),
        ("openai:gpt-3.5-turbo-instruct", r"not a chat model"),
    ],
)
def test_bad_model_strings_fail_when_the_spec_is_built(kind, model, match, clean_env) -> None:
    extra = {"sub_agents": [ReactAgent(name="r", model=ScriptedChatModel())]}
    with pytest.raises(GraphflowConfigError, match=match) as caught:
        kind(name="writer", model=model, **(extra if kind is LlmRoutingAgent else {}))
    assert "writer" in str(caught.value)


def test_a_model_that_is_not_a_chat_model_fails_at_construction(clean_env) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(GraphflowConfigError, match=r"`a`.*OpenAI, not a chat model.*ChatOpenAI"):
        ReactAgent(name="a", model=OpenAI(model="gpt-3.5-turbo-instruct"))
    with pytest.raises(GraphflowConfigError, match=r"model is a dict, not a chat model"):
        ReactAgent(name="a", model={"name": "gpt-4o"})
    # chat-capable instruct models served by vLLM / Ollama are chat models
    ReactAgent(name="a", model="openai:Qwen2.5-7B-Instruct")
    ReactAgent(name="b", model="ollama:llama3.2:3b-instruct")


def test_environment_configures_openai_strings(clean_env) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-env")
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    clean_env.setenv("GRAPHFLOW_MAX_TOKENS", "64")
    clean_env.setenv("GRAPHFLOW_MODEL_TIMEOUT", "7.5")
    clean_env.setenv("GRAPHFLOW_MODEL_RETRIES", "5")
    model = ReactAgent(name="a", model="openai:qwen-plus").chat_model()
    assert isinstance(model, CompatibleChatOpenAI)
    assert (model.model_name, model.openai_api_base) == ("qwen-plus", "http://127.0.0.1:9/v1")
    assert model.openai_api_key is not None and model.openai_api_key.get_secret_value() == "sk-env"
    assert (model.max_tokens, model.request_timeout, model.max_retries) == (64, 7.5, 5)
    assert model.preset.name == "openai-compatible"


def test_model_settings_win_over_the_environment(clean_env) -> None:
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    clean_env.setenv("GRAPHFLOW_MAX_TOKENS", "64")
    agent = ReactAgent(
        name="a",
        model="openai:qwen-plus",
        model_settings={
            "base_url": "http://127.0.0.1:10/v1",
            "api_key": "sk-settings",
            "timeout": 3,
            "max_retries": 0,
            "max_tokens": 16,
            "temperature": 0.2,
            "extra_body": {"enable_thinking": False},
            "default_headers": {"X-Team": "graphflow"},
            "seed": 7,
            "repetition_penalty": 1.1,
        },
    )
    model = agent.chat_model()
    assert model.openai_api_base == "http://127.0.0.1:10/v1"
    assert (model.request_timeout, model.max_retries, model.max_tokens) == (3.0, 0, 16)
    assert (model.temperature, model.seed) == (0.2, 7)
    # not a ChatOpenAI field: a provider parameter, sent as a body field
    assert model.extra_body == {"enable_thinking": False, "repetition_penalty": 1.1}
    assert model.default_headers == {"X-Team": "graphflow"}
    assert model.model_kwargs == {}


def test_arguments_win_over_the_environment(clean_env) -> None:
    for name, value in (
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ("OPENAI_API_KEY", "sk-env"),
        ("GRAPHFLOW_MODEL", "env-model"),
        ("GRAPHFLOW_MAX_TOKENS", "64"),
        ("GRAPHFLOW_MODEL_TIMEOUT", "7.5"),
        ("GRAPHFLOW_MODEL_RETRIES", "5"),
    ):
        clean_env.setenv(name, value)
    model = openai_model(
        "arg-model",
        base_url="http://127.0.0.1:10/v1",
        api_key="sk-arg",
        timeout=3,
        max_retries=1,
        max_tokens=16,
        temperature=0.5,
        extra_body={"top_k": 20},
        default_headers={"X-Team": "graphflow"},
    )
    assert (model.model_name, model.openai_api_base) == ("arg-model", "http://127.0.0.1:10/v1")
    assert model.openai_api_key is not None and model.openai_api_key.get_secret_value() == "sk-arg"
    assert (model.request_timeout, model.max_retries, model.max_tokens) == (3.0, 1, 16)
    assert (model.temperature, model.extra_body) == (0.5, {"top_k": 20})
    assert model.default_headers == {"X-Team": "graphflow"}


def test_defaults_without_environment(clean_env) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk")
    model = openai_model("gpt-4o-mini")
    assert (model.request_timeout, model.max_retries, model.max_tokens) == (120.0, 2, None)
    assert model.openai_api_base is None and model.preset.name == "openai"


@pytest.mark.parametrize(
    ("env", "value", "match"),
    [
        ("GRAPHFLOW_MAX_TOKENS", "lots", r"GRAPHFLOW_MAX_TOKENS='lots'.*positive integer"),
        ("GRAPHFLOW_MAX_TOKENS", "0", r"GRAPHFLOW_MAX_TOKENS='0'"),
        ("GRAPHFLOW_MODEL_TIMEOUT", "-1", r"GRAPHFLOW_MODEL_TIMEOUT='-1'.*positive number"),
        ("GRAPHFLOW_MODEL_RETRIES", "x", r"GRAPHFLOW_MODEL_RETRIES='x'.*non-negative integer"),
        ("GRAPHFLOW_PROVIDER", "acme", r"unknown model provider 'acme'"),
    ],
)
def test_bad_environment_values_are_config_errors(clean_env, env, value, match) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk")
    clean_env.setenv(env, value)
    agent = ReactAgent(name="writer", model="openai:gpt-4o-mini")
    with pytest.raises(GraphflowConfigError, match=match):
        agent.compile()


def test_bad_setting_values_are_config_errors(clean_env) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk")
    agent = ReactAgent(name="writer", model="openai:m", model_settings={"max_tokens": "many"})
    with pytest.raises(GraphflowConfigError, match=r"`writer`: max_tokens is 'many'"):
        agent.compile()


def test_graphflow_model_names_the_model_of_openai_model(clean_env) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk")
    with pytest.raises(GraphflowConfigError, match=r"no model name.*GRAPHFLOW_MODEL"):
        openai_model()
    clean_env.setenv("GRAPHFLOW_MODEL", "deepseek-chat")
    assert openai_model().model_name == "deepseek-chat"


def test_api_keys(clean_env) -> None:
    # a missing key is no obstacle to building, drawing or compiling; the first call says it
    writer = ReactAgent(name="writer", model="openai:gpt-4o-mini")
    writer.compile()
    with pytest.raises(GraphflowConfigError, match=r"`writer`.*OPENAI_API_KEY"):
        writer.invoke("hi")
    clean_env.setenv("OPENAI_API_KEY", "sk-openai")
    with pytest.raises(GraphflowConfigError, match=r"needs an API key.*: set DEEPSEEK_API_KEY \("):
        # never sends the OpenAI key there
        openai_model("deepseek-chat", provider="deepseek").invoke("hi")
    # pointed there through OPENAI_BASE_URL, the generic key is the user's choice
    clean_env.setenv("OPENAI_BASE_URL", "https://api.deepseek.com/v1")
    generic = openai_model("deepseek-chat")
    assert generic.preset.name == "deepseek" and generic.openai_api_key is not None
    assert generic.openai_api_key.get_secret_value() == "sk-openai"
    clean_env.delenv("OPENAI_BASE_URL")
    clean_env.delenv("OPENAI_API_KEY")
    with pytest.raises(GraphflowConfigError, match=r"endpoint https://llm\.example\.com/v1"):
        openai_model("m", base_url="https://llm.example.com/v1").invoke("hi")
    # local servers need no key; local presets bring their own placeholder
    assert openai_model("m", base_url="http://localhost:8000/v1").openai_api_key is not None
    ollama = openai_model("qwen2.5", provider="ollama")
    assert ollama.openai_api_base == "http://localhost:11434/v1"
    assert ollama.openai_api_key is not None
    assert ollama.openai_api_key.get_secret_value() == "ollama"
    clean_env.setenv("DEEPSEEK_API_KEY", "sk-deepseek")
    deepseek = openai_model("deepseek-chat", provider="deepseek")
    assert deepseek.openai_api_key is not None
    assert deepseek.openai_api_key.get_secret_value() == "sk-deepseek"


def test_provider_strings_pick_their_preset(clean_env) -> None:
    clean_env.setenv("DASHSCOPE_API_KEY", "sk-ds")
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # for other agents
    model = ReactAgent(name="a", model="qwen:qwen-plus").chat_model()
    assert model.openai_api_base == "https://dashscope.aliyuncs.com/compatible-mode/v1"
    assert model.preset.name == "dashscope"
    assert model.use_responses_api is False
    assert structured_methods(model) == ("function_calling", "json_mode", "prompt")
    local = ReactAgent(name="b", model="llamacpp:qwen2.5-0.5b-instruct").chat_model()
    assert local.openai_api_base == "http://localhost:8080/v1"
    assert structured_methods(local) == ("json_mode", "prompt", "function_calling")


def test_presets_are_detected_from_the_base_url() -> None:
    assert detect_preset(None).name == "openai"
    assert detect_preset("https://api.openai.com/v1").name == "openai"
    assert (
        detect_preset("https://dashscope-intl.aliyuncs.com/compatible-mode/v1").name == "dashscope"
    )
    assert detect_preset("https://api.deepseek.com").name == "deepseek"
    assert detect_preset("http://gpu-box:11434/v1").name == "ollama"
    assert detect_preset("http://127.0.0.1:8000/v1").name == "openai-compatible"
    assert get_preset("llama.cpp").name == "llamacpp" and get_preset("Qwen").name == "dashscope"


def test_presets_are_overridable(clean_env) -> None:
    original = get_preset("vllm")
    try:
        register_preset(
            dataclasses.replace(original, structured_output=("prompt",), hosts=("gpu-box",))
        )
        model = openai_model("llama", base_url="http://gpu-box:8000/v1", api_key="x")
        assert model.preset.name == "vllm"
        assert structured_methods(model) == ("prompt",)
        register_preset(
            ProviderPreset(
                name="acme", base_url="https://llm.acme.test/v1", api_key_env="ACME_KEY"
            ),
            aliases=("acme-cloud",),
        )
        clean_env.setenv("ACME_KEY", "k")
        acme = ReactAgent(name="a", model="acme-cloud:big").chat_model()
        assert acme.openai_api_base == "https://llm.acme.test/v1"
    finally:
        register_preset(original)
    with pytest.raises(GraphflowConfigError, match=r"structured_output \('xml',\)"):
        ProviderPreset(name="bad", base_url=None, structured_output=("xml",))  # type: ignore[arg-type]


def test_client_options_on_a_model_instance_are_config_errors() -> None:
    agent = ReactAgent(
        name="a", model=ScriptedChatModel(replies=["x"]), model_settings={"base_url": "http://x"}
    )
    with pytest.raises(
        GraphflowConfigError, match=r"`a`: model_settings \['base_url'\].*constructor"
    ):
        agent.compile()
    # request settings are fine and still bound to every call
    ok = ReactAgent(
        name="b", model=ScriptedChatModel(replies=["x"]), model_settings={"temperature": 0}
    )
    assert ok.invoke("hi")["messages"][-1].content == "x"


def test_client_options_in_settings_never_reach_the_wire(make_server, clean_env) -> None:
    server = make_server("openai_strict").start()  # strict: unknown fields are a 400
    agent = ReactAgent(
        name="a",
        model="openai:gpt-4o-mini",
        model_settings={
            "base_url": server.base_url,
            "api_key": "sk-test",
            "max_retries": 0,
            "default_headers": {"X-Team": "graphflow"},
            "extra_body": {"user": "team-7"},
            "timeout": 10,
            "temperature": 0.0,
        },
        output_key="answer",
    )
    assert agent.invoke("hi")["answer"].startswith("gpt-4o-mini answers: hi")
    (received,) = server.requests
    assert received.headers["x-team"] == "graphflow"
    assert received.headers["authorization"] == "Bearer sk-test"
    assert received.body["user"] == "team-7" and received.body["temperature"] == 0.0
    assert not {"base_url", "api_key", "max_retries", "default_headers"} & set(received.body)


@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
def test_provider_parameters_and_constructor_fields_in_settings(
    make_server, clean_env, streamed
) -> None:
    # bound to every call as well as applied when the model is built: a provider's own
    # parameters must reach the body, constructor-only fields must not reach create()
    server: OpenAIServer = make_server("ignore_max_completion_tokens").start()
    agent = ReactAgent(
        name="a",
        model="openai:m",
        model_settings={
            "base_url": server.base_url,
            "api_key": "sk-test",
            "top_k": 20,
            "repetition_penalty": 1.1,
            "stream_usage": True,
            "top_p": 0.5,
        },
        output_key="answer",
    )
    if streamed:
        events = list(agent.stream("hi", thread_id="s"))
        assert events[-1].usage.estimated is False  # stream_usage asked the server for usage
    else:
        assert agent.invoke("hi")["answer"].startswith("m answers: hi")
    (received,) = server.requests
    body = received.body
    assert (body["top_k"], body["repetition_penalty"], body["top_p"]) == (20, 1.1, 0.5)
    assert "stream_usage" not in body
    assert body.get("stream_options") == ({"include_usage": True} if streamed else None)
    # a model instance's own model_kwargs travel the same way
    direct = openai_model("m", base_url=server.base_url, model_kwargs={"min_p": 0.1})
    direct.invoke("hi")
    assert server.requests[-1].body["min_p"] == 0.1


def test_resolve_passes_instances_through() -> None:
    model = ScriptedChatModel(replies=["x"])
    assert resolve_model(model, agent="a") is model


def test_string_content_and_token_field_can_be_forced(make_server, clean_env) -> None:
    server: OpenAIServer = make_server("no_null_content").start()
    model = openai_model(
        "m",
        base_url=server.base_url,
        string_tool_content=True,
        max_tokens_field="max_completion_tokens",
        max_tokens=5,
    )
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    history = [
        HumanMessage(content="weather?"),
        AIMessage(content="", tool_calls=[{"name": "w", "args": {}, "id": "c1"}]),
        ToolMessage(content="sunny", tool_call_id="c1"),
    ]
    model.invoke(history)
    (received,) = server.requests  # no rejection: string content from the start
    assert received.body["messages"][1]["content"] == ""
    assert received.body["max_completion_tokens"] == 5 and "max_tokens" not in received.body


def test_a_directly_built_model_follows_the_sdks_base_url(make_server, clean_env) -> None:
    # built without base_url, the openai SDK reads OPENAI_BASE_URL itself: the preset (and so
    # the max-tokens field) must follow that endpoint, not assume OpenAI
    server: OpenAIServer = make_server("ignore_max_completion_tokens").start()
    clean_env.setenv("OPENAI_BASE_URL", server.base_url)
    model = CompatibleChatOpenAI(model="m", api_key="sk-test", max_tokens=5)  # type: ignore[arg-type]
    assert model.openai_api_base is None and model.preset.name == "openai-compatible"
    assert len(str(model.invoke("Say a lot").content).split()) == 5
    assert server.requests[0].body["max_tokens"] == 5
    clean_env.delenv("OPENAI_BASE_URL")
    assert CompatibleChatOpenAI(model="m", api_key="sk-test").preset.name == "openai"  # type: ignore[arg-type]


def test_a_missing_key_stops_the_run_before_any_agent_runs(clean_env) -> None:
    ran: list[str] = []

    def first(state):
        ran.append("first")
        return "prepared"

    team = SequentialAgent(
        name="team",
        sub_agents=[
            FunctionAgent(name="prepare", fn=first, output_key="prepared"),
            ReactAgent(name="writer", model="openai:gpt-4o-mini", output_key="draft"),
        ],
    )
    team.draw()  # drawing needs no key
    with pytest.raises(GraphflowConfigError, match=r"`writer`.*OPENAI_API_KEY"):
        team.invoke("hi")
    assert ran == []  # refused when the run started, not at the writer's first call
