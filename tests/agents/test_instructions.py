"""Instruction templates: placeholders filled from state, rendered as instruction messages."""

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel

from graphflow import InstructionTemplateError, ReactAgent, is_instruction
from graphflow.instructions import Placeholder, parse_template, render_template
from graphflow.testing import ScriptedChatModel


class Facts(BaseModel):
    name: str
    price: int


def _sent_instruction(instruction, state, *, input_keys=()):
    """Run a root agent with `instruction` on `state`; return the instruction text it was sent."""
    model = ScriptedChatModel(replies=["done"])
    agent = ReactAgent(
        name="writer", model=model, instruction=instruction, input_keys=list(input_keys)
    )
    agent.invoke(state)
    instructions = [m for m in model.requests[0] if is_instruction(m)]
    assert len(instructions) == 1
    return instructions[0].content


def test_parse_template_parts():
    assert parse_template("Write {topic} for {audience?}. {{x}}") == (
        "Write ",
        Placeholder(name="topic", optional=False),
        " for ",
        Placeholder(name="audience", optional=True),
        ". ",
        "{",
        "x",
        "}",
    )


def test_key_placeholder_filled_from_state():
    text = _sent_instruction(
        "Research {input} in {region}.", {"input": "Pura X", "region": "EU"}, input_keys=["region"]
    )
    assert text == "Research Pura X in EU."


def test_optional_placeholder_is_empty_when_absent():
    text = _sent_instruction("Write. Feedback: {feedback?}|", {"input": "go"})
    assert text == "Write. Feedback: |"


def test_optional_placeholder_is_filled_when_present():
    text = _sent_instruction(
        "Feedback: {feedback?}", {"input": "go", "feedback": "shorter"}, input_keys=["feedback"]
    )
    assert text == "Feedback: shorter"


def test_double_braces_are_literal():
    text = _sent_instruction('Reply as {{"answer": "{input}"}}', {"input": "yes"})
    assert text == 'Reply as {"answer": "yes"}'


def test_message_value_renders_as_its_text():
    text = _sent_instruction(
        "Review: {draft}",
        {"input": "go", "draft": AIMessage(content="The draft text")},
        input_keys=["draft"],
    )
    assert text == "Review: The draft text"


def test_pydantic_value_renders_as_json():
    from graphflow import allow_types
    from graphflow.checkpoint.serde import disallow_types

    allow_types(Facts)  # an input value is checkpointed: its class must be loadable
    try:
        text = _sent_instruction(
            "Facts: {facts}",
            {"input": "go", "facts": Facts(name="Pura X", price=1999)},
            input_keys=["facts"],
        )
    finally:
        disallow_types(Facts)
    assert text == 'Facts: {"name":"Pura X","price":1999}'


def test_render_template_direct():
    parts = parse_template("a={a} b={b?} m={m}")
    out = render_template(parts, {"a": 1, "m": HumanMessage(content="hi")}, agent="x")
    assert out == "a=1 b= m=hi"


def test_render_template_missing_required_key_names_agent_and_key():
    with pytest.raises(KeyError, match=r"writer.*\{topic\}"):
        render_template(parse_template("{topic}"), {}, agent="writer")


@pytest.mark.parametrize(
    "template",
    ["Write {topic", "Write topic}", "Write {}", "Write {two words}", "Write {1abc}", "{a?b}"],
)
def test_malformed_template_fails_at_agent_construction(template):
    model = ScriptedChatModel(replies=["never"])
    with pytest.raises(InstructionTemplateError):
        ReactAgent(name="writer", model=model, instruction=template)
    assert model.calls == 0


def test_malformed_template_error_is_readable():
    with pytest.raises(InstructionTemplateError, match=r"unmatched.*\{\{ or \}\}"):
        parse_template("Write {topic")
