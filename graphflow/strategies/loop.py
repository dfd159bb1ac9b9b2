"""Strategy for `LoopAgent`: its body as a chain that goes round until the loop ends (do-while).

There are no bookkeeping nodes: the loop's entry (pass 0, status `running`, the keys its body
writes cleared) is sent with its input by the parent's node, and the exit check runs in the
node of the body's last sub-agent (or of one that called `exit_loop`) right after it returns —
it either counts the pass and goes round, or writes why the loop ended and leaves.

Keys the body writes are cleared when the loop starts, so a new turn on a finished thread never
shows the first pass an old pass's result (a reviewer's APPROVE from the last turn read by this
turn's writer as feedback).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langgraph.graph import StateGraph
from typing_extensions import override

from graphflow.exceptions import AgentRunError
from graphflow.state import AGENT_STATUS, EXIT_LOOP, LOOP_ITERATION, MESSAGES, merge_dicts
from graphflow.strategies._agent_hooks import HookChain
from graphflow.strategies.base import BuildContext
from graphflow.strategies.kind import ChildRole, Ports, RunCounts, callable_name
from graphflow.strategies.registry import strategy_for
from graphflow.strategies.sequential import SequentialStrategy, chain
from graphflow.tools.exit_loop import is_exit_loop

if TYPE_CHECKING:
    from graphflow.agents.base import Agent
    from graphflow.visualize.context import DrawContext

__all__ = ("LoopStrategy", "has_exit_loop", "loop_ends")


def has_exit_loop(agent: Agent) -> bool:
    """Whether an agent of the loop's body (not inside a nested loop) has the `exit_loop` tool."""

    def search(node: Agent) -> bool:
        strategy = strategy_for(node)
        if any(is_exit_loop(t) for t in strategy.tools(node)):
            return True
        return any(search(c) for c in strategy.children(node) if not _is_loop(c))

    return any(search(c) for c in strategy_for(agent).children(agent) if not _is_loop(c))


def _is_loop(agent: Agent) -> bool:
    return strategy_for(agent).consumes_exit_loop


def loop_ends(details: Mapping[str, Any]) -> list[str]:
    """What ends a loop, from its details: `until=<predicate>`, `exit_loop`, `≤ N passes`."""
    ends = [f"until={details['until']}"] if details.get("until") else []
    if details.get("exit_loop"):
        ends.append("exit_loop")
    ends.append(f"≤ {details.get('max_iterations')} passes")
    return ends


