"""The `Agent` base: a declarative spec that compiles to a LangGraph `StateGraph`."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from graphflow.hooks.base import Hook
from graphflow.instructions import Placeholder, parse_template
from graphflow.state import INPUT, MESSAGES, RESERVED_KEYS

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Self

    from langchain_core.tools import BaseTool
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph

__all__ = ("Agent", "AgentInput")

AgentInput = str | BaseMessage | Sequence[BaseMessage] | dict[str, Any] | Command | None
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFAULT_RECURSION_LIMIT = 10_000


def _check_identifier(value: str, what: str) -> str:
    """`value` if it can name an agent or a state key; else a ValueError saying why."""
    if not _IDENT.fullmatch(value):
        raise ValueError(
            f"{what} {value!r} is not an identifier; use letters, digits and _ "
            "(not starting with a digit), e.g. 'research_data'"
        )
    if value in RESERVED_KEYS:
        raise ValueError(
            f"{what} {value!r} is reserved by graphflow (reserved: {', '.join(sorted(RESERVED_KEYS))})"
        )
    if value.startswith("gf_"):
        # graphflow's private channels; they are never handed to sub-agents
        raise ValueError(f"{what} {value!r}: names starting with 'gf_' are reserved")
    return value


class Agent(BaseModel):
    """Base of every agent spec. Subclasses add what their kind needs.

    Specs are validated pydantic models (`extra="forbid"`: a misspelt option fails at once).
    `to_graph()` gives the uncompiled LangGraph `StateGraph`; `compile()` a cached
    `CompiledStateGraph`; `invoke`/`stream`/`resume` run it.
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
    include_contents: Literal["default", "none"] = "default"
    """`default`: the agent sees the parent conversation; `none`: only its instruction."""
    return_reasoning_contents: bool = False
    """Hand every message the agent produced back to the parent, not only its final answer."""
    hooks: list[Hook] = Field(default_factory=list)
    """Agent, model and tool hooks, run in list order (after-hooks in reverse)."""
    input_keys: list[str] = Field(default_factory=list)
    """State keys the caller supplies besides `input`; instructions may use them."""

    _compiled: dict[Any, CompiledStateGraph] = PrivateAttr(default_factory=dict)
    _template: tuple[str | Placeholder, ...] = PrivateAttr(default=())

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return _check_identifier(value, "agent name")

    @field_validator("output_key")
    @classmethod
    def _valid_output_key(cls, value: str | None) -> str | None:
        return None if value is None else _check_identifier(value, "output_key")

    @field_validator("input_keys")
    @classmethod
    def _valid_input_keys(cls, value: list[str]) -> list[str]:
        return [_check_identifier(v, "input key") for v in value]

    @field_validator("instruction")
    @classmethod
    def _valid_instruction(cls, value: str | None) -> str | None:
        if value is not None:
            parse_template(value)
        return value

    def __init__(self, /, **data: Any) -> None:
        # parse first, so a malformed template raises InstructionTemplateError itself (inside
        # pydantic validation it would be wrapped in a ValidationError)
        if isinstance(data.get("instruction"), str):
            parse_template(data["instruction"])
        super().__init__(**data)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with its own compile cache and template (pydantic would share the cache)."""
        copy = super().model_copy(update=update, deep=deep)
        copy._compiled = {}
        copy._template = parse_template(copy.instruction) if copy.instruction else ()
        return copy

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if not name.startswith("_"):
            # a changed spec must not keep serving the graph compiled from the old one
            self._compiled = {}
            if name == "instruction":
                self._template = parse_template(value) if value else ()

    def model_post_init(self, context: Any) -> None:
        """Parse the instruction once."""
        self._template = parse_template(self.instruction) if self.instruction else ()

    # -- structure -------------------------------------------------------------------------------

    @property
    def sub_agents_list(self) -> list[Agent]:
        """Direct sub-agents (empty for leaf agents)."""
        return list(getattr(self, "sub_agents", []) or [])

    @property
    def template(self) -> tuple[str | Placeholder, ...]:
        """The parsed instruction template."""
        return self._template

    def placeholders(self) -> list[Placeholder]:
        """The placeholders the instruction uses."""
        return [p for p in self._template if isinstance(p, Placeholder)]

    def walk(self) -> Iterator[Agent]:
        """This agent and all its descendants, depth first."""
        yield self
        for child in self.sub_agents_list:
            yield from child.walk()

    def find(self, name: str) -> Agent:
        """The agent called `name` in this tree."""
        for agent in self.walk():
            if agent.name == name:
                return agent
        raise KeyError(f"no agent named {name!r} in the tree of {self.name!r}")

    # -- building --------------------------------------------------------------------------------

    def to_graph(self) -> StateGraph:
        """The uncompiled LangGraph `StateGraph` for this agent as the root of a tree.

        Raises:
            GraphflowConfigError: the tree is misconfigured (checked before any model call).
        """
        from graphflow.strategies.builder import FlowGraphBuilder

        return FlowGraphBuilder().build(self)

    def compile(
        self,
        checkpointer: Any = None,
        *,
        store: Any = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        debug: bool = False,
    ) -> CompiledStateGraph:
        """Compile (once; cached per checkpointer and store) into a LangGraph graph.

        Args:
            checkpointer: a LangGraph saver, a URL (`memory:`, `sqlite:///runs.db`,
                `postgresql://...`), `False` for none, or None for an in-memory saver.
            store: a LangGraph store for long-term memory.
            interrupt_before: node names to pause before.
            interrupt_after: node names to pause after.
            debug: LangGraph debug output.
        """
        from graphflow.checkpoint import resolve_checkpointer, schema_types

        # keyed by the objects themselves (identity hash), so a collected saver's id is never reused
        key = (
            checkpointer,
            store,
            tuple(interrupt_before or ()),
            tuple(interrupt_after or ()),
            debug,
        )
        if key not in self._compiled:
            saver = resolve_checkpointer(checkpointer, allowed_types=schema_types(self.walk()))
            graph = self.to_graph().compile(
                checkpointer=saver,
                store=store,
                interrupt_before=list(interrupt_before or []) or None,
                interrupt_after=list(interrupt_after or []) or None,
                debug=debug,
                name=self.name,
            )
            self._compiled[key] = graph.with_config(  # type: ignore[assignment]
                recursion_limit=DEFAULT_RECURSION_LIMIT
            )
        return self._compiled[key]

    def _graph_for(self, checkpointer: Any) -> CompiledStateGraph:
        return self.compile(checkpointer)

    @asynccontextmanager
    async def _agraph(self, checkpointer: Any) -> AsyncIterator[CompiledStateGraph]:
        # SQLite/PostgreSQL URLs: an async saver opened for this call in the running loop and
        # closed after it, on the graph compiled once without a saver
        from graphflow.checkpoint import needs_async_saver, open_async_checkpointer, schema_types

        if not needs_async_saver(checkpointer):
            yield self.compile(checkpointer)
            return
        types = schema_types(self.walk())
        async with open_async_checkpointer(checkpointer, allowed_types=types) as saver:
            yield self.compile(False).copy(update={"checkpointer": saver})

    # -- running ---------------------------------------------------------------------------------

    def _prepare(
        self, input: AgentInput, thread_id: str | None, config: RunnableConfig | None
    ) -> tuple[Any, RunnableConfig]:
        cfg: dict[str, Any] = dict(config or {})
        configurable = dict(cfg.get("configurable") or {})
        configurable.setdefault(
            "thread_id", thread_id or configurable.get("thread_id") or str(uuid.uuid4())
        )
        cfg["configurable"] = configurable
        cfg.setdefault("recursion_limit", DEFAULT_RECURSION_LIMIT)
        from graphflow.strategies.builder import strategy_for

        for key, value in strategy_for(self).invoke_config(self).items():
            cfg.setdefault(key, value)
        return normalize_input(input), cfg  # type: ignore[return-value]

    def invoke(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        durability: Literal["sync", "async", "exit"] = "sync",
    ) -> dict[str, Any]:
        """Run to the end (or to an interrupt) and return the final state.

        `input` may be a string (it becomes the `input` key and a user message), a message, a
        list of messages, a dict of state keys, or None to continue the thread's last run.
        """
        graph = self._graph_for(checkpointer)
        data, cfg = self._prepare(input, thread_id, config)
        result = graph.invoke(data, cfg, durability=_durability(graph, durability))
        return _public(result)

    async def ainvoke(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        durability: Literal["sync", "async", "exit"] = "sync",
    ) -> dict[str, Any]:
        """Async `invoke`."""
        data, cfg = self._prepare(input, thread_id, config)
        async with self._agraph(checkpointer) as graph:
            result = await graph.ainvoke(data, cfg, durability=_durability(graph, durability))
        return _public(result)

    def stream(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        stream_mode: Any = "updates",
        subgraphs: bool = True,
        durability: Literal["sync", "async", "exit"] = "sync",
    ) -> Iterator[Any]:
        """Stream LangGraph events (`(namespace, chunk)` pairs with `subgraphs=True`)."""
        graph = self._graph_for(checkpointer)
        data, cfg = self._prepare(input, thread_id, config)
        yield from graph.stream(
            data,
            cfg,
            stream_mode=stream_mode,
            subgraphs=subgraphs,
            durability=_durability(graph, durability),
        )

    async def astream(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        stream_mode: Any = "updates",
        subgraphs: bool = True,
        durability: Literal["sync", "async", "exit"] = "sync",
    ) -> AsyncIterator[Any]:
        """Async `stream`."""
        data, cfg = self._prepare(input, thread_id, config)
        async with self._agraph(checkpointer) as graph:
            async for event in graph.astream(
                data,
                cfg,
                stream_mode=stream_mode,
                subgraphs=subgraphs,
                durability=_durability(graph, durability),
            ):
                yield event

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
        command: Command | None = None if value is None else Command(resume=value)
        if value is not None:
            from graphflow.hooks.builtins.approval import check_resume_value

            snapshot = self.get_state(thread_id, checkpointer=checkpointer)
            check_resume_value(snapshot.interrupts, value)
        return self.invoke(command, thread_id=thread_id, checkpointer=checkpointer, config=config)

    async def aresume(
        self,
        thread_id: str,
        value: Any = None,
        *,
        checkpointer: Any = None,
        config: RunnableConfig | None = None,
    ) -> dict[str, Any]:
        """Async `resume`."""
        command: Command | None = None if value is None else Command(resume=value)
        if value is not None:
            from graphflow.hooks.builtins.approval import check_resume_value

            async with self._agraph(checkpointer) as graph:
                snapshot = await graph.aget_state(
                    {"configurable": {"thread_id": thread_id}}, subgraphs=True
                )
            check_resume_value(snapshot.interrupts, value)
        return await self.ainvoke(
            command, thread_id=thread_id, checkpointer=checkpointer, config=config
        )  # type: ignore[arg-type]

    def get_state(self, thread_id: str, *, checkpointer: Any = None) -> Any:
        """The thread's latest `StateSnapshot` (values, next nodes, pending interrupts)."""
        graph = self._graph_for(checkpointer)
        return graph.get_state({"configurable": {"thread_id": thread_id}}, subgraphs=True)

    def runs(self, *, checkpointer: Any = None, limit: int | None = None) -> list[Any]:
        """`RunInfo` for every thread in the checkpointer (status, current agent, step), newest first."""
        from graphflow.checkpoint.runs import list_runs

        names = [a.name for a in self.walk()]
        return list_runs(self._graph_for(checkpointer), agents=names, limit=limit)

    def history(
        self, thread_id: str, *, checkpointer: Any = None, all_namespaces: bool = False
    ) -> list[Any]:
        """The thread's checkpoints (`CheckpointInfo`), newest first; sub-agents' too if asked."""
        from graphflow.checkpoint.runs import run_history

        graph = self._graph_for(checkpointer)
        return run_history(graph, thread_id, all_namespaces=all_namespaces)

    def draw(self, format: str = "mermaid", **options: Any) -> str | bytes:
        """Draw the agent tree (`graphflow.visualize.draw`: mermaid, dot, plantuml, ascii, json, html, svg, png)."""
        from graphflow.visualize import draw

        return draw(self, format, **options)

    def draw_to(self, path: Any, **options: Any) -> Any:
        """Write the drawing to `path`, the format from its suffix (`graphflow.visualize.draw_to`)."""
        from graphflow.visualize import draw_to

        return draw_to(self, path, **options)

    def as_tool(self, name: str | None = None, description: str | None = None) -> BaseTool:
        """This agent as a tool of a `ReactAgent` (the supervisor pattern).

        The tool's `request` argument becomes the agent's input; the value of its `output_key`
        (or its final message) is the tool's result. It runs in its own checkpoint namespace
        and none of its messages reach the caller's conversation.
        """
        from graphflow.agents._as_tool import agent_as_tool

        return agent_as_tool(self, name=name, description=description)


