"""Which store a run uses, and that a read never changes it nor creates one (issue 19.2, 20.7).

The order (graphflow.runtime.graphs): the run method's `checkpointer=`; the agent's
`checkpointer` field; the store the agent was last compiled or run with (write methods only);
`GRAPHFLOW_CHECKPOINTER`; an in-memory saver kept for the agent's lifetime.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import weakref
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

from graphflow import (
    Agent,
    CompiledAgent,
    FunctionAgent,
    InputError,
    RunNotFoundError,
    SequentialAgent,
)
from graphflow.visualize import build_drawing, draw

ENV = "GRAPHFLOW_CHECKPOINTER"


@pytest.fixture(autouse=True)
def _no_env_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


def _agent() -> SequentialAgent:
    upper = FunctionAgent(name="upper", fn=lambda s: s["input"].upper(), output_key="loud")
    bang = FunctionAgent(name="bang", fn=lambda s: s["loud"] + "!", output_key="out")
    return SequentialAgent(name="team", sub_agents=[upper, bang])


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


def _threads(agent: Agent, checkpointer: object) -> set[str]:
    return {info.thread_id for info in agent.runs(checkpointer=checkpointer)}


# -- the reported bug ------------------------------------------------------------------------------


def test_a_failed_read_of_another_store_neither_creates_it_nor_switches_the_agent(tmp_path):
    main, other = tmp_path / "main.db", tmp_path / "other.db"
    team = _agent()
    team.invoke("a", thread_id="t1", checkpointer=_url(main))
    with pytest.raises(RunNotFoundError, match="nope"):
        team.get_state("nope", checkpointer=_url(other))
    assert not other.exists()
    assert team.invoke("b", thread_id="t2")["out"] == "B!"  # no store named: the remembered one
    assert {"t1", "t2"} <= {info.thread_id for info in team.runs()}
    assert not other.exists()
    assert _threads(team, _url(main)) == {"t1", "t2"}


def test_no_read_creates_a_store_file(tmp_path):
    team = _agent()
    team.invoke("a", thread_id="t1", checkpointer=_url(tmp_path / "main.db"))
    missing = tmp_path / "sub" / "missing.db"
    url = _url(missing)
    with pytest.raises(RunNotFoundError):
        team.get_state("t1", checkpointer=url)
    with pytest.raises(RunNotFoundError):
        team.history("t1", checkpointer=url)
    assert team.runs(checkpointer=url) == []
    with pytest.raises(RunNotFoundError):
        team.draw("ascii", thread_id="t1", checkpointer=url)
    with pytest.raises(RunNotFoundError):
        draw(team, "mermaid", thread_id="t1", checkpointer=url)
    with pytest.raises(RunNotFoundError):
        build_drawing(team, thread_id="t1", checkpointer=url)
    compiled = team.compile(False)  # a compiled object's reads create nothing either
    with pytest.raises(InputError, match="checkpointer=False"):
        compiled.get_state("t1")
    assert not missing.exists() and not missing.parent.exists()
    assert _threads(team, None) == {"t1"}  # and the agent still reads its own store


def test_reads_with_another_store_never_become_the_default(tmp_path):
    main, other = _url(tmp_path / "main.db"), _url(tmp_path / "other.db")
    team = _agent()
    team.invoke("x", thread_id="elsewhere", checkpointer=other)
    team.invoke("a", thread_id="t1", checkpointer=main)  # the last write: main
    assert team.get_state("elsewhere", checkpointer=other).values["out"] == "X!"
    assert [c.step for c in team.history("elsewhere", checkpointer=other)]
    assert _threads(team, other) == {"elsewhere"}
    team.draw("json", thread_id="elsewhere", checkpointer=other)
    team.invoke("b", thread_id="t2")
    assert _threads(team, main) == {"t1", "t2"}
    assert _threads(team, other) == {"elsewhere"}


# -- each step of the order ------------------------------------------------------------------------


def test_1_an_explicit_store_beats_the_agents_field(tmp_path):
    field, given = _url(tmp_path / "field.db"), _url(tmp_path / "given.db")
    team = _agent()
    team.checkpointer = field
    team.invoke("a", thread_id="t1", checkpointer=given)
    assert _threads(team, given) == {"t1"}
    assert _threads(team, field) == set()


def test_2_the_field_beats_the_remembered_store(tmp_path, monkeypatch):
    field, used = _url(tmp_path / "field.db"), _url(tmp_path / "used.db")
    monkeypatch.setenv(ENV, _url(tmp_path / "env.db"))
    team = _agent()
    team.invoke("a", thread_id="t1", checkpointer=used)
    team.checkpointer = field
    team.invoke("b", thread_id="t2")
    assert _threads(team, field) == {"t2"}
    assert _threads(team, used) == {"t1"}
    assert not (tmp_path / "env.db").exists()


@pytest.mark.parametrize("write", ["compile", "invoke", "stream", "resume", "ainvoke", "astream"])
def test_3_write_methods_remember_their_store_over_the_environment(tmp_path, monkeypatch, write):
    used, env = _url(tmp_path / "used.db"), tmp_path / "env.db"
    monkeypatch.setenv(ENV, _url(env))
    team = _agent()
    if write == "compile":
        team.compile(used)
    elif write == "invoke":
        team.invoke("a", thread_id="first", checkpointer=used)
    elif write == "stream":
        list(team.stream("a", thread_id="first", checkpointer=used))
    elif write == "ainvoke":
        asyncio.run(team.ainvoke("a", thread_id="first", checkpointer=used))
    elif write == "astream":

        async def drain() -> None:
            async for _ in team.astream("a", thread_id="first", checkpointer=used):
                pass

        asyncio.run(drain())
    else:  # a resume that is refused (nothing to resume) still chose its store
        other = _agent()
        other.invoke("a", thread_id="first", checkpointer=used)
        with pytest.raises(RunNotFoundError):
            team.resume("missing", checkpointer=used)
    team.invoke("b", thread_id="later")
    assert "later" in _threads(team, used)
    assert not env.exists()


def test_4_the_environment_beats_memory(tmp_path, monkeypatch):
    env = tmp_path / "env.db"
    monkeypatch.setenv(ENV, _url(env))
    team = _agent()
    team.invoke("a", thread_id="t1")
    assert team.compile().checkpointer == _url(env)
    assert _threads(_agent(), _url(env)) == {"t1"}  # in the file: another agent reads it


def test_5_memory_last_kept_for_the_agents_lifetime():
    team, other = _agent(), _agent()
    team.invoke("a", thread_id="t1")
    assert team.compile().checkpointer == "memory:"
    assert team.get_state("t1").values["out"] == "A!"
    assert other.runs() == []  # each agent has its own in-memory store
    team.sub_agents[1].fn = lambda s: s["loud"] + "?"  # rebuilt: the runs are still there
    assert team.invoke("b", thread_id="t2")["out"] == "B?"
    assert _threads(team, None) == {"t1", "t2"}


# -- the compiled object ---------------------------------------------------------------------------


def test_compile_returns_a_compiled_agent_that_runs_like_the_agent(tmp_path):
    url = _url(tmp_path / "runs.db")
    team = _agent()
    compiled = team.compile(url)
    assert isinstance(compiled, CompiledAgent)
    assert isinstance(compiled.graph, CompiledStateGraph)
    assert compiled.checkpointer == url and compiled.agent is team
    assert compiled.invoke("a", thread_id="t1")["out"] == "A!"
    assert team.invoke("b", thread_id="t2", checkpointer=url)["out"] == "B!"
    assert {info.thread_id for info in compiled.runs()} == {"t1", "t2"}
    assert compiled.get_state("t1").values["out"] == "A!"
    assert compiled.history("t1")[0].step >= 0
    assert "✔" in str(compiled.draw("ascii", thread_id="t1"))
    assert team.compile(url) is compiled  # cached per tree and store


def test_compiled_agent_methods_are_the_agent_methods_without_checkpointer():
    for name in ("invoke", "ainvoke", "stream", "astream", "resume", "aresume", "get_state"):
        on_agent = dict(inspect.signature(getattr(Agent, name)).parameters)
        del on_agent["checkpointer"]
        assert on_agent == dict(inspect.signature(getattr(CompiledAgent, name)).parameters), name
    for name in ("runs", "history", "draw", "draw_to"):
        on_agent = dict(inspect.signature(getattr(Agent, name)).parameters)
        on_agent.pop("checkpointer")
        assert list(on_agent) == list(inspect.signature(getattr(CompiledAgent, name)).parameters)


def test_the_spec_holds_no_run_state():
    team = _agent()
    team.invoke("a", thread_id="t1")
    assert not hasattr(team, "_runtime_cache")
    assert team.__pydantic_private__ is not None
    # the parsed instruction, a version for fingerprints, and what a loaded spec started for the
    # tree (its MCP servers, closed with it): nothing about runs or stores
    assert set(team.__pydantic_private__) == {"_template", "_version", "_owned"}
    assert team._owned == []


def test_specs_are_collected_once_the_runtime_caches_let_them_go(monkeypatch):
    from graphflow.runtime import compiled as compiled_module
    from graphflow.runtime import graphs

    monkeypatch.setattr(compiled_module._COMPILED, "size", 1)
    monkeypatch.setattr(graphs._ROOTS, "size", 1)
    monkeypatch.setattr(graphs.SUBGRAPHS, "size", 2)
    team = _agent()
    team.invoke("a", thread_id="t1")
    ref = weakref.ref(team)
    del team
    for _ in range(2):  # later trees push the first out of the bounded caches
        _agent().invoke("b", thread_id="t")
    gc.collect()
    assert ref() is None
    assert all(entry[0]() is not None for entry in graphs._registry.values())
