"""Strategy for `ReactAgent`: prepare → model ⇄ tools → finish, with hooks around each call.

Every model call is its own node execution and every tool call its own task (a `Send`), so each
is a durable step: a resumed run never repeats a completed call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp
from langgraph.graph import StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Send
from pydantic import BaseModel, ValidationError
from typing_extensions import override

from graphflow.agents.react import ReactAgent
from graphflow.exceptions import DataflowError, OutputValidationError
from graphflow.hooks._runner import call_async, call_sync
from graphflow.hooks.base import HookResult, ModelHook, ModelRequest, ToolCallRequest, ToolHook
from graphflow.hooks.builtins.limits import LIMIT_MARK
from graphflow.instructions import render_template
from graphflow.messages import instruction_message
from graphflow.models.errors import model_call_errors
from graphflow.models.structured import ainvoke_chat, invoke_chat
from graphflow.state import AGENT_STATUS, EXIT_LOOP, MESSAGES, MODEL_CALLS, STOP
from graphflow.strategies._nodes import HookChain, guarded
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy, final_answer
from graphflow.tools.exit_loop import is_exit_loop

__all__ = ("ReactStrategy",)

TOOL_CALL = "gf_tool_call"
FEEDBACK_MARK = "graphflow_feedback"


class ReactStrategy(FlowGraphBuildingStrategy):
    """Builds a ReAct agent's subgraph."""

    @override
    def children(self, agent: Any) -> list[Any]:
        return []

    @override
    def check_dataflow(
        self, agent: Any, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        if not ctx.in_loop and any(is_exit_loop(t) for t in agent.tool_objects()):
            raise DataflowError(
                f"Agent `{agent.name}` has the exit_loop tool but no LoopAgent encloses it; "
                "remove the tool or put the agent in a LoopAgent body"
            )
        return super().check_dataflow(agent, available, ctx)

    @override
    def hand_back(self, agent: Any, new_messages: list[BaseMessage]) -> list[BaseMessage]:
        if agent.return_reasoning_contents:
            return super().hand_back(agent, new_messages)
        return final_answer(agent.name, new_messages)

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        assert isinstance(agent, ReactAgent)
        graph: StateGraph = StateGraph(ctx.schema({MODEL_CALLS: int, STOP: str | None}))
        hooks = HookChain(agent)
        runtime = _ReactRuntime(agent, done=hooks.after_entry)
        graph.add_node("prepare", guarded(agent, "prepare", runtime.prepare))
        graph.add_node("model", guarded(agent, "model", runtime.model, runtime.amodel))
        graph.add_node("tools", guarded(agent, "tools", runtime.run_tools, runtime.arun_tools))
        graph.add_node("finish", guarded(agent, "finish", runtime.finish))
        hooks.install(graph, "prepare", "finish")
        graph.add_edge("prepare", "model")
        graph.add_conditional_edges(
            "model", runtime.after_model, ["tools", "model", "finish", hooks.after_entry]
        )
        graph.add_conditional_edges("tools", runtime.after_tools, ["model", "finish"])
        return graph


class _ReactRuntime:
    """The node functions of one ReAct agent."""

    def __init__(self, agent: ReactAgent, *, done: str) -> None:
        self.agent = agent
        self.done = done
        """Where a final answer goes: the first after-hook node, or END."""
        self.model_hooks = [h for h in agent.hooks if isinstance(h, ModelHook)]
        self.tool_hooks = [h for h in agent.hooks if isinstance(h, ToolHook)]
        self.tool_list: list[BaseTool] = agent.tool_objects()
        self.tools_by_name = {t.name: t for t in self.tool_list}
        self._chat_model = agent.chat_model()
        # system texts sent first on every call (the system prompt, then the schema note),
        # rendered once; each request gets fresh messages, so a hook may edit its own copies
        self._preamble = [agent.system_prompt] if agent.system_prompt else []
        if agent.output_schema is not None:
            self._preamble.append(_schema_prompt(agent.output_schema))

    # -- prepare ---------------------------------------------------------------------------------

    def prepare(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        agent = self.agent
        messages: list[BaseMessage] = []
        if agent.include_contents == "none":
            messages.append(RemoveMessage(id=REMOVE_ALL_MESSAGES))
        if agent.instruction:
            text = render_template(agent.template, state, agent=agent.name)
            messages.append(instruction_message(text, agent=agent.name))
        return {
            MESSAGES: messages,
            MODEL_CALLS: 0,
            STOP: None,
            AGENT_STATUS: {agent.name: "running"},
        }

    # -- model -----------------------------------------------------------------------------------

    def _request(self, state: dict[str, Any]) -> ModelRequest:
        agent = self.agent
        return ModelRequest(
            agent=agent.name,
            model=self._chat_model,
            messages=[
                *(SystemMessage(content=text) for text in self._preamble),
                *(state.get(MESSAGES) or []),
            ],
            tools=list(self.tool_list),
            settings=dict(agent.model_settings),
            state=state,
            call_number=int(state.get(MODEL_CALLS) or 0),
        )

    def _finish_model(
        self, state: dict[str, Any], response: AIMessage | HookResult
    ) -> dict[str, Any]:
        calls = int(state.get(MODEL_CALLS) or 0) + 1
        if isinstance(response, HookResult):
            update = dict(response.update)
            update.update({MODEL_CALLS: calls, STOP: "end"})
            return update
        if response.name is None:
            response = response.model_copy(update={"name": self.agent.name})
        out: list[BaseMessage] = [response]
        schema = self.agent.output_schema
        if schema is not None and not response.tool_calls and not _is_limit(response):
            try:
                _validate(schema, response)
            except (ValidationError, ValueError) as exc:
                previous = (state.get(MESSAGES) or [None])[-1]
                if isinstance(previous, HumanMessage) and previous.additional_kwargs.get(
                    FEEDBACK_MARK
                ):
                    raise OutputValidationError(
                        f"Agent `{self.agent.name}`: the reply did not match "
                        f"{schema.__name__} after one retry: {exc}",
                        agent=self.agent.name,
                    ) from exc
                out.append(
                    HumanMessage(
                        content=(
                            f"Your reply did not match the required schema: {exc}. Reply again "
                            f"with only a JSON object matching: {json.dumps(schema.model_json_schema())}"
                        ),
                        additional_kwargs={FEEDBACK_MARK: "schema"},
                    )
                )
        return {MESSAGES: out, MODEL_CALLS: calls}

    def _call_options(self, req: ModelRequest, config: RunnableConfig) -> dict[str, Any]:
        return {
            "tools": req.tools,
            "settings": req.settings,
            "output_schema": self.agent.output_schema,
            "structured_output": self.agent.structured_output,
            "config": config,
        }

    def model(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = self._request(state)
        pending: dict[str, Any] = {}
        for hook in self.model_hooks:
            result = call_sync(hook, "before_model", "abefore_model", request)
            if isinstance(result, HookResult) and result.jump_to is None:
                pending = _merge_updates(pending, result.update)
                continue
            if isinstance(result, AIMessage | HookResult):
                return _merge_updates(pending, self._short_circuit(state, result, config))
            if isinstance(result, ModelRequest):
                request = result

        def call(req: ModelRequest) -> AIMessage:
            return _as_ai(invoke_chat(req.model, req.messages, **self._call_options(req, config)))

        handler: Callable[[ModelRequest], AIMessage] = call
        for hook in reversed(self.model_hooks):
            handler = _wrap_model(hook, handler)
        with model_call_errors(agent=self.agent.name, model=request.model, config=config):
            response = handler(request)
        for hook in reversed(self.model_hooks):
            replaced = call_sync(hook, "after_model", "aafter_model", request, response)
            if replaced is not None:
                response = replaced
        return _merge_updates(pending, self._complete(state, response, config))

    async def amodel(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = self._request(state)
        pending: dict[str, Any] = {}
        for hook in self.model_hooks:
            result = await call_async(hook, "before_model", "abefore_model", request)
            if isinstance(result, HookResult) and result.jump_to is None:
                pending = _merge_updates(pending, result.update)
                continue
            if isinstance(result, AIMessage | HookResult):
                return _merge_updates(pending, self._short_circuit(state, result, config))
            if isinstance(result, ModelRequest):
                request = result

        async def call(req: ModelRequest) -> AIMessage:
            options = self._call_options(req, config)
            return _as_ai(await ainvoke_chat(req.model, req.messages, **options))

        handler: Any = call
        for hook in reversed(self.model_hooks):
            handler = _awrap_model(hook, handler)
        with model_call_errors(agent=self.agent.name, model=request.model, config=config):
            response = await handler(request)
        for hook in reversed(self.model_hooks):
            replaced = await call_async(hook, "after_model", "aafter_model", request, response)
            if replaced is not None:
                response = replaced
        return _merge_updates(pending, self._complete(state, response, config))

    def _short_circuit(
        self, state: dict[str, Any], result: AIMessage | HookResult, config: RunnableConfig
    ) -> dict[str, Any]:
        if isinstance(result, AIMessage):
            return self._complete(state, result, config)
        return self._finish_model(state, result)

    def _complete(
        self, state: dict[str, Any], response: AIMessage, config: RunnableConfig
    ) -> dict[str, Any]:
        update = self._finish_model(state, response)
        produced = update[MESSAGES]
        if len(produced) == 1 and not produced[0].tool_calls:
            # a final answer: write the result here, saving the finish step (after_model then
            # goes straight to the after hooks)
            after = {**state, MESSAGES: [*(state.get(MESSAGES) or []), *produced]}
            update = _merge_updates(update, self.finish(after, config))
        return update

    def after_model(self, state: dict[str, Any]) -> Any:
        if state.get(STOP):
            return "finish"
        messages = state.get(MESSAGES) or []
        last = messages[-1] if messages else None
        if isinstance(last, AIMessage) and last.tool_calls:
            base = {k: v for k, v in state.items() if k != MESSAGES}
            return [Send("tools", {**base, TOOL_CALL: tc}) for tc in last.tool_calls]
        if isinstance(last, HumanMessage) and last.additional_kwargs.get(FEEDBACK_MARK):
            calls = int(state.get(MODEL_CALLS) or 0)
            return "model" if calls < self.agent.max_iterations else "finish"
        if isinstance(last, AIMessage):
            return self.done  # the model node already wrote the final answer
        return "finish"

    # -- tools -----------------------------------------------------------------------------------

    def _tool_request(self, payload: dict[str, Any]) -> ToolCallRequest:
        call = dict(payload[TOOL_CALL])
        state = {k: v for k, v in payload.items() if k != TOOL_CALL}
        return ToolCallRequest(
            agent=self.agent.name,
            tool_call=call,
            tool=self.tools_by_name.get(call["name"]),
            state=state,
        )

    def _tool_update(self, request: ToolCallRequest, message: ToolMessage) -> dict[str, Any]:
        update: dict[str, Any] = {MESSAGES: [message]}
        if is_exit_loop(request.tool) and message.status != "error":
            update[EXIT_LOOP] = True
        return update

    def _unknown(self, request: ToolCallRequest) -> ToolMessage:
        call = request.tool_call
        return ToolMessage(
            content=(
                f"Error: unknown tool {call['name']!r}. Available tools: "
                f"{', '.join(sorted(self.tools_by_name)) or 'none'}."
            ),
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
        )

    def run_tools(self, payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = self._tool_request(payload)

        def execute(req: ToolCallRequest) -> ToolMessage:
            if req.tool is None:
                return self._unknown(req)
            try:
                return _as_tool_message(
                    req.tool.invoke({**req.tool_call, "type": "tool_call"}, config), req
                )
            except GraphBubbleUp:
                raise
            except Exception as exc:
                return _tool_error(req, exc)

        handler: Callable[[ToolCallRequest], ToolMessage] = execute
        for hook in reversed(self.tool_hooks):
            handler = _wrap_tool(hook, handler)
        return self._tool_update(request, handler(request))

    async def arun_tools(self, payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = self._tool_request(payload)

        async def execute(req: ToolCallRequest) -> ToolMessage:
            if req.tool is None:
                return self._unknown(req)
            try:
                return _as_tool_message(
                    await req.tool.ainvoke({**req.tool_call, "type": "tool_call"}, config), req
                )
            except GraphBubbleUp:
                raise
            except Exception as exc:
                return _tool_error(req, exc)

        handler: Any = execute
        for hook in reversed(self.tool_hooks):
            handler = _awrap_tool(hook, handler)
        return self._tool_update(request, await handler(request))

    def after_tools(self, state: dict[str, Any]) -> str:
        if state.get(EXIT_LOOP) or state.get(STOP):
            return "finish"
        if int(state.get(MODEL_CALLS) or 0) >= self.agent.max_iterations:
            return "finish"
        return "model"

    # -- finish ----------------------------------------------------------------------------------

    def finish(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        agent = self.agent
        messages: list[BaseMessage] = list(state.get(MESSAGES) or [])
        last = messages[-1] if messages else None
        update: dict[str, Any] = {}
        status = "completed"
        final: AIMessage | None = None
        if state.get(STOP) or state.get(EXIT_LOOP):
            finals = final_answer(agent.name, messages)
            final = finals[0] if finals else None  # type: ignore[assignment]
        elif isinstance(last, AIMessage) and not last.tool_calls:
            final = last
        else:
            status = "max_iterations"
            final = AIMessage(
                content=(
                    f"Agent `{agent.name}` stopped: it reached max_iterations="
                    f"{agent.max_iterations} model calls without a final answer."
                ),
                name=agent.name,
            )
            update[MESSAGES] = [final]
        update[AGENT_STATUS] = {agent.name: status}
        exited_silently = bool(state.get(EXIT_LOOP)) and (final is None or not final.text.strip())
        if agent.output_key and not exited_silently:
            # (an agent that only called exit_loop keeps its previous pass's output)
            value: Any = final.text if final is not None else None
            if agent.output_schema is not None:
                value = None
                if (
                    status == "completed"
                    and final is not None
                    and not state.get(EXIT_LOOP)
                    and not _is_limit(final)
                ):
                    value = _validate(agent.output_schema, final)
            update[agent.output_key] = value
        return update


# -- helpers ------------------------------------------------------------------------------------


def _merge_updates(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Combine two node updates; message lists are concatenated."""
    merged = {**first, **second}
    if MESSAGES in first and MESSAGES in second:
        merged[MESSAGES] = [*first[MESSAGES], *second[MESSAGES]]
    return merged


def _is_limit(message: AIMessage) -> bool:
    """A call limit's stop message: a final answer, but not one to validate against a schema."""
    return LIMIT_MARK in message.additional_kwargs


def _as_ai(message: Any) -> AIMessage:
    if isinstance(message, AIMessage):
        return message
    if isinstance(message, BaseMessage):
        return AIMessage(content=message.content)
    return AIMessage(content=str(message))


def _wrap_model(
    hook: ModelHook, inner: Callable[[ModelRequest], AIMessage]
) -> Callable[[ModelRequest], AIMessage]:
    return lambda req: hook.wrap_model_call(req, inner)


def _awrap_model(hook: ModelHook, inner: Any) -> Any:
    async def call(req: ModelRequest) -> AIMessage:
        return await hook.awrap_model_call(req, inner)

    return call


def _wrap_tool(
    hook: ToolHook, inner: Callable[[ToolCallRequest], ToolMessage]
) -> Callable[[ToolCallRequest], ToolMessage]:
    return lambda req: hook.wrap_tool_call(req, inner)


def _awrap_tool(hook: ToolHook, inner: Any) -> Any:
    async def call(req: ToolCallRequest) -> ToolMessage:
        return await hook.awrap_tool_call(req, inner)

    return call


def _as_tool_message(result: Any, request: ToolCallRequest) -> ToolMessage:
    if isinstance(result, ToolMessage):
        return result
    content = result if isinstance(result, str) else json.dumps(result, default=str)
    return ToolMessage(
        content=content, tool_call_id=request.tool_call["id"], name=request.tool_call["name"]
    )


def _tool_error(request: ToolCallRequest, exc: BaseException) -> ToolMessage:
    return ToolMessage(
        content=f"Error: {type(exc).__name__}: {exc}",
        tool_call_id=request.tool_call["id"],
        name=request.tool_call["name"],
        status="error",
    )


def _schema_prompt(schema: type[BaseModel]) -> str:
    return (
        "When you give your final answer, reply with only a JSON object matching this JSON "
        f"schema: {json.dumps(schema.model_json_schema())}"
    )


def _validate(schema: type[BaseModel], message: AIMessage) -> BaseModel:
    text = message.text
    match = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    return schema.model_validate_json(match.group(1) if match else text)
