"""`LlmRoutingAgent`: a model reads the sub-agents' descriptions and picks which run."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import Field, field_validator, model_validator

from graphflow.agents.base import Agent
from graphflow.models.resolve import check_model, resolve_model
from graphflow.models.structured import StructuredOutput

__all__ = ("LlmRoutingAgent",)


class LlmRoutingAgent(Agent):
    """Let a model choose one route (or several with `multi=True`), each with an optional query.

    The choice is structured output validated against the route names. An invalid choice is
    retried with the validation error as feedback (`max_retries` times), then `fallback` runs,
    else `RoutingError`. A failed model call (after the client's retries) also runs `fallback`,
    else raises its `ModelCallError`. Only chosen routes run (concurrently when several).
    `output_key` gets the chosen route's result (a dict by output key when `multi`).
    """

    model: BaseChatModel | str
    """The routing model (any LangChain chat model with `with_structured_output`)."""
    sub_agents: list[Agent] = Field(min_length=1)
    """The routes; any agent kind."""
    fallback: str | None = None
    """Name of the sub-agent to run when the model keeps choosing invalid routes."""
    multi: bool = False
    """Allow the model to choose several routes, run concurrently."""
    max_retries: int = Field(default=2, ge=0)
    """Re-ask the model this many times after an invalid choice."""
    model_timeout: float | None = Field(default=600.0, gt=0)
    """Seconds one routing call may take; then it fails with `ModelTimeoutError`."""
    structured_output: StructuredOutput = "auto"
    """How the choice is asked for: `auto`, `json_schema`, `function_calling`, `json_mode` or
    `prompt` (see `graphflow.models.structured`)."""
    model_settings: dict[str, Any] = Field(default_factory=dict)
    """Settings of the routing model (temperature, max_tokens; for a model string also its
    client options: base_url, api_key, timeout, max_retries...)."""

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
    def _check(self) -> LlmRoutingAgent:
        names = [a.name for a in self.sub_agents]
        if self.fallback is not None and self.fallback not in names:
            raise ValueError(
                f"router {self.name!r}: fallback {self.fallback!r} is not one of its sub-agents "
                f"({', '.join(names)})"
            )
        return self

    def chat_model(self) -> BaseChatModel:
        """The routing chat model."""
        return resolve_model(self.model, agent=self.name, settings=self.model_settings)
