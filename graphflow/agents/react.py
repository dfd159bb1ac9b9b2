"""`ReactAgent`: a model that reasons and calls tools in a loop, compiled as its own subgraph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator

from graphflow.agents.base import Agent
from graphflow.hooks.base import ModelHook
from graphflow.models.resolve import check_model, resolve_model
from graphflow.models.structured import StructuredOutput
from graphflow.tools.policy import ToolPolicy

__all__ = ("ReactAgent",)


class ReactAgent(Agent):
    """Reason-and-act agent: model → (tools → model)* → final answer.

    Example:
        ```python
        researcher = ReactAgent(name="researcher", model=model, tools=[search],
                                instruction="Research {input}.", output_key="research_data")
        ```
    """

    model: BaseChatModel | str
    """A LangChain chat model, or `"openai:<model>"` / `"<provider>:<model>"` (configured by
    `model_settings` and `OPENAI_BASE_URL`, `OPENAI_API_KEY`...; see `graphflow.models`)."""
    tools: list[BaseTool | Callable[..., Any]] = Field(default_factory=list)
    """Tools the model may call; plain functions are wrapped with their signature and docstring."""
    system_prompt: str | None = None
    """System message sent first on every model call (not stored in state)."""
    max_iterations: int = Field(default=10, gt=0)
    """At most this many model calls per invocation; then the agent stops with a clear message."""
    output_schema: type[BaseModel] | None = None
    """Validate the final answer (JSON) into this model and write the object to `output_key`."""
    model_settings: dict[str, Any] = Field(default_factory=dict)
    """Extra keyword arguments bound to the model on every call (temperature, max_tokens, ...);
    for a model string also its client options (base_url, api_key, timeout, max_retries...)."""
    structured_output: StructuredOutput = "auto"
    """How `output_schema` is asked for: `auto`, `json_schema`, `function_calling`, `json_mode`
    or `prompt` (see `graphflow.models.structured`)."""
    context: ModelHook | None = None
    """A context policy (`graphflow.context.HybridContext()` is the recommended one): what the
    model is sent as the conversation grows. Its hooks run before the agent's own `hooks`."""
    model_timeout: float | None = Field(default=600.0, gt=0)
    """Seconds one model call may take; then it fails with `ModelTimeoutError` (which
    `ModelRetry` retries). None: no limit (not recommended: a stalled endpoint hangs the run)."""

    tool_policies: dict[str, ToolPolicy] = Field(default_factory=dict)
    """Tool name -> how its calls run (timeout, retries, parallel_safe, recovery)."""
    default_tool_policy: ToolPolicy = Field(default_factory=ToolPolicy)
    """The policy of every tool without its own entry in `tool_policies`."""

    _tool_objects: tuple[tuple[int, ...], list[BaseTool]] | None = PrivateAttr(default=None)

    def __init__(self, /, **data: Any) -> None:
        # checked before pydantic, so a bad model raises GraphflowConfigError itself
        if "model" in data:
            check_model(data["model"], agent=data.get("name"))
        super().__init__(**data)

    @field_validator("model", mode="before")
    @classmethod
    def _valid_model(cls, value: Any) -> Any:
        # before pydantic's own check, so an assignment says "not a chat model" too
        check_model(value)
        return value

    @model_validator(mode="after")
    def _valid_tools(self) -> ReactAgent:
        names = [t.name for t in self.tool_objects()]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"agent {self.name!r}: duplicate tool names {dupes}; rename the tools")
        unknown = sorted(set(self.tool_policies) - set(names))
        if unknown:
            raise ValueError(
                f"agent {self.name!r}: tool_policies names {unknown}, which are not its tools; "
                f"its tools: {sorted(names)}"
            )
        if self.include_contents == "none" and not self.instruction:
            raise ValueError(
                f"agent {self.name!r}: include_contents='none' leaves the model nothing to read; "
                "give it an instruction"
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

    def chat_model(self) -> BaseChatModel:
        """The chat model, built from the `openai:` string when needed."""
        return resolve_model(self.model, agent=self.name, settings=self.model_settings)
