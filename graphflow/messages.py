"""Messages graphflow adds to a conversation, and how to recognise them.

An *instruction message* is the rendered `instruction` of an agent. It is a `HumanMessage` marked
in `additional_kwargs`, so every checkpointer's serializer stores and restores it unchanged (no
custom class to register) while graphflow — and you — can tell it apart from a user's message.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

__all__ = (
    "INSTRUCTION_MARK",
    "instruction_agent",
    "instruction_message",
    "is_instruction",
    "last_ai_message",
)

INSTRUCTION_MARK = "graphflow_instruction"
"""Key in `additional_kwargs` whose value is the name of the agent the instruction is for."""


def instruction_message(text: str, *, agent: str, **kwargs: Any) -> HumanMessage:
    """Build the instruction message for `agent`."""
    return HumanMessage(content=text, additional_kwargs={INSTRUCTION_MARK: agent}, **kwargs)


def is_instruction(message: BaseMessage) -> bool:
    """Whether `message` is an agent's rendered instruction (not a user's message)."""
    return isinstance(message, HumanMessage) and INSTRUCTION_MARK in message.additional_kwargs


def instruction_agent(message: BaseMessage) -> str | None:
    """The agent an instruction message was rendered for, or None for any other message."""
    if is_instruction(message):
        return str(message.additional_kwargs[INSTRUCTION_MARK])
    return None


def last_ai_message(messages: list[BaseMessage]) -> AIMessage | None:
    """The last AI message of a conversation, if any."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message
    return None
