"""The `Agent` base: a declarative spec that compiles to a LangGraph `StateGraph`.

Specs are pydantic models: every option is validated when the agent is defined, a misspelt
option fails at once (`extra="forbid"`), and every failure is an `AgentSpecError` naming the
agent and the field. Building, running and drawing are delegated to the runtime installed by
`graphflow` (see `graphflow.agents.seam`), so this package imports nothing above it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import BaseMessage
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from graphflow.agents.seam import runtime
from graphflow.exceptions import AgentSpecError, DataflowError, InstructionTemplateError
from graphflow.hooks.base import Hook
from graphflow.instructions import Placeholder, parse_template
from graphflow.state import PRIVATE_PREFIX, RESERVED_KEYS

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Self

    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool
    from langgraph.graph import StateGraph
    from langgraph.types import StateSnapshot

    from graphflow.batch import BatchResult
    from graphflow.checkpoint.runs import CheckpointInfo, RunInfo
    from graphflow.runtime.compiled import CompiledAgent

__all__ = ("Agent", "AgentInput", "check_identifier", "kinds_with_field")

AgentInput = str | BaseMessage | Sequence[BaseMessage] | dict[str, Any] | Command | None
Durability = Literal["sync", "async", "exit"]
"""When LangGraph writes checkpoints (see `CompiledAgent.invoke`)."""
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EDITED_IN_PLACE = ("model_settings", "tool_policies", "input_keys", "writes")
"""Fields whose list or dict a user may edit in place; compiled graphs key on their `repr`."""


def check_identifier(value: str, what: str) -> str:
    """`value` if it can name an agent or a state key; else a `ValueError` saying why."""
    if not _IDENT.fullmatch(value):
        raise ValueError(
            f"{what} {value!r} is not an identifier; use letters, digits and _ "
            "(not starting with a digit), e.g. 'research_data'"
        )
    if value in RESERVED_KEYS:
        raise ValueError(
            f"{what} {value!r} is reserved by graphflow (reserved: {', '.join(sorted(RESERVED_KEYS))})"
        )
    if value.startswith(PRIVATE_PREFIX):
        # graphflow's private channels; they are never handed to sub-agents
        raise ValueError(f"{what} {value!r}: names starting with {PRIVATE_PREFIX!r} are reserved")
    if value.startswith("__") and value.endswith("__"):
        raise ValueError(
            f"{what} {value!r}: names like __start__ and __end__ are reserved by LangGraph; "
            "pick a plain name"
        )
    return value


def _kinds(base: type[Agent]) -> Iterator[type[Agent]]:
    """Every agent kind defined so far (bases in private modules, like `ModelAgent`, left out)."""
    for kind in base.__subclasses__():
        if "._" not in kind.__module__:
            yield kind
        yield from _kinds(kind)


def kinds_with_field(field: str) -> list[str]:
    """The names of the agent kinds (defined so far) that take `field`, sorted."""
    return sorted({k.__name__ for k in _kinds(Agent) if field in k.model_fields})


def _not_its_field(kind: type[Agent], data: Mapping[str, Any], field: str) -> AgentSpecError | None:
    """The error for a field another kind of agent has (None when no kind has it).

    `include_contents` on a `SequentialAgent` is not a typo but a field of the agents that call
    a model: the message says which kinds take it instead of pydantic's "extra inputs".
    """
    owners = kinds_with_field(field)
    if not owners:
        return None
    name = data.get("name")
    who = f"{kind.__name__} `{name}`" if isinstance(name, str) and name else kind.__name__
    message = (
        f"`{field}` does not apply to a {kind.__name__}; it is a field of "
        f"{', '.join(owners)} — set it on the agent it is meant for"
    )
    return AgentSpecError(
        f"{who}: {field}: {message}",
        agent=name if isinstance(name, str) else None,
        fields=[(field, message)],
    )


class Agent(BaseModel):
    """Base of every agent spec. Subclasses add what their kind needs.

    `to_graph()` gives the uncompiled LangGraph `StateGraph`; `compile()` a cached
    `CompiledAgent` (the compiled graph on a store); `invoke`/`stream`/`resume` run it and
    `get_state`/`history`/`runs` read its runs (sugar over `compile()`); `draw` pictures it.
    Running never changes the spec: what the runtime keeps per agent lives in the runtime.
    """

    model_config = ConfigDict(
        extra="forbid", arbitrary_types_allowed=True, validate_assignment=True
    )

    name: str
    """Identifier, unique in an agent tree; also the agent's node name in its parent's graph."""
    description: str = ""
    """What the agent does; routers and supervisors show it to their model."""
    output_key: str | None = None
    """State key that receives the agent's result (final text or structured object)."""
    instruction: str | None = None
    """Template rendered from state into an instruction message: `{key}`, `{key?}`, `{{`, `}}`."""
    hooks: list[Hook] = Field(default_factory=list)
    """Agent, model and tool hooks, run in list order (after-hooks in reverse)."""
    input_keys: list[str] = Field(default_factory=list)
    """State keys the caller supplies besides `input`; instructions may use them."""
    checkpointer: Any = Field(default=None, exclude=True)
    """Where runs of this agent (as the root of a tree) are stored when a run method is not told:
    a LangGraph saver or a URL (`memory:`, `sqlite:///runs.db`, `postgresql://...`). Unset, the
    store the agent was last compiled or run with is used (never one it was only read with),
    then `GRAPHFLOW_CHECKPOINTER`, then an in-memory saver kept for this agent's lifetime (see
    `graphflow.runtime.graphs`)."""

    _template: tuple[str | Placeholder, ...] = PrivateAttr(default=())
    _version: int = PrivateAttr(default=0)
    _owned: list[Any] = PrivateAttr(default_factory=list)
    """Resources started for this agent that end with it (the MCP servers a spec started)."""

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return check_identifier(value, "agent name")

    @field_validator("output_key")
    @classmethod
    def _valid_output_key(cls, value: str | None) -> str | None:
        return None if value is None else check_identifier(value, "output_key")

    @field_validator("input_keys")
    @classmethod
    def _valid_input_keys(cls, value: list[str]) -> list[str]:
        return [check_identifier(v, "input key") for v in value]

    @field_validator("instruction")
    @classmethod
    def _valid_instruction(cls, value: str | None) -> str | None:
        if value is not None:
            parse_template(value)
        return value

    def __init__(self, /, **data: Any) -> None:
        misplaced = next((k for k in data if k not in type(self).model_fields), None)
        if misplaced is not None and (error := _not_its_field(type(self), data, misplaced)):
            raise error
        # parse first, so a malformed template raises InstructionTemplateError itself (inside
        # pydantic validation it would be wrapped in a ValidationError)
        if isinstance(data.get("instruction"), str):
            try:
                parse_template(data["instruction"])
            except InstructionTemplateError as exc:
                name = data.get("name")
                who = (
                    f"{type(self).__name__} `{name}`"
                    if isinstance(name, str)
                    else type(self).__name__
                )
                raise InstructionTemplateError(f"{who}: instruction: {exc}") from None
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise AgentSpecError.from_validation(
                type(self).__name__, data.get("name"), exc
            ) from None

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with its own version and template (pydantic would share them)."""
        copy = super().model_copy(update=update, deep=deep)
        copy._version = 0
        copy._template = parse_template(copy.instruction) if copy.instruction else ()
        return copy

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and name not in type(self).model_fields:
            error = _not_its_field(type(self), {"name": self.name}, name)
            raise error or AgentSpecError(
                f"{type(self).__name__} `{self.name}`: {name}: no such field",
                agent=self.name,
                fields=[(name, "no such field")],
            )
        try:
            super().__setattr__(name, value)
        except ValidationError as exc:
            raise AgentSpecError.from_validation(type(self).__name__, self.name, exc) from None
        if not name.startswith("_"):
            # a changed spec must not keep serving graphs compiled from the old one
            self._version += 1
            if name == "instruction":
                self._template = parse_template(value) if value else ()

    def model_post_init(self, context: Any) -> None:
        """Parse the instruction once."""
        self._template = parse_template(self.instruction) if self.instruction else ()

    # -- structure -------------------------------------------------------------------------------

    @property
    def sub_agents_list(self) -> list[Agent]:
        """Direct sub-agents (empty for leaf agents)."""
        return list(getattr(self, "sub_agents", None) or ())

    @property
    def template(self) -> tuple[str | Placeholder, ...]:
        """The parsed instruction template."""
        return self._template

    @property
    def spec_version(self) -> int:
        """Increases whenever a field of this agent is assigned (compiled graphs key on it)."""
        return self._version

    def fingerprint(self) -> tuple[Any, ...]:
        """A value that changes whenever this agent or a descendant is changed.

        Assigning a field bumps the agent's `spec_version`; editing a list in place (sub-agents,
        tools, hooks) changes the identities recorded here, and editing a value list or dict in
        place (`model_settings`, `tool_policies`, `input_keys`, `writes`) changes its `repr`. Compiled graphs are cached under it,
        so a changed spec is rebuilt, never served stale. (Holders of a fingerprint keep the
        agents alive while they keep it, so the identities cannot be reused.)
        """
        return tuple(
            (
                id(agent),
                agent._version,
                tuple(map(id, agent.sub_agents_list)),
                tuple(map(id, getattr(agent, "tools", None) or ())),
                tuple(map(id, agent.hooks)),
                tuple(repr(getattr(agent, name, None)) for name in _EDITED_IN_PLACE),
            )
            for agent in self.walk()
        )

    def placeholders(self) -> list[Placeholder]:
        """The placeholders the instruction uses."""
        return [p for p in self._template if isinstance(p, Placeholder)]

    def walk(self) -> Iterator[Agent]:
        """This agent and all its descendants, depth first.

        Raises:
            DataflowError: an agent contains itself (the message names the path).
        """
        path: list[Agent] = []

        def visit(agent: Agent) -> Iterator[Agent]:
            if any(a is agent for a in path):
                names = " → ".join(a.name for a in [*path[path.index(agent) :], agent])
                raise DataflowError(
                    f"agent `{agent.name}` contains itself ({names}); an agent tree may not "
                    "have cycles — use a LoopAgent to repeat agents"
                )
            path.append(agent)
            yield agent
            for child in agent.sub_agents_list:
                yield from visit(child)
            path.pop()

        return visit(self)

    # -- building (delegated to graphflow's runtime) ----------------------------------------------

    def to_graph(self) -> StateGraph:
        """The uncompiled LangGraph `StateGraph` for this agent as the root of a tree.

        Raises:
            GraphflowConfigError: the tree is misconfigured (checked before any model call).
        """
        return runtime().to_graph(self)

    def compile(
        self,
        checkpointer: Any = None,
        *,
        store: Any = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        debug: bool = False,
    ) -> CompiledAgent:
        """This tree compiled on a store: a `CompiledAgent` (cached per tree, store and options).

        It owns the LangGraph graph (`.graph`, a `CompiledStateGraph`) and runs, resumes and
        reads runs like the agent's own methods. The store is opened now (one that cannot work
        fails here) and remembered: later run methods of the agent told no store use it.

        Args:
            checkpointer: a LangGraph saver, a URL (`memory:`, `sqlite:///runs.db`,
                `postgresql://...`), `False` for none, or None for the agent's default (see
                `Agent.checkpointer`).
            store: a LangGraph store for long-term memory.
            interrupt_before: node names to pause before.
            interrupt_after: node names to pause after.
            debug: LangGraph debug output.
        """
        return runtime().compile(
            self,
            checkpointer,
            store=store,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            debug=debug,
        )

    # -- running (`agent.invoke(x, checkpointer=c)` is `agent.compile(c).invoke(x)`) ---------------

    def invoke(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        durability: Durability = "sync",
    ) -> dict[str, Any]:
        """Run to the end (or to an interrupt) and return the final state.

        `input` may be a string (it becomes the `input` key and a user message), a message, a
        list of messages, a dict of state keys, or None to continue the thread's last run.
        See `CompiledAgent.invoke`; `checkpointer` chooses the store (and is remembered).
        """
        return (
            runtime()
            .running(self, checkpointer)
            .invoke(input, thread_id=thread_id, config=config, durability=durability)
        )

    async def ainvoke(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        durability: Durability = "sync",
    ) -> dict[str, Any]:
        """Async `invoke`."""
        compiled = runtime().running(self, checkpointer)
        return await compiled.ainvoke(
            input, thread_id=thread_id, config=config, durability=durability
        )

    def stream(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        stream_mode: Any = None,
        subgraphs: bool = True,
        durability: Durability = "sync",
        events: Any = None,
    ) -> Iterator[Any]:
        """Stream the run as typed events (`graphflow.events`), or LangGraph's raw stream.

        By default every event is yielded: agent path, branch, iteration, tokens from every
        depth, usage. `events=` filters them: an event class, a tuple of them,
        `graphflow.events.where(types, path=...)` or a predicate. With `stream_mode=` LangGraph's
        own output for that mode (`(namespace, chunk)` pairs with `subgraphs=True`) is passed
        through instead. Input None (or a `Command(resume=...)`) continues the stored run.
        """
        return (
            runtime()
            .running(self, checkpointer)
            .stream(
                input,
                thread_id=thread_id,
                config=config,
                stream_mode=stream_mode,
                subgraphs=subgraphs,
                durability=durability,
                events=events,
            )
        )

    def astream(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        stream_mode: Any = None,
        subgraphs: bool = True,
        durability: Durability = "sync",
        events: Any = None,
    ) -> AsyncIterator[Any]:
        """Async `stream`."""
        return (
            runtime()
            .running(self, checkpointer)
            .astream(
                input,
                thread_id=thread_id,
                config=config,
                stream_mode=stream_mode,
                subgraphs=subgraphs,
                durability=durability,
                events=events,
            )
        )

    def resume(
        self,
        thread_id: str,
        value: Any = None,
        *,
        checkpointer: Any = None,
        config: RunnableConfig | None = None,
    ) -> dict[str, Any]:
        """Continue a crashed, failed or interrupted run from its last checkpoint.

        `value` answers a pending interrupt (a dict of interrupt id -> value answers several).
        """
        return runtime().running(self, checkpointer).resume(thread_id, value, config=config)

    async def aresume(
        self,
        thread_id: str,
        value: Any = None,
        *,
        checkpointer: Any = None,
        config: RunnableConfig | None = None,
    ) -> dict[str, Any]:
        """Async `resume`."""
        compiled = runtime().running(self, checkpointer)
        return await compiled.aresume(thread_id, value, config=config)

    # -- reading (a read never remembers its store, nor creates one) ------------------------------

    def get_state(self, thread_id: str, *, checkpointer: Any = None) -> StateSnapshot:
        """The thread's latest `StateSnapshot` (values, next nodes, pending interrupts)."""
        return runtime().reading(self, checkpointer).get_state(thread_id)

    def runs(self, *, checkpointer: Any = None, limit: int | None = None) -> list[RunInfo]:
        """`RunInfo` for every thread in the checkpointer (status, current agent, step), newest first."""
        return runtime().reading(self, checkpointer).runs(limit=limit)

    def history(
        self, thread_id: str, *, checkpointer: Any = None, all_namespaces: bool = False
    ) -> list[CheckpointInfo]:
        """The thread's checkpoints (`CheckpointInfo`), newest first; sub-agents' too if asked."""
        return (
            runtime().reading(self, checkpointer).history(thread_id, all_namespaces=all_namespaces)
        )

    # -- drawing and composing -------------------------------------------------------------------

    def draw(
        self,
        format: str = "mermaid",
        *,
        xray: bool | int = False,
        dataflow: bool = False,
        thread_id: str | None = None,
        checkpointer: Any = None,
    ) -> str | bytes:
        """Draw the agent tree: mermaid, dot, plantuml, ascii, json, html (text); svg, png (bytes).

        Options (see `graphflow.visualize.draw`): `xray` adds each agent's LangGraph nodes,
        `dataflow` who writes and reads each key, `thread_id` (and `checkpointer`) colours a run.
        """
        return runtime().draw(
            self,
            format,
            xray=xray,
            dataflow=dataflow,
            thread_id=thread_id,
            checkpointer=checkpointer,
        )

    def draw_to(
        self,
        path: str | Path,
        *,
        format: str | None = None,
        xray: bool | int = False,
        dataflow: bool = False,
        thread_id: str | None = None,
        checkpointer: Any = None,
    ) -> Path:
        """Write a drawing to `path`, the format chosen by its suffix (`team.svg`, `team.html`)."""
        return runtime().draw_to(
            self,
            path,
            format=format,
            xray=xray,
            dataflow=dataflow,
            thread_id=thread_id,
            checkpointer=checkpointer,
        )

    def batch(
        self,
        inputs: Iterable[Any],
        *,
        concurrency: int = 4,
        checkpointer: Any = None,
        batch_id: str | None = None,
        on_result: Callable[[BatchResult], Any] | None = None,
    ) -> list[BatchResult]:
        """Run over every input, each on its own durable thread, `concurrency` at once.

        Inputs are strings or dicts of state keys (a dict may carry an `id`, which names its
        thread `BATCH_ID/ID`). A failing input never stops the others; results come back in
        input order with a status each (`done`, `failed`, `interrupted`). Running the same batch
        again on the same store skips what finished and resumes the rest from its checkpoints.
        See `graphflow.batch` (and `graphflow batch` on the command line).
        """
        return (
            runtime()
            .running(self, checkpointer)
            .batch(inputs, concurrency=concurrency, batch_id=batch_id, on_result=on_result)
        )

    async def abatch(
        self,
        inputs: Iterable[Any],
        *,
        concurrency: int = 4,
        checkpointer: Any = None,
        batch_id: str | None = None,
        on_result: Callable[[BatchResult], Any] | None = None,
    ) -> list[BatchResult]:
        """Async `batch`: the inputs run as tasks of the running event loop."""
        compiled = runtime().running(self, checkpointer)
        return await compiled.abatch(
            inputs, concurrency=concurrency, batch_id=batch_id, on_result=on_result
        )

    def as_tool(self, name: str | None = None, description: str | None = None) -> BaseTool:
        """This agent as a tool of a `ReactAgent` (the supervisor pattern).

        The tool's `request` argument becomes the agent's input; the value of its `output_key`
        (or its final message) is the tool's result. It runs in its own checkpoint namespace
        and none of its messages reach the caller's conversation.
        """
        return runtime().as_tool(self, name, description)

    # -- specs (delegated to graphflow.spec) -------------------------------------------------------

    def to_spec(self) -> dict[str, Any]:
        """This agent tree as a spec mapping (YAML/JSON-ready; see `graphflow.spec`)."""
        return runtime().to_spec(self)

    @classmethod
    def from_spec(cls, data: Mapping[str, Any]) -> Agent:
        """The agent tree a spec mapping describes; `kind` may be left out on a subclass."""
        return runtime().from_spec(cls, data)

    # -- resources the tree owns -----------------------------------------------------------------

    def close(self) -> None:
        """Stop what this tree started for itself: the MCP servers its spec started. Idempotent.

        A tree built in Python owns nothing (close the toolsets you made yourself); one loaded
        with `load_spec` owns the servers of its `{mcp: ...}` tools, which stop here, when the
        tree is garbage-collected, or at the end of the process. Its tools fail afterwards.
        """
        for agent in self.walk():
            for resource in agent._owned:
                resource.close()

    async def aclose(self) -> None:
        """Async `close()` (servers are stopped off the event loop)."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