def _preview(state: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """The state as the exit check sees it: `update` applied (messages appended, statuses merged)."""
    view = {**state, **update}
    if MESSAGES in update:
        view[MESSAGES] = [*(state.get(MESSAGES) or []), *update[MESSAGES]]
    if AGENT_STATUS in update:
        view[AGENT_STATUS] = merge_dicts(state.get(AGENT_STATUS), update[AGENT_STATUS])
    return view


class LoopStrategy(SequentialStrategy):
    """Builds a `LoopAgent`'s graph: a repeated sequence (its result key is the sequence's)."""

    consumes_exit_loop = True

    @override
    def details(self, agent: Any) -> dict[str, Any]:
        details: dict[str, Any] = {"max_iterations": agent.max_iterations}
        if agent.until is not None:
            details["until"] = callable_name(agent.until)
        details["exit_loop"] = has_exit_loop(agent)
        return details

    @override
    def draw(self, agent: Any, ctx: DrawContext) -> Ports:
        ports = ctx.sequence(agent.sub_agents)
        label = "repeat · " + "\nor ".join(loop_ends(ctx.details))
        ctx.edge(ports.exit, ports.entry, kind="loop", label=label, style="bold")
        return ports

    @override
    def child_role(self, agent: Any, child: Any, task_input: Mapping[str, Any] | None) -> ChildRole:
        iteration = task_input.get(LOOP_ITERATION) if isinstance(task_input, Mapping) else None
        return ChildRole(iteration=iteration)

    @override
    def read_run(self, agent: Any, invocations: Sequence[Sequence[Any]]) -> RunCounts:
        total = 0
        for tuples in invocations:  # one namespace per run of the loop (a loop in a loop)
            values = [t.checkpoint.get("channel_values", {}) for t in tuples]
            passes = [v[LOOP_ITERATION] for v in values if v.get(LOOP_ITERATION) is not None]
            total += max(passes) + 1 if passes else 0
        return RunCounts(loop_passes=total)

    @override
    def reads(self, agent: Any) -> set[str] | None:
        if agent.until is None:
            return set(agent.input_keys)
        # a predicate may say what it reads (output_contains does); any other may read anything
        declared = getattr(agent.until, "reads", None)
        return None if declared is None else set(declared) | set(agent.input_keys)

    @override
    def check_dataflow(
        self, agent: Any, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        ctx.builder.check_placeholders(agent, available, ctx)
        inner = replace(ctx, in_loop=True)
        for child in agent.sub_agents:
            available = ctx.builder.check(child, available, inner.child(child))
        return available | self.own_writes(agent)

    def cleared_keys(self, agent: Any, ctx: BuildContext) -> list[str]:
        """The keys the loop's passes write, cleared when the loop starts (not caller inputs)."""
        out: set[str] = set()
        for child in agent.sub_agents:
            out |= ctx.builder.writes(child)
        return sorted(out - ctx.builder.input_keys)

    @override
    def entry_update(
        self, agent: Any, state: Mapping[str, Any], ctx: BuildContext
    ) -> dict[str, Any]:
        return {
            LOOP_ITERATION: 0,
            EXIT_LOOP: False,
            AGENT_STATUS: {agent.name: "running"},
            **dict.fromkeys(self.cleared_keys(agent, ctx)),
        }

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph: StateGraph = StateGraph(ctx.schema())
        hooks = HookChain(agent)
        body = list(agent.sub_agents)
        last_key = ctx.builder.result_key(body[-1])
        done = hooks.after_entry

        def check(state: Mapping[str, Any], update: dict[str, Any]) -> dict[str, Any]:
            view = _preview(state, update)
            iteration = int(state.get(LOOP_ITERATION) or 0)
            if view.get(EXIT_LOOP):
                reason = "exit_loop"
            elif agent.until is not None and _until(agent, view):
                reason = "until"
            elif iteration + 1 >= agent.max_iterations:
                reason = "max_iterations"
            else:
                return {**update, LOOP_ITERATION: iteration + 1}
            statuses = {**update.get(AGENT_STATUS, {}), agent.name: reason}
            out = {**update, AGENT_STATUS: statuses}
            if view.get(EXIT_LOOP):
                out[EXIT_LOOP] = False  # consumed here: enclosing agents go on
            if agent.output_key:
                out[agent.output_key] = view.get(last_key) if last_key else None
            return out

        def running(state: Mapping[str, Any]) -> bool:
            return (state.get(AGENT_STATUS) or {}).get(agent.name) == "running"

        chain(
            graph,
            agent,
            replace(ctx, in_loop=True),
            body,
            exit_to=done,
            after_last=body[0].name,
            finalize=check,
            proceed=running,
            in_loop=True,
        )
        hooks.install(graph, body[0].name, None, ctx, entry_update=self.starts(agent, ctx))
        return graph


def _until(agent: Any, state: Mapping[str, Any]) -> bool:
    try:
        return bool(agent.until(state))
    except Exception as exc:
        name = getattr(agent.until, "__name__", repr(agent.until))
        raise AgentRunError(
            f"LoopAgent `{agent.name}`: its until predicate {name} raised "
            f"{type(exc).__name__}: {exc}; fix the predicate (it receives the state after each "
            "pass), then resume the run (agent.resume(thread_id))",
            agent=agent.name,
        ) from exc
