import asyncio

from graphflow import FunctionAgent, SequentialAgent


def test_runs_without_a_checkpointer_sync_and_async() -> None:
    first = FunctionAgent(name="first", fn=lambda s: s["input"].upper(), output_key="upper")
    second = FunctionAgent(name="second", fn=lambda s: s["upper"] + "!", output_key="shout")
    pipeline = SequentialAgent(name="p", sub_agents=[first, second])
    assert pipeline.compile(False).checkpointer is None
    assert pipeline.invoke("hi", checkpointer=False)["shout"] == "HI!"
    assert asyncio.run(pipeline.ainvoke("yo", checkpointer=False))["shout"] == "YO!"
