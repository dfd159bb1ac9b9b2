"""MCP tools over stdio with real servers, through ReactAgents: discovery, calls, errors, restarts."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from graphflow import ParallelAgent, ReactAgent
from graphflow.exceptions import MCPConnectionError, ToolError
from graphflow.mcp import MCPToolset
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.tools import ToolPolicy, is_parallel_safe, tool_result
from graphflow.tools.policy import policy_for

QUIET = open(os.devnull, "w")  # noqa: SIM115 - the servers' stderr, for the whole session


def _everything(path, mark, **extra):
    return {
        "command": "node",
        "args": [str(path), "stdio"],
        "env": {"GF_TEST_MARK": mark},
        **extra,
    }


@pytest.fixture
def toolset(everything, filesystem, time_server, tmp_path, mark):
    (tmp_path / "notes.txt").write_text("meeting at 10")
    config = {
        "mcpServers": {
            "everything": _everything(
                everything,
                mark,
                include=["echo", "get-sum", "toggle-*"],
                exclude=["*-subscriber-*"],
            ),
            "fs": {
                "command": "node",
                "args": [str(filesystem), str(tmp_path)],
                "env": {"GF_TEST_MARK": mark},
                "prefix": True,
                "timeout": 120,
            },
            "time": {"command": time_server[0], "args": time_server[1:]},
        }
    }
    with MCPToolset.from_config(config, errlog=QUIET) as mcp:
        yield mcp


def _messages(result):
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def test_discovery_keeps_schemas_filters_prefixes_and_read_only_hints(toolset):
    tools = {t.name: t for t in toolset.tools()}
    assert {"echo", "get-sum", "toggle-simulated-logging"} <= set(tools)
    assert "get-env" not in tools  # not included
    assert "toggle-subscriber-updates" not in tools  # excluded
    assert "fs_read_text_file" in tools and "read_text_file" not in tools  # prefix: true
    assert {"get_current_time", "convert_time"} <= set(tools)
    assert tools["get-sum"].args_schema["properties"].keys() == {"a", "b"}
    default = ToolPolicy()
    assert is_parallel_safe(tools["echo"], default)  # readOnlyHint: true
    assert not is_parallel_safe(tools["toggle-simulated-logging"], default)  # readOnlyHint: false
    assert not is_parallel_safe(tools["fs_write_file"], default)
    # a server's own timeout applies unless the agent's policy sets one
    read = tools["fs_read_text_file"]
    assert policy_for(read.name, {}, ToolPolicy(max_retries=1), read).timeout == 120
    assert policy_for(read.name, {}, ToolPolicy(timeout=5), read).timeout == 5
    assert policy_for(read.name, {read.name: ToolPolicy(timeout=7)}, None, read).timeout == 7
    assert policy_for("echo", {}, None, tools["echo"]).timeout == 30


def test_calls_errors_and_unknown_tools_through_an_agent(toolset, run_mode, tmp_path):
    turns = [
        tool_call("echo", {"message": "hi"}),
        tool_call("get-sum", {"a": 2}),  # b missing
        tool_call("fs_read_text_file", {"path": str(tmp_path / "notes.txt")}),
        tool_call("fs_read_text_file", {"path": "/etc/passwd"}),
        tool_call("fs_read_text_file", {"path": str(tmp_path / "nope.txt")}),
        tool_call("get_current_time", {"timezone": "Asia/Tokyo"}),
        tool_call("get_current_time", {"timezone": "Mars/Olympus"}),
        tool_call("teleport", {}),
        "all checked",
    ]
    model = ScriptedChatModel(replies=turns)
    agent = ReactAgent(name="assistant", model=model, tools=toolset.tools(), output_key="out")
    result = run_mode.invoke(agent, "check")
    seen = _messages(result)
    assert seen[0].content == "Echo: hi" and seen[0].status == "success"
    kinds = [tool_result(m).error_type for m in seen]
    assert kinds == [
        None,
        "INVALID_PARAM",
        None,
        "PERMISSION_DENIED",
        "RESOURCE_NOT_FOUND",
        None,
        "INVALID_PARAM",
        "INVALID_PARAM",
    ]
    assert "Error [INVALID_PARAM] in tool `get-sum`" in seen[1].content
    assert seen[2].content == "meeting at 10"
    assert "Access denied" in seen[3].content and "ENOENT" in seen[4].content
    assert '"timezone": "Asia/Tokyo"' in seen[5].content
    assert "Mars/Olympus" in seen[6].content
    assert "no tool named 'teleport'" in seen[7].content and "fs_read_text_file" in seen[7].content
    assert result["out"] == "all checked"
    assert toolset.connects("everything") == 1  # one long-lived session for all calls


def test_a_tool_the_server_no_longer_has_is_invalid_param(toolset):
    echo = next(t for t in toolset.tools() if t.name == "echo")
    gone = echo.model_copy(update={"remote_name": "vanished"})
    model = ScriptedChatModel(replies=[tool_call("echo", {"message": "x"}), "ok"])
    ReactAgent(name="a", model=model, tools=[gone]).invoke("go")
    error = model.requests[1][-1]
    assert tool_result(error).error_type == "INVALID_PARAM" and "vanished" in error.content


def test_a_server_killed_mid_run_gives_an_error_result_and_the_next_call_reconnects(
    everything, mark, processes, run_mode
):
    def reply(messages, n):
        if n == 1:  # between two turns, the server dies
            for pid in processes.marked(mark):
                os.kill(pid, signal.SIGKILL)
            processes.wait_gone(mark)
        if n < 3:
            return tool_call("echo", {"message": f"call {n}"})
        return "survived"

    config = {"mcpServers": {"everything": _everything(everything, mark, include=["echo"])}}
    with MCPToolset.from_config(config, errlog=QUIET) as mcp:
        agent = ReactAgent(
            name="a", model=ScriptedChatModel(fn=reply), tools=mcp.tools(), output_key="out"
        )
        result = run_mode.invoke(agent, "go")
        first, dead, again = _messages(result)
        assert first.content == "Echo: call 0"
        assert dead.status == "error" and tool_result(dead).error_type == "RESOURCE_NOT_FOUND"
        assert "MCP server `everything` closed the connection" in dead.content
        assert "started again on the next call" in dead.content
        assert again.content == "Echo: call 2"
        assert result["out"] == "survived"
        assert mcp.connects("everything") == 2
        assert len(processes.marked(mark)) == 1
    assert processes.wait_gone(mark) == []


def test_a_slow_call_times_out_and_the_session_keeps_working(everything, mark, run_mode):
    config = {"mcpServers": {"everything": _everything(everything, mark)}}
    model = ScriptedChatModel(
        replies=[
            tool_call("trigger-long-running-operation", {"duration": 5, "steps": 5}),
            tool_call("echo", {"message": "after"}),
            "done",
        ]
    )
    with MCPToolset.from_config(config, errlog=QUIET) as mcp:
        agent = ReactAgent(
            name="a",
            model=model,
            tools=mcp.tools(),
            default_tool_policy=ToolPolicy(timeout=0.5, max_retries=0),
        )
        result = run_mode.invoke(agent, "go")
        slow, after = _messages(result)
        assert tool_result(slow).error_type == "TIMEOUT"
        assert after.content == "Echo: after"
        assert mcp.connects("everything") == 1


@pytest.mark.parametrize("api", ["invoke", "ainvoke"])
def test_mcp_tools_in_agents_inside_a_parallel_agent(everything, time_server, mark, processes, api):
    config = {
        "mcpServers": {
            "everything": _everything(everything, mark, include=["echo", "get-sum"]),
            "time": {
                "command": time_server[0],
                "args": time_server[1:],
                "env": {"GF_TEST_MARK": mark},
            },
        }
    }
    with MCPToolset.from_config(config, errlog=QUIET) as mcp:
        tools = mcp.tools()

        def worker(name, call):
            model = ScriptedChatModel(
                fn=lambda m, n: f"{name} done" if isinstance(m[-1], ToolMessage) else call
            )
            return ReactAgent(
                name=name,
                model=model,
                tools=tools,
                output_key=f"{name}_out",
                return_reasoning_contents=True,
            )

        team = ParallelAgent(
            name="team",
            sub_agents=[
                worker("adder", tool_call("get-sum", {"a": 2, "b": 3})),
                worker("echoer", tool_call("echo", {"message": "par"})),
                worker("clock", tool_call("get_current_time", {"timezone": "UTC"})),
            ],
        )
        if api == "invoke":
            result = team.invoke("go")
        else:
            result = asyncio.run(team.ainvoke("go"))
        contents = {m.name: m.content for m in _messages(result)}
        assert contents["get-sum"] == "The sum of 2 and 3 is 5."
        assert contents["echo"] == "Echo: par"
        assert '"timezone": "UTC"' in contents["get_current_time"]
        assert result["adder_out"] == "adder done" and result["clock_out"] == "clock done"
        assert mcp.connects("everything") == 1 and mcp.connects("time") == 1
        assert len(processes.marked(mark)) == 2
    assert processes.wait_gone(mark) == []  # both servers ended with the toolset


def test_close_leaves_no_server_process(everything, mark, processes):
    config = {"mcpServers": {"everything": _everything(everything, mark, include=["echo"])}}
    mcp = MCPToolset.from_config(config, errlog=QUIET)
    (echo,) = mcp.tools()
    assert echo.invoke({"message": "x"}) == "Echo: x"
    assert len(processes.marked(mark)) == 1
    mcp.close()
    assert processes.wait_gone(mark) == []
    mcp.close()  # idempotent
    # a call after close is a clear failure that stops a run (UNKNOWN), not a server outage
    for call in (echo.invoke, lambda args: asyncio.run(echo.ainvoke(args))):
        with pytest.raises(ToolError, match="MCPToolset that owns server `everything` was closed"):
            call({"message": "late"})
    assert processes.marked(mark) == []


def test_async_with_closes_every_server(everything, time_server, mark, processes):
    config = {
        "mcpServers": {
            "everything": _everything(everything, mark, include=["echo"]),
            "time": {
                "command": time_server[0],
                "args": time_server[1:],
                "env": {"GF_TEST_MARK": mark},
            },
        }
    }

    async def main():
        async with MCPToolset.from_config(config, errlog=QUIET) as mcp:
            tools = {t.name: t for t in await mcp.atools()}
            assert await tools["echo"].ainvoke({"message": "a"}) == "Echo: a"
            assert len(processes.marked(mark)) == 2
        assert mcp.closed

    asyncio.run(main())
    assert processes.wait_gone(mark) == []


def test_exit_without_close_leaves_no_server_process(everything, mark, processes, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os
            from graphflow.mcp import MCPToolset
            config = {{"mcpServers": {{"ev": {{"command": "node",
                "args": [{str(everything)!r}, "stdio"], "env": {{"GF_TEST_MARK": {mark!r}}}}}}}}}
            mcp = MCPToolset.from_config(config, errlog=open(os.devnull, "w"))
            tools = {{t.name: t for t in mcp.tools()}}
            print(tools["echo"].invoke({{"message": "bye"}}))
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Echo: bye"
    assert processes.wait_gone(mark) == []


def test_a_server_that_cannot_start_is_a_clear_error():
    config = {"mcpServers": {"ghost": {"command": "/nonexistent/mcp-server"}}}
    with MCPToolset.from_config(config, connect_timeout=10) as mcp:
        with pytest.raises(MCPConnectionError, match="MCP server `ghost` could not be started"):
            mcp.tools()


RESUME_CHILD = textwrap.dedent(
    """
    import asyncio, os, sys
    from langchain_core.messages import ToolMessage
    from graphflow import ReactAgent, ToolHook
    from graphflow.mcp import MCPToolset
    from graphflow.testing import ScriptedChatModel, tool_call

    server, mark, db, log_path, phase = sys.argv[1:6]

    def log(line):
        with open(log_path, "a") as f:
            f.write(line + "\\n")

    class Calls(ToolHook):
        def wrap_tool_call(self, request, handler):
            log("call " + request.tool_call["name"])
            return handler(request)

    def reply(messages, n):
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if len(results) == 1 and phase == "run":
            os._exit(1)  # the process dies in the model call after the first MCP call
        if not results:
            return tool_call("echo", {"message": "before the crash"})
        if len(results) == 1:
            return tool_call("get-sum", {"a": 2, "b": 3})
        return " | ".join(m.content for m in results)

    config = {"mcpServers": {"ev": {"command": "node", "args": [server, "stdio"],
                                    "env": {"GF_TEST_MARK": mark}, "include": ["echo", "get-sum"]}}}
    with open(os.devnull, "w") as quiet, MCPToolset.from_config(config, errlog=quiet) as mcp:
        agent = ReactAgent(name="a", model=ScriptedChatModel(fn=reply), tools=mcp.tools(),
                           hooks=[Calls()], output_key="out")
        url = f"sqlite:///{db}"
        if phase == "run":
            agent.invoke("go", thread_id="job", checkpointer=url)
        else:
            result = asyncio.run(agent.aresume("job", checkpointer=url))
            log("out " + result["out"])
    """
)


def test_a_run_with_mcp_tools_resumes_in_a_new_process(everything, mark, processes, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(RESUME_CHILD)
    db, log = tmp_path / "runs.db", tmp_path / "calls.log"

    def child(phase):
        return subprocess.run(
            [sys.executable, str(script), str(everything), mark, str(db), str(log), phase],
            capture_output=True,
            text=True,
            timeout=90,
        )

    crashed = child("run")  # under invoke
    assert crashed.returncode == 1, crashed.stderr
    assert log.read_text().splitlines() == ["call echo"]
    assert processes.wait_gone(mark) == []  # its server ended with it (stdin closed)

    resumed = child("resume")  # under ainvoke, with a new session, in a new process
    assert resumed.returncode == 0, resumed.stderr
    assert "cancel scope" not in resumed.stderr
    assert log.read_text().splitlines()[1:] == [
        "call get-sum",  # the echo call finished before the crash: not run again
        "out Echo: before the crash | The sum of 2 and 3 is 5.",
    ]
    assert processes.wait_gone(mark) == []


def test_a_server_killed_during_a_call_answers_that_call_at_once(
    everything, mark, processes, run_mode
):
    def kill():
        for pid in processes.marked(mark):
            os.kill(pid, signal.SIGKILL)

    def reply(messages, n):
        if n == 0:  # a 5 s operation; the server dies 0.5 s into it
            threading.Timer(0.5, kill).start()
            return tool_call("trigger-long-running-operation", {"duration": 5, "steps": 5})
        if n == 1:
            return tool_call("echo", {"message": "after"})
        return "survived"

    config = {"mcpServers": {"everything": _everything(everything, mark)}}
    with MCPToolset.from_config(config, errlog=QUIET) as mcp:
        agent = ReactAgent(
            name="a", model=ScriptedChatModel(fn=reply), tools=mcp.tools(), output_key="out"
        )
        started = time.monotonic()
        result = run_mode.invoke(agent, "go")
        wall = time.monotonic() - started
        dead, after = _messages(result)
        assert tool_result(dead).error_type == "RESOURCE_NOT_FOUND"
        assert "MCP server `everything` closed the connection" in dead.content
        assert after.content == "Echo: after" and result["out"] == "survived"
        print(f"\ncall ended {wall:.1f} s after the run started (the operation takes 5 s)")
        assert mcp.connects("everything") == 2
    assert processes.wait_gone(mark) == []


def test_a_tools_internal_error_on_a_live_session_is_its_result_not_a_reconnect(run_mode):
    server = Path(__file__).with_name("internal_error_server.py")
    model = ScriptedChatModel(replies=[tool_call("explode", {}), tool_call("fine", {}), "done"])
    with MCPToolset({"flaky": {"command": sys.executable, "args": [str(server)]}}) as mcp:
        agent = ReactAgent(name="a", model=model, tools=mcp.tools())
        result = run_mode.invoke(agent, "go")
        exploded, fine = _messages(result)
        assert exploded.status == "error" and "the database exploded" in exploded.content
        assert tool_result(exploded).error_type == "INVALID_PARAM"  # the model reads the reason
        assert fine.content == "fine"
        assert mcp.connects("flaky") == 1  # the session still answered: it was kept


def test_a_late_failure_on_a_dead_session_does_not_end_the_new_one(everything, mark, processes):
    # parallel calls can fail one by one on the same dead session; by the time a slow one
    # reports, another call may already have started the next session: it must survive
    config = {"mcpServers": {"everything": _everything(everything, mark, include=["echo"])}}
    with MCPToolset.from_config(config, errlog=QUIET) as mcp:
        (echo,) = mcp.tools()
        connection = mcp._connections["everything"]
        dead = connection._task
        for pid in processes.marked(mark):
            os.kill(pid, signal.SIGKILL)
        processes.wait_gone(mark)
        with pytest.raises(ToolError, match="closed the connection"):
            echo.invoke({"message": "x"})
        assert echo.invoke({"message": "new session"}) == "Echo: new session"
        assert mcp.connects("everything") == 2
        mcp._loop.run(connection._finish(dead))  # the late report of a call on the dead one
        assert echo.invoke({"message": "still"}) == "Echo: still"
        assert mcp.connects("everything") == 2


def test_tool_names_are_made_safe_for_chat_model_apis_and_called_by_their_own():
    server = Path(__file__).with_name("internal_error_server.py")
    config = {"command": sys.executable, "args": [str(server)], "prefix": True}
    with MCPToolset({"team.db": config}) as mcp:
        tools = {t.name: t for t in mcp.tools()}
        assert sorted(tools) == ["team_db_db_query", "team_db_explode", "team_db_fine"]
        query = tools["team_db_db_query"]
        assert query.remote_name == "db.query"
        assert query.invoke({"sql": "select 1"}) == "rows for select 1"
