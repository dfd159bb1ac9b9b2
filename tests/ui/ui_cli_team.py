"""A target file for `graphflow ui` / `graphflow run` in the CLI tests."""

from graphflow import FunctionAgent, SequentialAgent

team = SequentialAgent(
    name="team",
    sub_agents=[FunctionAgent(name="only", fn=lambda state: "x", output_key="out")],
)
