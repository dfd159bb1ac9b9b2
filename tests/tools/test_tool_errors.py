"""The mapping from what a tool raised to its `ToolErrorType` (first match wins)."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, ValidationError

from graphflow import ReactAgent
from graphflow.exceptions import (
    InvalidToolParamError,
    ToolError,
    ToolPermissionError,
    ToolResourceNotFoundError,
    ToolTimeoutError,
)
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.tools import ToolErrorType, classify_exception, tool_result


class Age(BaseModel):
    years: int


def _validation_error() -> ValidationError:
    try:
        Age(years="old")  # type: ignore[arg-type]
    except ValidationError as exc:
        return exc
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (ToolTimeoutError("slow"), "TIMEOUT"),
        (InvalidToolParamError("bad"), "INVALID_PARAM"),
        (ToolPermissionError("no"), "PERMISSION_DENIED"),
        (ToolResourceNotFoundError("gone"), "RESOURCE_NOT_FOUND"),
        (ToolError("odd"), "UNKNOWN"),
        (ToolError("chosen", error_type="PERMISSION_DENIED"), "PERMISSION_DENIED"),
        (ToolError("not a type", error_type="SOMETHING"), "UNKNOWN"),
        (TimeoutError("read timed out"), "TIMEOUT"),
        (_validation_error(), "INVALID_PARAM"),
        (PermissionError("read-only"), "PERMISSION_DENIED"),
        (FileNotFoundError("a.txt"), "RESOURCE_NOT_FOUND"),
        (KeyError("order 7"), "RESOURCE_NOT_FOUND"),
        (IndexError("no page 9"), "RESOURCE_NOT_FOUND"),
        (LookupError("no such user"), "RESOURCE_NOT_FOUND"),
        (RuntimeError("driver crashed"), "UNKNOWN"),
        (ValueError("bad state"), "UNKNOWN"),
        (OSError("disk full"), "UNKNOWN"),
        (SystemExit(2), "UNKNOWN"),
    ],
)
def test_each_exception_maps_to_its_type(exc, kind):
    assert classify_exception(exc) is ToolErrorType(kind)


def test_a_tool_error_subclass_chooses_its_type_over_its_python_base():
    class Gone(ToolResourceNotFoundError, PermissionError):
        pass

    assert classify_exception(Gone("x")) is ToolErrorType.RESOURCE_NOT_FOUND


class Query(BaseModel):
    q: str


def _mismatched(term: str) -> str:  # its schema says `q`: the arguments never bind
    return term


def _model_error(tool_name: str) -> tuple[str, ToolErrorType | None]:
    tool = StructuredTool.from_function(
        _mismatched, name=tool_name, description="x", args_schema=Query
    )
    model = ScriptedChatModel(replies=[tool_call(tool_name, {"q": "x"}), "ok"])
    agent = ReactAgent(name="a", model=model, tools=[tool])
    agent.invoke("go")
    seen = model.requests[1][-1]
    return seen.content, tool_result(seen).error_type


def test_arguments_that_do_not_bind_to_the_tool_are_invalid_params():
    content, kind = _model_error("mismatched")
    assert kind is ToolErrorType.INVALID_PARAM
    assert "unexpected keyword argument 'q'" in content


def test_a_type_error_raised_inside_a_tool_is_unknown_wherever_the_tool_lives(tmp_path):
    # a project folder named `graphflow` must not make the tool's own bug look like bad arguments
    folder = tmp_path / "graphflow"
    folder.mkdir()
    (folder / "mytools.py").write_text(
        "def helper(a, b):\n"
        "    return a + b\n\n"
        "def add_one(n: int) -> int:\n"
        '    """Add one."""\n'
        "    return helper(n)  # a bug: a missing argument\n"
    )
    spec = importlib.util.spec_from_file_location("user_mytools", folder / "mytools.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["user_mytools"] = module
    spec.loader.exec_module(module)
    tool = StructuredTool.from_function(module.add_one)
    model = ScriptedChatModel(replies=[tool_call("add_one", {"n": 1}), "ok"])
    agent = ReactAgent(name="a", model=model, tools=[tool])
    with pytest.raises(ToolError, match="missing 1 required positional argument") as err:
        agent.invoke("go")
    assert err.value.error_type == "UNKNOWN"
