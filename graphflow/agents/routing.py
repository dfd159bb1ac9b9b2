"""`LlmRoutingAgent`: a model reads the sub-agents' descriptions and picks which run."""

from __future__ import annotations

from pydantic import Field, model_validator

from graphflow.agents._model_agent import ModelAgent
from graphflow.agents.base import Agent

__all__ = ("LlmRoutingAgent",)


class LlmRoutingAgent(ModelAgent):
    """Let a model choose one route (or several with `multi=True`), each with an optional query.

    The choice is structured output validated against the route names. An invalid choice is
    retried with the validation error as feedback (`max_retries` times), then `fallback` runs,
    else `RoutingError`. A failed model call (after the client's retries) also runs `fallback`,
    else raises its `ModelCallError`. Only chosen routes run (concurrently when several).
    `output_key` gets the chosen route's result (a dict by output key when `multi`).
    """

    sub_agents: list[Agent] = Field(min_length=1)
    """The routes; any agent kind."""
    fallback: str | None = None
    """Name of the sub-agent to run when the model keeps choosing invalid routes."""
    multi: bool = False
    """Allow the model to choose several routes, run concurrently."""
    max_retries: int = Field(default=2, ge=0)
    """Re-ask the model this many times after an invalid choice."""

    @model_validator(mode="after")
    def _check(self) -> LlmRoutingAgent:
        names = [a.name for a in self.sub_agents]
        if self.fallback is not None and self.fallback not in names:
            raise ValueError(
                f"fallback {self.fallback!r} is not one of its sub-agents ({', '.join(names)})"
            )
        return self
