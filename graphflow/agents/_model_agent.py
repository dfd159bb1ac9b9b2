"""`ModelAgent`: what agents that call a chat model share — the model and how it is called."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from pydantic import Field, field_validator

from graphflow.agents.base import Agent
from graphflow.models.resolve import check_model, resolve_model
from graphflow.models.structured import StructuredOutput

__all__ = ("ModelAgent",)


class ModelAgent(Agent):
    """Base of `ReactAgent` and `LlmRoutingAgent`: what only an agent that calls a model takes.

    A flow (`SequentialAgent`, `ParallelAgent`, `LoopAgent`) or a `FunctionAgent` given one of
    these fields is an `AgentSpecError` naming the field and the kinds that take it (as ADK puts
    them on `LlmAgent`, not on `BaseAgent`).
    """

    include_contents: Literal["default", "none"] = "default"
    """`default`: the agent sees the parent conversation; `none`: only its instruction."""
    return_reasoning_contents: bool = False
    """Hand every message the agent produced back to the parent, not only its final answer."""

    model: BaseChatModel | str
    """A LangChain chat model, or `"openai:<model>"` / `"<provider>:<model>"` (configured by
    `model_settings` and `OPENAI_BASE_URL`, `OPENAI_API_KEY`...; see `graphflow.models`)."""
    model_settings: dict[str, Any] = Field(default_factory=dict)
    """Extra keyword arguments bound to the model on every call (temperature, max_tokens, ...);
    for a model string also its client options (base_url, api_key, timeout, max_retries...)."""
    model_timeout: float | None = Field(default=600.0, gt=0)
    """Seconds one model call may take; then it fails with `ModelTimeoutError` (which
    `ModelRetry` retries). None: no limit (not recommended: a stalled endpoint hangs the run)."""
    structured_output: StructuredOutput = "auto"
    """How structured output (an `output_schema`, a router's choice) is asked for: `auto`,
    `json_schema`, `function_calling`, `json_mode` or `prompt` (see `graphflow.models.structured`)."""

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

    def chat_model(self) -> BaseChatModel:
        """The chat model, built from a model string when needed."""
        return resolve_model(self.model, agent=self.name, settings=self.model_settings)
