import asyncio

from graphflow import FunctionAgent, SequentialAgent


def test_runs_without_a_checkpointer_sync_and_async() -> None:
    first = FunctionAgent(name="first", fn=lambda s: s["input"].upper(), output_key="upper")
    second = FunctionAgent(name="second", fn=lambda s: s["upper"] + "!", output_key="shout")
    pipeline = SequentialAgent(name="p", sub_agents=[first, second])
    assert pipeline.compile(False).checkpointer is None
    assert pipeline.invoke("hi", checkpointer=False)["shout"] == "HI!"
    assert asyncio.run(pipeline.ainvoke("yo", checkpointer=False))["shout"] == "YO!"


def test_before_model_update_without_jump_continues_the_call() -> None:
    from graphflow import HookResult, ModelHook, ReactAgent
    from graphflow.testing import ScriptedChatModel

    class Note(ModelHook):
        def before_model(self, request):
            return HookResult(update={"note": f"call {request.call_number}"})

    model = ScriptedChatModel(replies=["done"])
    agent = ReactAgent(name="a", model=model, hooks=[Note()], output_key="out", input_keys=["note"])
    result = agent.invoke("hi")
    assert model.calls == 1
    assert result["out"] == "done"
    assert result["note"] == "call 0"


def test_changing_a_spec_after_compile_rebuilds_the_graph() -> None:
    from graphflow import ReactAgent
    from graphflow.testing import ScriptedChatModel

    model = ScriptedChatModel(replies=["one", "two"])
    agent = ReactAgent(name="a", model=model, instruction="First {input}.", output_key="out")
    first = agent.compile()
    agent.invoke("x")
    agent.instruction = "Second {input}."
    assert agent.compile() is not first
    agent.invoke("y")
    assert model.requests[1][-1].content == "Second y."
