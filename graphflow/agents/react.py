"""`ReactAgent`: a model that reasons and calls tools in a loop, compiled as its own subgraph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, PrivateAttr, model_validator

from graphflow.agents._model_agent import ModelAgent
from graphflow.hooks.base import ModelHook
from graphflow.tools.policy import ToolPolicy

__all__ = ("ReactAgent",)


class ReactAgent(ModelAgent):
    """Reason-and-act agent: model → (tools → model)* → final answer.

    Example:
        ```python
        researcher = ReactAgent(name="researcher", model=model, tools=[search],
                                instruction="Research {input}.", output_key="research_data")
        ```
    """

    tools: list[BaseTool | Callable[..., Any]] = Field(default_factory=list)
    """Tools the model may call; plain functions are wrapped with their signature and docstring."""
    system_prompt: str | None = None
    """System message sent first on every model call (not stored in state)."""
    max_iterations: int = Field(default=10, gt=0)
    """At most this many model calls per invocation; then the agent stops with a clear message."""
    output_schema: type[BaseModel] | None = None
    """Validate the final answer (JSON) into this model and write the object to `output_key`."""
    context: ModelHook | None = None
    """A context policy (`graphflow.context.HybridContext()` is the recommended one): what the
    model is sent as the conversation grows. Its hooks run before the agent's own `hooks`."""

    tool_policies: dict[str, ToolPolicy] = Field(default_factory=dict)
    """Tool name -> how its calls run (timeout, retries, parallel_safe, recovery)."""
    default_tool_policy: ToolPolicy = Field(default_factory=ToolPolicy)
    """The policy of every tool without its own entry in `tool_policies`."""

    _tool_objects: tuple[tuple[int, ...], list[BaseTool]] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _valid_tools(self) -> ReactAgent:
        names = [t.name for t in self.tool_objects()]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate tool names {dupes}; rename the tools")
        unknown = sorted(set(self.tool_policies) - set(names))
        if unknown:
            raise ValueError(
                f"tool_policies names {unknown}, which are not its tools; "
                f"its tools: {sorted(names)}"
            )
        if self.include_contents == "none" and not self.instruction:
            raise ValueError(
                "include_contents='none' leaves the model nothing to read; give it an instruction"
            )
        return self

    def tool_objects(self) -> list[BaseTool]:
        """The tools as LangChain `BaseTool`s (plain functions wrapped once)."""
        # keyed by the tools' identities, so an in-place edit of the list is seen too
        key = tuple(id(t) for t in self.tools)
        if self._tool_objects is None or self._tool_objects[0] != key:
            objects = [
                t if isinstance(t, BaseTool) else StructuredTool.from_function(t)
                for t in self.tools
            ]
            self._tool_objects = (key, objects)
        return list(self._tool_objects[1])

    def call_hooks(self) -> list[Any]:
        """The hooks around each model and tool call: the context policy first, then `hooks`."""
        return [self.context, *self.hooks] if self.context is not None else list(self.hooks)
