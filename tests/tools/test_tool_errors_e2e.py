"""Each ToolErrorType end to end through a ReactAgent: what the model sees next, retries, the stop."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphflow import ReactAgent, ToolHook
from graphflow.exceptions import InvalidToolParamError, ToolError
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.tools import ToolErrorType, ToolPolicy, tool_result

calls: Counter[str] = Counter()


def _last_tool_message(model: ScriptedChatModel, request: int = 1) -> ToolMessage:
    message = model.requests[request][-1]
    assert isinstance(message, ToolMessage)
    return message


def _agent(model, tools, **kwargs):
    return ReactAgent(name="worker", model=model, tools=tools, output_key="out", **kwargs)


@tool
def weather(city: str, days: int) -> str:
    """Forecast for a city."""
    calls["weather"] += 1
    return f"{city}: sunny for {days} days"


def test_invalid_arguments_go_back_to_the_model_which_regenerates(run_mode):
    calls.clear()
    model = ScriptedChatModel(
        replies=[
            tool_call("weather", {"city": "Paris", "days": "many"}),
            tool_call("weather", {"city": "Paris", "days": 2}),
            "Sunny.",
        ]
    )
    result = run_mode.invoke(_agent(model, [weather]), "go")
    error = _last_tool_message(model, 1)
    assert error.status == "error"
    assert error.content.startswith("Error [INVALID_PARAM] in tool `weather`:")
    assert "days" in error.content and "Hint: fix the arguments" in error.content
    assert "errors.pydantic.dev" not in error.content
    info = tool_result(error)
    assert info is not None and not info.success
    assert info.error_type is ToolErrorType.INVALID_PARAM
    assert info.error_message in error.content and info.data == error.content
    ok = _last_tool_message(model, 2)
    assert ok.status == "success" and ok.content == "Paris: sunny for 2 days"
    assert tool_result(ok).success
    assert calls["weather"] == 1  # the invalid call never reached the function
    assert result["out"] == "Sunny."


def test_unknown_tool_reaches_tool_hooks_first_then_names_the_available_tools(run_mode):
    seen = []

    class Spy(ToolHook):
        def wrap_tool_call(self, request, handler):
            seen.append((request.tool_call["name"], request.tool))
            return handler(request)

    model = ScriptedChatModel(replies=[tool_call("wether", {"city": "Paris"}), "sorry"])
    result = run_mode.invoke(_agent(model, [weather], hooks=[Spy()]), "go")
    assert seen == [("wether", None)]
    error = _last_tool_message(model)
    assert error.status == "error" and "[INVALID_PARAM]" in error.content
    assert "'wether'" in error.content and "available tools: weather" in error.content
    assert result["out"] == "sorry"


def test_invalid_params_are_bounded_per_tool(run_mode):
    model = ScriptedChatModel(fn=lambda messages, n: tool_call("weather", {"city": "Paris"}))
    agent = _agent(model, [weather], tool_policies={"weather": ToolPolicy(max_invalid_params=2)})
    with pytest.raises(ToolError, match="invalid arguments 3 times in a row") as err:
        run_mode.invoke(agent, "go")
    assert err.value.error_type == "INVALID_PARAM" and err.value.tool == "weather"
    assert model.calls == 3  # two errors went back to the model, the third stopped the run


def test_a_model_that_keeps_naming_a_missing_tool_is_stopped_too(run_mode):
    model = ScriptedChatModel(fn=lambda messages, n: tool_call("wether", {"city": "Paris"}))
    agent = _agent(model, [weather], default_tool_policy=ToolPolicy(max_invalid_params=1))
    with pytest.raises(ToolError, match="`wether` does not exist and was asked for 2 times"):
        run_mode.invoke(agent, "go")
    assert model.calls == 2


def test_a_tool_chooses_its_error_type_by_raising_a_typed_error(run_mode):
    @tool
    def book(day: str) -> str:
        """Book a day."""
        raise InvalidToolParamError("day must be a weekday", hint="use Monday to Friday")

    model = ScriptedChatModel(replies=[tool_call("book", {"day": "Sunday"}), "ok"])
    run_mode.invoke(_agent(model, [book]), "go")
    error = _last_tool_message(model)
    assert "[INVALID_PARAM]" in error.content and "day must be a weekday" in error.content
    assert error.content.endswith("Hint: use Monday to Friday")


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (PermissionError("no access to /etc/shadow"), "PERMISSION_DENIED"),
        (FileNotFoundError("report.txt"), "RESOURCE_NOT_FOUND"),
        (KeyError("order 42"), "RESOURCE_NOT_FOUND"),
    ],
)
def test_permission_and_not_found_errors_go_back_to_the_model(run_mode, exc, kind):
    @tool
    def fetch(path: str) -> str:
        """Fetch a file."""
        raise exc

    model = ScriptedChatModel(replies=[tool_call("fetch", {"path": "x"}), "could not"])
    result = run_mode.invoke(_agent(model, [fetch]), "go")
    error = _last_tool_message(model)
    assert error.status == "error" and error.content.startswith(f"Error [{kind}] in tool `fetch`")
    assert "Hint:" in error.content
    assert tool_result(error).error_type == kind
    assert result["out"] == "could not"
    assert result["agent_status"]["worker"] == "completed"


def test_timeouts_are_retried_with_backoff_and_counted(run_mode):
    attempts = Counter()

    @tool
    def flaky(q: str) -> str:
        """Times out twice."""
        attempts["n"] += 1
        if attempts["n"] <= 2:
            raise TimeoutError("upstream slow")
        return "answer"

    model = ScriptedChatModel(replies=[tool_call("flaky", {"q": "x"}), "done"])
    policy = ToolPolicy(max_retries=3, backoff=0.01)
    run_mode.invoke(_agent(model, [flaky], default_tool_policy=policy), "go")
    message = _last_tool_message(model)
    assert message.content == "answer" and message.status == "success"
    assert attempts["n"] == 3 and tool_result(message).attempts == 3


def test_timeouts_beyond_max_retries_reach_the_model(run_mode):
    attempts = Counter()

    @tool
    def down(q: str) -> str:
        """Always times out."""
        attempts["n"] += 1
        raise TimeoutError("upstream slow")

    model = ScriptedChatModel(replies=[tool_call("down", {"q": "x"}), "gave up"])
    policy = ToolPolicy(max_retries=2, backoff=0)
    result = run_mode.invoke(_agent(model, [down], default_tool_policy=policy), "go")
    message = _last_tool_message(model)
    assert message.content.startswith("Error [TIMEOUT] in tool `down`: TimeoutError: upstream slow")
    assert "(tried 3 times)" in message.content
    assert attempts["n"] == 3 and tool_result(message).attempts == 3
    assert result["out"] == "gave up"


def test_unknown_error_stops_the_run_and_resume_reruns_that_call(run_mode):
    broken = {"yes": True}
    attempts = Counter()

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        attempts["n"] += 1
        if broken["yes"]:
            raise RuntimeError("database driver crashed")
        return "found it"

    model = ScriptedChatModel(replies=[tool_call("lookup", {"q": "x"}), "done"])
    agent = _agent(model, [lookup])
    with pytest.raises(ToolError, match="database driver crashed") as err:
        run_mode.invoke(agent, "go", thread_id="t-unknown")
    assert err.value.error_type == "UNKNOWN" and err.value.agent == "worker"
    assert isinstance(err.value.__cause__, RuntimeError)
    assert "agent.resume(thread_id)" in str(err.value)
    snapshot = agent.get_state("t-unknown")
    assert [t.name for t in snapshot.tasks] == ["tools"]
    assert "database driver crashed" in str(snapshot.tasks[0].error)
    assert model.calls == 1
    # the run's record: failed, in this agent, with the error (what `graphflow runs` shows)
    (info,) = [r for r in agent.runs() if r.thread_id == "t-unknown"]
    assert (info.status, info.agent) == ("failed", "worker")
    assert info.error.startswith("ToolError")
    assert "Agent `worker`: tool `lookup` failed" in info.error
    assert "database driver crashed" in info.error and "agent.resume" in info.hint

    broken["yes"] = False  # the fix
    result = run_mode.resume(agent, "t-unknown")
    assert attempts["n"] == 2 and model.calls == 2
    assert result["out"] == "done" and result["agent_status"]["worker"] == "completed"
    assert _last_tool_message(model).content == "found it"
    (info,) = [r for r in agent.runs() if r.thread_id == "t-unknown"]
    assert info.status == "done" and info.error is None


def test_an_unknown_error_is_logged_and_streamed_as_the_agent_failing(caplog):
    from graphflow.events import AgentFailed

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        raise RuntimeError("database driver crashed")

    model = ScriptedChatModel(replies=[tool_call("lookup", {"q": "x"}), "done"])
    events = []
    with caplog.at_level("ERROR", logger="graphflow.tools"), pytest.raises(ToolError):
        for event in _agent(model, [lookup]).stream("go", thread_id="t-stream"):
            events.append(event)
    assert any(
        "agent worker: tool lookup failed" in r.getMessage() and r.levelname == "ERROR"
        for r in caplog.records
    )
    failed = [e for e in events if isinstance(e, AgentFailed)]
    assert failed and "database driver crashed" in failed[-1].error
    assert failed[-1].error_type == "ToolError"


def test_sys_exit_inside_a_tool_is_a_tool_error_not_the_end_of_the_process(run_mode):
    @tool
    def quitter(q: str) -> str:
        """Exits."""
        raise SystemExit(3)

    model = ScriptedChatModel(replies=[tool_call("quitter", {"q": "x"}), "done"])
    with pytest.raises(ToolError, match=r"sys.exit\(3\)"):
        run_mode.invoke(_agent(model, [quitter]), "go")


def test_recovery_table_is_configurable(run_mode):
    @tool
    def shaky(q: str) -> str:
        """Fails."""
        raise RuntimeError("odd")

    model = ScriptedChatModel(replies=[tool_call("shaky", {"q": "x"}), "fine"])
    policy = ToolPolicy(recovery={ToolErrorType.UNKNOWN: "return"})
    result = run_mode.invoke(_agent(model, [shaky], tool_policies={"shaky": policy}), "go")
    assert _last_tool_message(model).content.startswith("Error [UNKNOWN] in tool `shaky`")
    assert result["out"] == "fine"


def test_tool_policies_must_name_the_agents_tools():
    with pytest.raises(
        ValueError, match=r"tool_policies names \['wether'\].*its tools: \['weather'\]"
    ):
        _agent(ScriptedChatModel(replies=["x"]), [weather], tool_policies={"wether": ToolPolicy()})


def test_retries_wait_backoff_then_twice_as_long_each_time(run_mode):
    moments = []

    @tool
    def stuck(q: str) -> str:
        """Always times out."""
        moments.append(time.monotonic())
        raise TimeoutError("upstream slow")

    model = ScriptedChatModel(replies=[tool_call("stuck", {"q": "x"}), "gave up"])
    policy = ToolPolicy(max_retries=3, backoff=0.1)
    run_mode.invoke(_agent(model, [stuck], default_tool_policy=policy), "go")
    assert tool_result(_last_tool_message(model)).attempts == 4
    gaps = [later - earlier for earlier, later in zip(moments, moments[1:], strict=False)]
    # at least 0.1, 0.2, 0.4 s apart (an event loop may wake a millisecond early)
    assert all(gap >= 0.98 * want for gap, want in zip(gaps, (0.1, 0.2, 0.4), strict=True)), gaps
