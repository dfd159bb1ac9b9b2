"""`ReactAgent`: a model that reasons and calls tools in a loop, compiled as its own subgraph."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, field_validator, model_validator

from graphflow.agents.base import Agent
from graphflow.exceptions import GraphflowConfigError
from graphflow.tools.policy import ToolPolicy

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
    """A LangChain chat model, or `"openai:<model>"` (uses `OPENAI_API_KEY`, `OPENAI_BASE_URL`)."""
    tools: list[BaseTool | Callable[..., Any]] = Field(default_factory=list)
    """Tools the model may call; plain functions are wrapped with their signature and docstring."""
    system_prompt: str | None = None
    """System message sent first on every model call (not stored in state)."""
    max_iterations: int = Field(default=10, gt=0)
    """At most this many model calls per invocation; then the agent stops with a clear message."""
    output_schema: type[BaseModel] | None = None
    """Validate the final answer (JSON) into this model and write the object to `output_key`."""
    model_settings: dict[str, Any] = Field(default_factory=dict)
    """Extra keyword arguments bound to the model on every call (temperature, ...)."""
    tool_policies: dict[str, ToolPolicy] = Field(default_factory=dict)
    """Tool name -> how its calls run (timeout, retries, parallel_safe, recovery)."""
    default_tool_policy: ToolPolicy = Field(default_factory=ToolPolicy)
    """The policy of every tool without its own entry in `tool_policies`."""

    @field_validator("model")
    @classmethod
    def _valid_model(cls, value: BaseChatModel | str) -> BaseChatModel | str:
        if isinstance(value, str) and ":" not in value:
            raise ValueError(
                f"model {value!r}: use 'openai:<model name>' (any OpenAI-compatible endpoint via "
                "OPENAI_BASE_URL) or pass a LangChain chat model instance"
            )
        if isinstance(value, str) and value.split(":", 1)[0] != "openai":
            raise ValueError(
                f"model {value!r}: unknown provider {value.split(':', 1)[0]!r}; only 'openai:' "
                "strings are built in — pass a LangChain chat model instance for other providers"
            )
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
        """The tools as LangChain `BaseTool`s."""
        return [
            t if isinstance(t, BaseTool) else StructuredTool.from_function(t) for t in self.tools
        ]

    def chat_model(self) -> BaseChatModel:
        """The chat model, built from the `openai:` string when needed."""
        return resolve_model(self.model, agent=self.name)


def resolve_model(model: BaseChatModel | str, *, agent: str) -> BaseChatModel:
    """Build a chat model from an `openai:<name>` string; pass instances through."""
    if not isinstance(model, str):
        return model
    if not os.environ.get("OPENAI_API_KEY"):
        raise GraphflowConfigError(
            f"Agent `{agent}`: model {model!r} needs OPENAI_API_KEY (and OPENAI_BASE_URL for a "
            "non-OpenAI endpoint such as DashScope, DeepSeek, vLLM or Ollama); set them, or pass "
            "a chat model instance (graphflow.testing.ScriptedChatModel for tests)"
        )
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=model.split(":", 1)[1], base_url=os.environ.get("OPENAI_BASE_URL"))
