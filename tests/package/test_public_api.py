"""The public API: every advertised name exists, and `__all__` lists are tidy."""

import importlib

import pytest

import graphflow

PUBLIC_MODULES = [
    "graphflow",
    "graphflow.agents",
    "graphflow.strategies",
    "graphflow.hooks",
    "graphflow.testing",
    "graphflow.exceptions",
    "graphflow.messages",
    "graphflow.instructions",
    "graphflow.state",
    "graphflow.checkpoint",
    "graphflow.context",
    "graphflow.events",
    "graphflow.mcp",
    "graphflow.models",
    "graphflow.runtime",
    "graphflow.spec",
    "graphflow.tools",
    "graphflow.visualize",
]


def test_top_level_all_is_sorted_unique_and_importable():
    names = list(graphflow.__all__)
    assert names == sorted(names)
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(graphflow, name) is not None
    namespace: dict = {}
    exec("from graphflow import *", namespace)
    assert set(names) <= set(namespace)


def test_design_names_are_exported():
    for name in [
        "ReactAgent",
        "SequentialAgent",
        "ParallelAgent",
        "LoopAgent",
        "LlmRoutingAgent",
        "FunctionAgent",
        "GraphflowError",
        "GraphflowConfigError",
        "DataflowError",
        "InstructionTemplateError",
        "OutputValidationError",
        "register_strategy",
        "FlowGraphBuildingStrategy",
        "is_instruction",
    ]:
        assert name in graphflow.__all__


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_public_module_all_names_exist(module_name):
    module = importlib.import_module(module_name)
    assert hasattr(module, "__all__"), f"{module_name} has no __all__"
    names = list(module.__all__)
    assert names, f"{module_name}.__all__ is empty"
    assert len(names) == len(set(names)), f"{module_name}.__all__ has duplicates"
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{module_name}.__all__ lists missing names {missing}"


def test_testing_module_exports_the_fakes():
    from graphflow.testing import ScriptedChatModel, tool_call, tool_calls

    assert callable(tool_call) and callable(tool_calls)
    assert ScriptedChatModel(replies=["x"]).invoke("hi").content == "x"


def test_exception_hierarchy():
    from graphflow import exceptions as e

    assert issubclass(e.GraphflowConfigError, e.GraphflowError)
    assert issubclass(e.InstructionTemplateError, e.GraphflowConfigError)
    assert issubclass(e.DataflowError, e.GraphflowConfigError)
    for run_error in (e.OutputValidationError, e.RoutingError, e.ParallelBranchError, e.ToolError):
        assert issubclass(run_error, e.AgentRunError)
    assert issubclass(e.AgentRunError, e.GraphflowError)