def normalize_input(input: AgentInput | Command) -> Any:
    """Turn what a user passes to `invoke` into a state update."""
    if input is None or isinstance(input, Command):
        return input
    if isinstance(input, str):
        return {INPUT: input, MESSAGES: [HumanMessage(content=input)]}
    if isinstance(input, BaseMessage):
        return {INPUT: input.text, MESSAGES: [input]}
    if isinstance(input, dict):
        data = dict(input)
        if isinstance(data.get(INPUT), str) and MESSAGES not in data:
            data[MESSAGES] = [HumanMessage(content=data[INPUT])]
        return data
    if isinstance(input, Sequence) and all(isinstance(m, BaseMessage) for m in input):
        messages = list(input)
        humans = [m for m in messages if isinstance(m, HumanMessage)]
        return {INPUT: humans[-1].text if humans else "", MESSAGES: messages}
    raise TypeError(
        f"cannot run an agent on {type(input).__name__}; pass a string, a message, a list of "
        "messages or a dict of state keys"
    )


def _durability(graph: Any, durability: Any) -> Any:
    # without a checkpointer there is nothing to make durable (and LangGraph 1.2 fails on "sync")
    return durability if graph.checkpointer else None


def _public(result: Any) -> dict[str, Any]:
    if not isinstance(result, dict):
        return result
    return {k: v for k, v in result.items() if not k.startswith("gf_")}
