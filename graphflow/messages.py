"""Messages graphflow adds to a conversation, and how to recognise them.

An *instruction message* is the rendered `instruction` of an agent. It is a `HumanMessage` marked
in `additional_kwargs`, so every checkpointer's serializer stores and restores it unchanged (no
custom class to register) while graphflow — and you — can tell it apart from a user's message.

Every mark graphflow puts on a message lives here: the instruction mark, the feedback mark of the
re-asks graphflow sends its own model (schema, empty answer), and the stop mark of a message a
call-limit hook writes instead of a model reply.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

__all__ = (
    "FEEDBACK_MARK",
    "INSTRUCTION_MARK",
    "LIMIT_MARK",
    "MASK_MARK",
    "NOTE_MARK",
    "RECALL_MARK",
    "SUMMARY_MARK",
    "feedback_kind",
    "feedback_message",
    "instruction_agent",
    "instruction_message",
    "is_instruction",
    "is_limit_message",
    "last_ai_message",
)

INSTRUCTION_MARK = "graphflow_instruction"
"""Key in `additional_kwargs` whose value is the name of the agent the instruction is for."""
FEEDBACK_MARK = "graphflow_feedback"
"""Key in `additional_kwargs` of a re-ask graphflow sends (its value: `schema`, `empty`)."""
LIMIT_MARK = "graphflow_limit"
"""Key in `additional_kwargs` of the message a call-limit hook writes when it ends an agent."""
MASK_MARK = "graphflow_masked"
"""`additional_kwargs` key of a masked tool result: the observation id it stands for."""
RECALL_MARK = "graphflow_recall"
"""`additional_kwargs` key of a `recall_observation` result: the observation id it returned."""
SUMMARY_MARK = "graphflow_summary"
"""`additional_kwargs` key of a summary message: the number of rounds it condenses."""
NOTE_MARK = "graphflow_context_note"
"""`additional_kwargs` key of a note a context policy adds for the model (e.g. a loop)."""


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


def feedback_message(text: str, kind: str) -> HumanMessage:
    """A re-ask graphflow sends its own model (`kind`: why — `schema`, `empty`)."""
    return HumanMessage(content=text, additional_kwargs={FEEDBACK_MARK: kind})


def feedback_kind(message: BaseMessage | None) -> str | None:
    """Why `message` was sent as a re-ask, or None if it is not one."""
    if isinstance(message, HumanMessage):
        kind = message.additional_kwargs.get(FEEDBACK_MARK)
        return str(kind) if kind is not None else None
    return None


def is_limit_message(message: BaseMessage) -> bool:
    """Whether `message` is a call limit's stop message (a final answer not to validate)."""
    return LIMIT_MARK in message.additional_kwargs
