"""What a run method checks before anything runs: its config, its input, what it resumes.

An empty input, unknown keys, a key an instruction needs that nobody supplies, a value a
checkpoint could not store, a thread with nothing to continue, an answer to a question nobody
asked: each is a clear `InputError`/`RunNotFoundError`/`RunStateError` here, before a model is
called, instead of a failure deep inside LangGraph.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from graphflow.checkpoint.serde import GraphflowSerializer, unstorable
from graphflow.exceptions import GraphflowConfigError, InputError, RunNotFoundError, RunStateError
from graphflow.runtime.graphs import DEFAULT_RECURSION_LIMIT
from graphflow.runtime.inputs import check_thread_id, normalize_input
from graphflow.state import AGENT_STATUS, LOOP_ITERATION, MESSAGES
from graphflow.strategies import FlowGraphBuilder
from graphflow.tools.approval import check_resume_value

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph

    from graphflow.agents.base import Agent

__all__ = (
    "acheck_input",
    "check_input",
    "check_resume",
    "require_store",
    "required_inputs",
    "run_config",
    "store_name",
    "thread_for",
)


def store_name(spec: Any) -> str:
    """How messages name the store `spec` (a URL as given, else the saver's class)."""
    if isinstance(spec, str):
        return spec
    return type(spec).__name__


def thread_for(thread_id: str | None, config: RunnableConfig | None) -> str:
    """The thread a run goes on: the one named (once), or a new one."""
    configured = (config or {}).get("configurable", {}).get("thread_id")
    if thread_id is not None and configured is not None and configured != thread_id:
        raise InputError(
            f"thread_id={thread_id!r} and config['configurable']['thread_id']={configured!r} "
            "name two threads; pass one of them"
        )
    given = thread_id if thread_id is not None else configured
    if given is None:
        return str(uuid.uuid4())
    check_thread_id(given)
    return str(given)


def run_config(thread_id: str, config: RunnableConfig | None, extra: dict[str, Any]) -> Any:
    """The LangGraph config of a run on `thread_id` (`extra`: the root strategy's own config)."""
    cfg: dict[str, Any] = dict(config or {})
    configurable = dict(cfg.get("configurable") or {})
    configurable["thread_id"] = thread_id
    cfg["configurable"] = configurable
    cfg.setdefault("recursion_limit", DEFAULT_RECURSION_LIMIT)
    for key, value in extra.items():
        cfg.setdefault(key, value)
    return cfg


def required_inputs(agent: Agent) -> dict[str, str]:
    """Keys the caller must supply (an instruction needs them, no agent writes them) -> who needs it."""
    written = FlowGraphBuilder().writes(agent)
    needed: dict[str, str] = {}
    for member in agent.walk():
        for placeholder in member.placeholders():
            name = placeholder.name
            if placeholder.optional or name in written or name == LOOP_ITERATION:
                continue
            needed.setdefault(name, member.name)
    return needed


def require_store(graph: CompiledStateGraph, what: str) -> None:
    """Refuse to read stored runs of a graph that stores none (`checkpointer=False`)."""
    if not graph.checkpointer:
        raise InputError(
            f"{what} reads a stored run, but checkpointer=False stores none; pass the "
            "checkpointer the run used (a URL such as sqlite:///runs.db, or a saver)"
        )


def _input_keys(graph: CompiledStateGraph) -> list[str]:
    """The state keys a caller may pass.

    Not LangGraph's own channels (`__start__`, `branch:to:writer`: state keys are identifiers)
    nor the statuses graphflow writes.
    """
    return [
        k
        for k in graph.channels
        if k.isidentifier() and not k.startswith("__") and k != AGENT_STATUS
    ]


def _storable_input(graph: CompiledStateGraph, data: Any) -> None:
    """Refuse input values the run's checkpoint could not store (LangGraph: a bare TypeError)."""
    serde = getattr(graph.checkpointer, "serde", None)
    if not isinstance(data, dict) or not isinstance(serde, GraphflowSerializer):
        return
    for key, value in data.items():
        if key == MESSAGES:  # a message is storable; what a caller hangs on it may not be
            extras = [
                (f"{key}[{i}].{part}", getattr(m, part, None))
                for i, m in enumerate(value or ())
                for part in ("additional_kwargs", "response_metadata")
            ]
            found = next(
                (f for where, v in extras if (f := unstorable(v, serde.allowed, path=where))),
                None,
            )
        else:
            found = unstorable(value, serde.allowed, path=key)
        if found is not None:
            fix = getattr(found, "fix", "")
            raise InputError(
                f"the input's {found} cannot be stored in a checkpoint "
                + (
                    f"({fix})"
                    if fix
                    else "(loading the run again would have to construct it); pass plain data "
                    "(str, numbers, lists, dicts), or allow the class: graphflow.allow_types(TheClass)"
                )
            )


def _missing(required: dict[str, str], data: Any) -> list[tuple[str, str]]:
    """Required keys a new input does not supply, with the agent that needs each."""
    if not isinstance(data, dict):
        return []
    return [(k, who) for k, who in required.items() if k not in data]


def _refuse_missing(missing: list[tuple[str, str]], values: Any) -> None:
    absent = [(k, who) for k, who in missing if (values or {}).get(k) is None]
    if absent:
        key, who = absent[0]
        example = ", ".join(f"{k!r}: ..." for k, _ in absent)
        raise InputError(
            f"Agent `{who}` needs {{{key}}} but the input does not supply it (and no agent "
            f"writes it); pass it in the input: invoke({{'input': ..., {example}}})"
        )


def _nothing_to_continue(cfg: Any, spec: Any) -> InputError:
    return InputError(
        f"thread {cfg['configurable']['thread_id']!r} has no run in {store_name(spec)} to "
        "continue; pass an input to start one"
    )


_NO_STORE = "input None continues a stored run, but this run has no checkpointer"


def check_input(
    graph: CompiledStateGraph,
    input: Any,
    cfg: Any,
    spec: Any,
    required: dict[str, str],
) -> Any:
    """`input` as the graph's input, checked (see the module doc)."""
    data = normalize_input(input, known=_input_keys(graph))
    _storable_input(graph, data)
    missing = _missing(required, data)
    if missing:
        # a thread that already holds the values (an earlier turn) is fine
        held = graph.get_state(cfg).values if graph.checkpointer else {}
        _refuse_missing(missing, held)
    if data is None and graph.checkpointer:
        if graph.get_state(cfg).created_at is None:
            raise _nothing_to_continue(cfg, spec)
    elif data is None:
        raise InputError(_NO_STORE)
    return data


async def acheck_input(
    graph: CompiledStateGraph,
    input: Any,
    cfg: Any,
    spec: Any,
    required: dict[str, str],
) -> Any:
    """Async `check_input`."""
    data = normalize_input(input, known=_input_keys(graph))
    _storable_input(graph, data)
    missing = _missing(required, data)
    if missing:
        held = (await graph.aget_state(cfg)).values if graph.checkpointer else {}
        _refuse_missing(missing, held)
    if data is None and graph.checkpointer:
        if (await graph.aget_state(cfg)).created_at is None:
            raise _nothing_to_continue(cfg, spec)
    elif data is None:
        raise InputError(_NO_STORE)
    return data


def no_run_to_resume(thread_id: str, spec: Any) -> RunNotFoundError:
    """The error of a resume of a thread that no run is stored under."""
    return RunNotFoundError(
        f"no run is stored under thread {thread_id!r} in {store_name(spec)}; check the "
        "thread id (agent.runs() lists the stored runs) and the checkpointer"
    )


def check_resume(agent: Agent, snapshot: Any, thread_id: str, value: Any, spec: Any) -> None:
    """Refuse a resume of nothing, of a finished run, or with an answer nobody waits for."""
    if snapshot.created_at is None:
        raise no_run_to_resume(thread_id, spec)
    interrupts = list(snapshot.interrupts or ())
    if value is not None and not interrupts:
        raise RunStateError(
            f"thread {thread_id!r} is not waiting for an answer (no pending interrupt); "
            f"resume it without a value{'' if snapshot.next else ', or start a new turn with invoke(input, thread_id=...)'}"
        )
    # (a step whose tasks all saved their writes but whose next checkpoint was not written
    # yet — a crash between the two — has no `next` but still has its `tasks`)
    if value is None and not snapshot.next and not snapshot.tasks and not interrupts:
        raise RunStateError(
            f"the run on thread {thread_id!r} has finished; there is nothing to resume. "
            f"Start a new turn on it with invoke(input, thread_id={thread_id!r})"
        )
    if value is not None:
        try:
            check_resume_value(interrupts, value)  # a paused tool call's answer
            for hook in {id(h): h for a in agent.walk() for h in a.hooks}.values():
                hook.validate_resume(interrupts, value)
        except InputError:
            raise
        except ValueError as exc:  # a bad answer is bad input (the CLI's exit code 2)
            raise InputError(f"thread {thread_id!r}: {exc}") from exc


def models_without_keys(agent: Agent) -> list[str]:
    """What each model of the tree built without its API key would say at its first call.

    Models from strings are built without a key when none is set, so a team can be loaded,
    drawn and compiled without credentials; a run checks them when it starts instead.
    """
    from graphflow.models import require_api_key

    found: list[str] = []
    for member in agent.walk():
        build = getattr(member, "chat_model", None)
        if not callable(build) or getattr(member, "model", None) is None:
            continue
        model = build()
        try:
            require_api_key(model)
        except GraphflowConfigError as exc:
            found.append(str(exc))
    return found
