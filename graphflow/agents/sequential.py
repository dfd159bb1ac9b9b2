"""`SequentialAgent`: sub-agents run one after another; each sees the outputs before it."""

from __future__ import annotations

from pydantic import Field, model_validator

from graphflow.agents.base import Agent

__all__ = ("SequentialAgent",)


class SequentialAgent(Agent):
    """Run `sub_agents` in order. Its `output_key` (optional) gets the last sub-agent's result."""

    sub_agents: list[Agent] = Field(min_length=1)
    """The agents to run, in order; any kind, flows included."""

    @model_validator(mode="after")
    def _no_instruction(self) -> SequentialAgent:
        _flow_has_no_instruction(self)
        return self


def _flow_has_no_instruction(agent: Agent) -> None:
    if agent.instruction is not None:
        raise ValueError(
            "this agent calls no model, so it takes no instruction; "
            "put the instruction on the sub-agent that should read it"
        )
