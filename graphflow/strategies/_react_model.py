"""The model step of a ReAct agent: one model call per node run, with model hooks around it.

One node run is one durable step: the request (system prompt, schema note, conversation), the
model hooks (`before_model`, `wrap_model_call`, `after_model`), the call itself under a timeout,
and the reply. A final answer is validated and written to the agent's `output_key` in the same
step. The step also ends the agent when there is nothing left to ask the model: after
`exit_loop`, at `max_iterations`, or when a hook ends it — so a ReAct graph needs no `finish`
node.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from pydantic import ValidationError

from graphflow._internal.hook_calls import around, call_async, call_sync
from graphflow.exceptions import ModelTimeoutError, OutputValidationError
from graphflow.hooks.base import HookResult, ModelHook, ModelRequest
from graphflow.messages import feedback_kind, feedback_message, is_limit_message
from graphflow.models.errors import model_call_errors
from graphflow.models.structured import ainvoke_chat, invoke_chat, parse_structured, schema_note
from graphflow.models.timeout import model_timeout_error
from graphflow.models.tool_call_ids import unique_tool_call_ids
from graphflow.state import AGENT_STATUS, EXIT_LOOP, MESSAGES, MODEL_CALLS, MODEL_NODE, STOP
from graphflow.strategies._agent_hooks import merge_updates
from graphflow.strategies._react_tools import pending_tool_calls
from graphflow.strategies.base import final_answer

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from graphflow.agents.react import ReactAgent

__all__ = ("ModelStep",)

logger = logging.getLogger("graphflow")


class ModelStep:
    """The `model` node of one ReAct agent."""

    def __init__(self, agent: ReactAgent, tools: list[BaseTool]) -> None:
        self.agent = agent
        self.hooks = [h for h in agent.call_hooks() if isinstance(h, ModelHook)]
        self.tools = tools
        self.model = agent.chat_model()
        self.timeout = agent.model_timeout
        # system texts sent first on every call (the system prompt, then the schema note),
        # rendered once; with model hooks each request gets fresh copies a hook may edit
        self.preamble = [agent.system_prompt] if agent.system_prompt else []
        if agent.output_schema is not None:
            self.preamble.append(schema_note(agent.output_schema))
        self._system = [SystemMessage(content=text) for text in self.preamble]
        self._bound: dict[str, Any] = {}
        """The model with the agent's tools and settings bound, per structured-output method."""

    # -- the request -----------------------------------------------------------------------------

    def _request(self, state: Mapping[str, Any]) -> ModelRequest:
        system = (
            [SystemMessage(content=text) for text in self.preamble] if self.hooks else self._system
        )
        return ModelRequest(
            agent=self.agent.name,
            model=self.model,
            messages=[*system, *(state.get(MESSAGES) or [])],
            tools=list(self.tools),
            settings=dict(self.agent.model_settings),
            state=state,  # type: ignore[arg-type]
            call_number=int(state.get(MODEL_CALLS) or 0),
            timeout=self.timeout,
        )

    def _prepared(self, request: ModelRequest) -> dict[str, Any] | None:
        """The agent's cache of its bound model, when the request is the agent's own (a hook
        that changed the model, the tools or the settings gets a model bound for its request)."""
        default = (
            request.model is self.model
            and len(request.tools) == len(self.tools)
            and all(a is b for a, b in zip(request.tools, self.tools, strict=True))
            and request.settings == self.agent.model_settings
        )
        return self._bound if default else None

    def _options(self, request: ModelRequest, config: RunnableConfig) -> dict[str, Any]:
        return {
            "tools": request.tools,
            "settings": request.settings,
            "output_schema": self.agent.output_schema,
            "structured_output": self.agent.structured_output,
            "config": config,
            "timeout": self.timeout,
            "timed_out": self._timed_out,
            "prepared": self._prepared(request),
        }

    def _timed_out(self) -> ModelTimeoutError:
        return model_timeout_error(self.agent.name, self.model, self.timeout)

    def _call(self, request: ModelRequest, config: RunnableConfig) -> AIMessage:
        return _as_ai(
            invoke_chat(request.model, request.messages, **self._options(request, config))
        )

    async def _acall(self, request: ModelRequest, config: RunnableConfig) -> AIMessage:
        reply = await ainvoke_chat(
            request.model, request.messages, **self._options(request, config)
        )
        return _as_ai(reply)

    # -- the node --------------------------------------------------------------------------------

    def run(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """One model step (sync)."""
        early = self._before_call(state)
        if early is not None:
            return early
        request = self._request(state)
        pending: dict[str, Any] = {}
        for hook in self.hooks:
            result = call_sync(hook, "before_model", "abefore_model", request)
            if isinstance(result, HookResult) and result.jump_to is None:
                pending = merge_updates(pending, result.update)
                continue
            if isinstance(result, AIMessage | HookResult):
                return self._short_circuit(state, result, request, pending)
            if isinstance(result, ModelRequest):
                request = result

        def call(req: ModelRequest) -> AIMessage:
            return self._call(req, config)

        handler: Callable[[ModelRequest], AIMessage] = call
        for hook in reversed(self.hooks):
            handler = around(hook, "wrap_model_call", handler)
        # provider errors are explained outside the hooks: ModelRetry/ModelFallback see them raw
        with model_call_errors(agent=self.agent.name, model=request.model, config=config):
            response = handler(request)
        for hook in reversed(self.hooks):
            replaced = call_sync(hook, "after_model", "aafter_model", request, response)
            if replaced is not None:
                response = replaced
        return merge_updates(_with(pending, request), self._complete(state, response))

    async def arun(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """One model step (async)."""
        early = self._before_call(state)
        if early is not None:
            return early
        request = self._request(state)
        pending: dict[str, Any] = {}
        for hook in self.hooks:
            result = await call_async(hook, "before_model", "abefore_model", request)
            if isinstance(result, HookResult) and result.jump_to is None:
                pending = merge_updates(pending, result.update)
                continue
            if isinstance(result, AIMessage | HookResult):
                return self._short_circuit(state, result, request, pending)
            if isinstance(result, ModelRequest):
                request = result

        async def call(req: ModelRequest) -> AIMessage:
            return await self._acall(req, config)

        handler: Any = call
        for hook in reversed(self.hooks):
            handler = around(hook, "awrap_model_call", handler)
        with model_call_errors(agent=self.agent.name, model=request.model, config=config):
            response = await handler(request)
        for hook in reversed(self.hooks):
            replaced = await call_async(hook, "after_model", "aafter_model", request, response)
            if replaced is not None:
                response = replaced
        return merge_updates(_with(pending, request), self._complete(state, response))

    # -- before the call: nothing to ask? ----------------------------------------------------

    def _before_call(self, state: Mapping[str, Any]) -> dict[str, Any] | None:
        """An update that ends or continues the turn without a model call, or None to call."""
        messages = state.get(MESSAGES) or []
        if state.get(STOP):
            return {}  # it has ended (a finished first call stored by its parent's node)
        if pending_tool_calls(messages):
            return {}  # the turn's next batch of tool calls is due: the router sends it
        if state.get(EXIT_LOOP):
            return self.finish({**state, STOP: "exit_loop"}, stop="exit_loop")
        if int(state.get(MODEL_CALLS) or 0) >= self.agent.max_iterations:
            return self.finish(state, stop="max_iterations")
        return None

    # -- after the call ----------------------------------------------------------------------------

    def _short_circuit(
        self,
        state: Mapping[str, Any],
        result: AIMessage | HookResult,
        request: ModelRequest,
        pending: dict[str, Any],
    ) -> dict[str, Any]:
        """A hook answered the call itself (an `AIMessage`) or ended the agent (`jump_to`)."""
        before = _with(pending, request)
        if isinstance(result, AIMessage):
            return merge_updates(before, self._complete(state, result))
        update = merge_updates(before, dict(result.update))
        update[MODEL_CALLS] = int(state.get(MODEL_CALLS) or 0) + 1
        merged = {**state, **update, MESSAGES: _after(state, update.get(MESSAGES, []))[MESSAGES]}
        return merge_updates(update, self.finish(merged, stop="end"))

    def _complete(self, state: Mapping[str, Any], response: AIMessage) -> dict[str, Any]:
        """The update for a model reply: the reply, error results for malformed tool calls, a
        re-ask, or — for a final answer — the agent's result."""
        agent = self.agent
        calls = int(state.get(MODEL_CALLS) or 0) + 1
        # each call gets its own id before anything runs: a shared or empty id would have one
        # result answer two calls, a missing one could not be answered at all
        response = unique_tool_call_ids(response)
        if response.name is None:
            response.name = agent.name
        out: list[BaseMessage] = [response]
        update: dict[str, Any] = {MESSAGES: out, MODEL_CALLS: calls}
        if response.tool_calls or response.invalid_tool_calls:
            out.extend(_invalid_call_results(response))
            return update
        if is_limit_message(response):
            return merge_updates(update, self.finish(_after(state, out), stop=None))
        previous = feedback_kind((state.get(MESSAGES) or [None])[-1])
        if not response.text.strip():
            if previous != "empty":
                out.append(
                    feedback_message(
                        "Your reply was empty. Answer the request (or call a tool).", "empty"
                    )
                )
                return update
            if agent.output_schema is not None:
                raise OutputValidationError(
                    f"Agent `{agent.name}`: the model gave an empty reply twice, so there is no "
                    f"{agent.output_schema.__name__} to return. Check the model and its "
                    "max_tokens (a reasoning model may spend them all before answering), or use "
                    "structured_output='json_mode' or 'prompt'",
                    agent=agent.name,
                )
            logger.warning("agent %s gave an empty final answer twice", agent.name)
            return merge_updates(update, self.finish(_after(state, out), stop=None, empty=True))
        schema = agent.output_schema
        if schema is not None:
            try:
                parse_structured(schema, response)
            except (ValidationError, ValueError) as exc:
                if previous == "schema":
                    raise OutputValidationError(
                        f"Agent `{agent.name}`: the reply did not match {schema.__name__} "
                        f"after one retry: {exc}",
                        agent=agent.name,
                    ) from exc
                out.append(
                    feedback_message(
                        f"Your reply did not match the required schema: {exc}. Reply again "
                        f"with only a JSON object matching: {json.dumps(schema.model_json_schema())}",
                        "schema",
                    )
                )
                return update
        # a final answer: the result is written here, saving a finish step
        return merge_updates(update, self.finish(_after(state, out), stop=None))

    def finish(
        self, state: Mapping[str, Any], *, stop: str | None, empty: bool = False
    ) -> dict[str, Any]:
        """The agent's end: its status, its result under `output_key`, and why it stopped."""
        agent = self.agent
        messages: list[BaseMessage] = list(state.get(MESSAGES) or [])
        update: dict[str, Any] = {}
        final: AIMessage | None = None
        status = "empty" if empty else "completed"
        if stop == "max_iterations":
            last = messages[-1] if messages else None
            if agent.output_schema is not None:
                # an agent with a schema never ends without a valid output
                why = (
                    "before its reply matched"
                    if feedback_kind(last) == "schema"
                    else "without a final answer to validate against"
                )
                raise OutputValidationError(
                    f"Agent `{agent.name}`: reached max_iterations={agent.max_iterations} {why} "
                    f"{agent.output_schema.__name__}; raise max_iterations or check why the "
                    "model keeps calling tools",
                    agent=agent.name,
                )
            status = "max_iterations"
            final = AIMessage(
                content=(
                    f"Agent `{agent.name}` stopped: it reached max_iterations="
                    f"{agent.max_iterations} model calls without a final answer."
                ),
                name=agent.name,
            )
            update[MESSAGES] = [final]
        elif stop is not None:
            finals = final_answer(agent.name, messages)
            final = finals[0] if finals else None  # type: ignore[assignment]
        else:
            last = messages[-1] if messages else None
            final = last if isinstance(last, AIMessage) else None
        if stop is not None:
            update[STOP] = stop
        update[AGENT_STATUS] = {agent.name: status}
        exited_silently = stop == "exit_loop" and (final is None or not final.text.strip())
        if agent.output_key and not exited_silently:
            # (an agent that only called exit_loop keeps its previous pass's output)
            value: Any = final.text if final is not None else None
            if agent.output_schema is not None:
                value = None
                if status == "completed" and final is not None and stop is None:
                    if not is_limit_message(final):
                        value = parse_structured(agent.output_schema, final)
            update[agent.output_key] = value
        return update


def route_after_model(
    state: Mapping[str, Any], *, done: str, sends: Callable[[Mapping[str, Any]], Any]
) -> Any:
    """Where a ReAct agent goes after its model step."""
    if state.get(STOP):
        return done
    messages = state.get(MESSAGES) or []
    if pending_tool_calls(messages):
        return sends(state)
    last = messages[-1] if messages else None
    if feedback_kind(last) is not None or isinstance(last, ToolMessage):
        return MODEL_NODE  # a re-ask, or malformed calls answered with errors: ask again
    return done


def _with(pending: dict[str, Any], request: ModelRequest) -> dict[str, Any]:
    """Hook updates so far plus the state writes the (possibly rewritten) request carries."""
    return merge_updates(pending, request.state_update) if request.state_update else pending


def _after(state: Mapping[str, Any], produced: list[BaseMessage]) -> dict[str, Any]:
    return {**state, MESSAGES: [*(state.get(MESSAGES) or []), *produced]}


def _invalid_call_results(response: AIMessage) -> list[ToolMessage]:
    """An error result for every malformed tool call, so no call id is left unanswered."""
    return [
        ToolMessage(
            content=(
                f"Error: INVALID_PARAM: the arguments of your call to `{call.get('name')}` could "
                f"not be parsed ({call.get('error') or 'not valid JSON'}). Call the tool again "
                "with arguments that are a valid JSON object."
            ),
            tool_call_id=call["id"],
            name=call.get("name") or "unknown",
            status="error",
        )
        for call in response.invalid_tool_calls
        if call.get("id")
    ]


def _as_ai(message: Any) -> AIMessage:
    if isinstance(message, AIMessage):
        return message
    if isinstance(message, BaseMessage):
        return AIMessage(content=message.content)
    return AIMessage(content=str(message))
