"""`ReactAgent`: a model that reasons and calls tools in a loop, compiled as its own subgraph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, field_validator, model_validator

from graphflow.agents.base import Agent
from graphflow.models.resolve import check_model, resolve_model
from graphflow.models.structured import StructuredOutput

__all__ = ("ReactAgent", "resolve_model")


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

    def __init__(self, /, **data: Any) -> None:
        # checked before pydantic, so a bad model raises GraphflowConfigError itself
        if "model" in data:
            check_model(data["model"], agent=data.get("name"))
        super().__init__(**data)

    @field_validator("model")
    @classmethod
    def _valid_model(cls, value: BaseChatModel | str) -> BaseChatModel | str:
        check_model(value)
        return value

    @model_validator(mode="after")
    def _valid_tools(self) -> ReactAgent:
        names = [t.name for t in self.tool_objects()]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"agent {self.name!r}: duplicate tool names {dupes}; rename the tools")
        if self.include_contents == "none" and not self.instruction:
            raise ValueError(
                f"agent {self.name!r}: include_contents='none' leaves the model nothing to read; "
                "give it an instruction"
            )
        return self

    def tool_objects(self) -> list[BaseTool]:
        """The tools as LangChain `BaseTool`s."""
        return [
            t if isinstance(t, BaseTool) else StructuredTool.from_function(t) for t in self.tools
        ]

    def chat_model(self) -> BaseChatModel:
        """The chat model, built from the `openai:` string when needed."""
        return resolve_model(self.model, agent=self.name, settings=self.model_settings)
