"""Strategy for `LlmRoutingAgent`: `gf_route` (the model picks) → the chosen routes.

The choice is structured output validated against the route names; an invalid one is retried as
its own step (`gf_route` loops to itself with the errors as feedback), so a resumed run never
repeats a finished attempt. One chosen route writes the router's result in its own node; several
(`multi=True`) run concurrently and meet at `gf_done`, which hands their messages on in
declaration order.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from langgraph.types import Command
from pydantic import BaseModel, Field, ValidationError, create_model
from typing_extensions import override

from graphflow.exceptions import ModelCallError, RoutingError
from graphflow.instructions import render_template
from graphflow.messages import instruction_message
from graphflow.models.errors import model_call_errors
from graphflow.models.structured import ainvoke_structured, invoke_structured
from graphflow.models.timeout import model_timeout_error
from graphflow.state import (
    AGENT_STATUS,
    HELD_MESSAGES,
    INPUT,
    MESSAGES,
    ROUTE_ERRORS,
    ROUTE_NODE,
    ROUTES,
    ROUTES_JOIN_NODE,
    merge_dicts,
)
from graphflow.strategies._agent_hooks import HookChain, guarded
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy, input_reads
from graphflow.strategies.kind import ChildRole, Ports, RunCounts, model_name
from graphflow.strategies.parallel import release_held

if TYPE_CHECKING:
    from graphflow.visualize.context import DrawContext

__all__ = ("RoutingStrategy", "query_message")


def query_message(text: str) -> HumanMessage:
    """A user message carrying a router's rewritten query."""
    return HumanMessage(content=text, id=f"route-{uuid.uuid4()}")


def _choice_schema(agent: Any) -> type[BaseModel]:
    names = tuple(a.name for a in agent.sub_agents)
    route = create_model(
        "Route",
        agent=(Literal[names], Field(description="Name of the agent to run.")),  # type: ignore[arg-type,valid-type]
        query=(
            str | None,
            Field(default=None, description="Optional rewritten request for that agent."),
        ),
    )
    if agent.multi:
        return create_model(
            "RouteChoices",
            routes=(list[route], Field(min_length=1, description="The agents to run.")),  # type: ignore[valid-type]
        )
    return route


def _describe(exc: Exception) -> str:
    """A short account of an invalid choice, specific enough for the model to correct it."""
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'choice'}: {e['msg']} (got {e.get('input')!r})"
            for e in exc.errors()
        )[:500]
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


def _prompt(agent: Any) -> str:
    lines = "\n".join(
        f"- {a.name}: {a.description or '(no description)'}" for a in agent.sub_agents
    )
    how = (
        'Reply with JSON {"routes": [{"agent": <name>, "query": <optional rewritten request>}, ...]} '
        "choosing every agent that should work on the request."
        if agent.multi
        else 'Reply with JSON {"agent": <name>, "query": <optional rewritten request>} choosing '
        "the one agent best suited to the request."
    )
    return f"You route requests to the agent best suited to handle them. Agents:\n{lines}\n{how}"


def _decisions(invocations: Sequence[Sequence[Any]]) -> RunCounts:
    """A router's model calls and latest choice, from its checkpoints.

    Each attempt writes its choice (`ROUTES`) or, to be retried, the errors so far
    (`ROUTE_ERRORS`); the empty values are resets, not calls. A last attempt that fails the run
    writes nothing, so it is not counted. A router in a loop chooses again: the latest choice is
    the one shown.
    """
    seen: set[str] = set()
    calls, routes, routes_at = 0, [], ""
    for tuples in invocations:
        for tup in tuples:
            for task, channel, value in tup.pending_writes or ():
                if channel not in (ROUTES, ROUTE_ERRORS) or not value or task in seen:
                    continue
                seen.add(task)
                calls += 1
                at = str(tup.config["configurable"].get("checkpoint_id", ""))
                if channel == ROUTES and at >= routes_at:
                    routes, routes_at = list(value), at
    return RunCounts(model_calls=calls, outcome="→ " + ", ".join(routes) if routes else "")


class RoutingStrategy(FlowGraphBuildingStrategy):
    """Builds an `LlmRoutingAgent`'s graph."""

    unused_fields = frozenset({"return_reasoning_contents"})  # it hands on its routes' answers

    @override
    def kind_name(self, agent_type: type[Any]) -> str:
        return "routing"

    @override
    def details(self, agent: Any) -> dict[str, Any]:
        return {
            "model": model_name(agent.model),
            "routes": [{"name": a.name, "description": a.description} for a in agent.sub_agents],
            "fallback": agent.fallback,
            "multi": agent.multi,
            "max_retries": agent.max_retries,
        }

    @override
    def draw(self, agent: Any, ctx: DrawContext) -> Ports:
        how = "LLM picks routes" if agent.multi else "LLM picks a route"
        decision = ctx.node("decide", f"{agent.name}?\n{how}", kind="decision")
        join = ctx.node(
            "join", "routed" + (f" → {agent.output_key}" if agent.output_key else ""), kind="join"
        )
        for route in agent.sub_agents:
            ports = ctx.child(route)
            ctx.edge(decision, ports.entry, kind="route", label=route.description or route.name)
            if route.name == agent.fallback:
                ctx.edge(decision, ports.entry, kind="fallback", label="fallback", style="dashed")
            ctx.edge(ports.exit, join)
        return Ports(entry=decision, exit=join, anchor=decision)

    @override
    def child_role(self, agent: Any, child: Any, task_input: Mapping[str, Any] | None) -> ChildRole:
        return ChildRole(branch=child.name) if agent.multi else ChildRole()

    @override
    def read_run(self, agent: Any, invocations: Sequence[Sequence[Any]]) -> RunCounts:
        return _decisions(invocations)

    @override
    def reads(self, agent: Any) -> set[str] | None:
        return input_reads(agent) | ({INPUT} if agent.include_contents == "none" else set())

    @override
    def check_dataflow(
        self, agent: Any, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        builder = ctx.builder
        builder.check_placeholders(agent, available, ctx)
        if agent.multi:
            builder.check_distinct_writes(
                agent.sub_agents, f"LlmRoutingAgent `{agent.name}` (multi=True) routes"
            )
        outs = [builder.check(r, available, ctx.child(r)) for r in agent.sub_agents]
        # only keys every route writes are certain to exist afterwards
        common = frozenset.intersection(*outs) if outs else available
        return common | self.own_writes(agent)

    @override
    def invoke_config(self, agent: Any) -> dict[str, Any]:
        # LangGraph's default thread pool has min(32, cpus + 4) workers; size it to the routes
        return {"max_concurrency": len(agent.sub_agents)} if agent.multi else {}

    @override
    def entry_update(
        self, agent: Any, state: Mapping[str, Any], ctx: BuildContext
    ) -> dict[str, Any]:
        return {ROUTE_ERRORS: [], ROUTES: {}}

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph: StateGraph = StateGraph(
            ctx.schema(
                {
                    HELD_MESSAGES: Annotated[dict[str, Any], merge_dicts],
                    ROUTE_ERRORS: list[str],
                    ROUTES: dict[str, Any],
                }
            )
        )
        hooks = HookChain(agent)
        builder = ctx.builder
        routes = list(agent.sub_agents)
        names = [r.name for r in routes]
        keys = {r.name: builder.result_key(r) for r in routes}
        schema = _choice_schema(agent)
        model = agent.chat_model()
        system = _prompt(agent)
        after = hooks.after_entry

        def messages_for(state: Mapping[str, Any]) -> list[BaseMessage]:
            msgs: list[BaseMessage] = [SystemMessage(content=system)]
            if agent.include_contents == "default":
                msgs += list(state.get(MESSAGES) or [])
            if agent.instruction:
                text = render_template(agent.template, state, agent=agent.name)
                msgs.append(instruction_message(text, agent=agent.name))
            elif agent.include_contents == "none" and state.get(INPUT):
                msgs.append(HumanMessage(content=str(state[INPUT])))
            return msgs

        def decide(parsed: Any) -> dict[str, str | None]:
            chosen = parsed.routes if agent.multi else [parsed]
            out: dict[str, str | None] = {}
            for c in chosen:
                out[c.agent] = c.query
            return out

        def feedback(error: str) -> HumanMessage:
            return HumanMessage(
                content=(
                    f"That choice was invalid: {error}. Valid agents: {', '.join(names)}. "
                    "Answer again with JSON only."
                )
            )

        def chosen(choice: dict[str, str | None]) -> Command:
            return Command(goto=list(choice), update={ROUTES: choice, ROUTE_ERRORS: []})

        def retry_or_fail(errors: list[str]) -> Command:
            if len(errors) <= agent.max_retries:
                # each attempt is its own step: a resumed run never repeats a finished one
                return Command(goto=ROUTE_NODE, update={ROUTE_ERRORS: errors})
            if agent.fallback:
                return chosen({agent.fallback: None})
            raise RoutingError(
                f"LlmRoutingAgent `{agent.name}`: no valid route after {len(errors)} attempts "
                f"({'; '.join(errors)}); valid routes: {', '.join(names)}. Set fallback= to run "
                "a default agent instead",
                agent=agent.name,
            )

        def attempt_messages(state: Mapping[str, Any]) -> list[BaseMessage]:
            errors = state.get(ROUTE_ERRORS) or []
            return [*messages_for(state), *(feedback(e) for e in errors)]

        def failed(state: Mapping[str, Any], exc: Exception) -> Command:
            return retry_or_fail([*(state.get(ROUTE_ERRORS) or []), _describe(exc)])

        def timed_out() -> BaseException:
            return model_timeout_error(agent.name, model, agent.model_timeout)

        options = {
            "method": agent.structured_output,
            "settings": agent.model_settings,
            "timeout": agent.model_timeout,
            "timed_out": timed_out,
        }

        def settled(state: Mapping[str, Any], exc: Exception) -> Command:
            if isinstance(exc, ModelCallError):
                # the endpoint failed (after its retries): the fallback route, else the error
                if not agent.fallback:
                    raise exc
                return chosen({agent.fallback: None})
            return failed(state, exc)  # an invalid choice: retried with feedback

        def call_errors(config: RunnableConfig) -> Any:
            return model_call_errors(agent=agent.name, model=model, config=config)

        def route(state: dict[str, Any], config: RunnableConfig) -> Command:
            try:
                with call_errors(config):
                    messages = attempt_messages(state)
                    parsed = invoke_structured(model, schema, messages, config=config, **options)
                return chosen(decide(parsed))
            except (ModelCallError, ValidationError, ValueError) as exc:
                return settled(state, exc)

        async def aroute(state: dict[str, Any], config: RunnableConfig) -> Command:
            try:
                with call_errors(config):
                    messages = attempt_messages(state)
                    parsed = await ainvoke_structured(
                        model, schema, messages, config=config, **options
                    )
                return chosen(decide(parsed))
            except (ModelCallError, ValidationError, ValueError) as exc:
                return settled(state, exc)

        def with_query(name: str) -> Any:
            def prepare(state: Mapping[str, Any], data: dict[str, Any]) -> dict[str, Any]:
                query = (state.get(ROUTES) or {}).get(name)
                if query:
                    data[INPUT] = query
                    data[MESSAGES] = [*data[MESSAGES], query_message(query)]
                return data

            return prepare

        def result_of(state: Mapping[str, Any], update: dict[str, Any], key: str | None) -> Any:
            return update.get(key, state.get(key)) if key else None

        def single_done(route_name: str) -> Any:
            # one route: its node writes the router's result (no join node)
            def complete(state: Mapping[str, Any], update: dict[str, Any]) -> dict[str, Any]:
                out = {**update}
                out[AGENT_STATUS] = {**update.get(AGENT_STATUS, {}), agent.name: "completed"}
                if agent.output_key:
                    out[agent.output_key] = result_of(state, update, keys.get(route_name))
                return out

            return complete

        def done(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            picked = list((state.get(ROUTES) or {}).keys())
            update: dict[str, Any] = {AGENT_STATUS: {agent.name: "completed"}}
            update.update(release_held(state, names))
            if agent.output_key:
                update[agent.output_key] = {k: state.get(k) for c in picked if (k := keys.get(c))}
            return update

        graph.add_node(
            ROUTE_NODE, guarded(agent, ROUTE_NODE, route, aroute), destinations=(*names, ROUTE_NODE)
        )
        for r in routes:
            graph.add_node(
                r.name,
                builder.child_node(
                    r,
                    ctx.child(r),
                    prepare=with_query(r.name),
                    owner=agent,
                    branch_of=agent if agent.multi else None,
                    collect_messages=HELD_MESSAGES if agent.multi else None,
                    finalize=None if agent.multi else single_done(r.name),
                ),
            )
            graph.add_edge(r.name, ROUTES_JOIN_NODE if agent.multi else after)
        if agent.multi:
            graph.add_node(ROUTES_JOIN_NODE, guarded(agent, ROUTES_JOIN_NODE, done))
            graph.add_edge(ROUTES_JOIN_NODE, after)
        hooks.install(graph, ROUTE_NODE, None, ctx, entry_update=self.starts(agent, ctx))
        return graph
