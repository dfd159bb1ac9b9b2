"""What each field of an agent kind holds in a spec: agents, plain data, or Python objects."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import TypeAdapter

from graphflow.agents import Agent  # the package imports every built-in kind (see `kinds`)

__all__ = (
    "accepts_text",
    "fields",
    "is_plain",
    "json_schema",
    "kinds",
    "list_item",
    "role",
    "unions",
)


def kinds() -> dict[str, type[Agent]]:
    """Class name -> class of every graphflow agent kind (not the private bases)."""
    out: dict[str, type[Agent]] = {}
    stack: list[type[Agent]] = list(Agent.__subclasses__())
    while stack:
        cls = stack.pop()
        # graphflow's kinds; a base shared by kinds (`ModelAgent`) lives in a private module
        module = cls.__module__
        if module.startswith("graphflow.") and not module.rpartition(".")[2].startswith("_"):
            out.setdefault(cls.__name__, cls)
        stack.extend(cls.__subclasses__())
    return out


def fields(cls: type[Agent]) -> dict[str, Any]:
    """Spec field name -> annotation (`checkpointer` is a run option, not a spec field)."""
    return {
        name: info.annotation
        for name, info in cls.model_fields.items()
        if not info.exclude and name != "checkpointer"
    }


def _mentions_agent(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, Agent):
        return True
    return any(_mentions_agent(a) for a in typing.get_args(annotation))


def list_item(annotation: Any) -> Any:
    """The item type of a list/tuple/sequence annotation, else None."""
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, typing.Sequence) or (
        isinstance(origin, type) and origin.__name__ == "Sequence"
    ):
        args = typing.get_args(annotation)
        return args[0] if args else Any
    return None


def role(annotation: Any) -> str:
    """`agents`, `agent`, `data` (written as it is) or `object` (an import path)."""
    if _mentions_agent(annotation):
        return "agents" if list_item(annotation) is not None else "agent"
    return "data" if is_plain(annotation) else "object"


_PLAIN = (str, int, float, bool, type(None))


def is_plain(annotation: Any) -> bool:
    """Whether values of `annotation` are plain JSON data (written as they are in a spec)."""
    if annotation is Any or annotation in _PLAIN:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin is typing.Annotated:
        return is_plain(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return all(is_plain(a) for a in typing.get_args(annotation))
    if origin in (list, dict, tuple, set, frozenset) or (
        isinstance(origin, type) and origin.__name__ in ("Sequence", "Mapping")
    ):
        return all(is_plain(a) for a in typing.get_args(annotation) if a is not Ellipsis)
    return False


def json_schema(annotation: Any) -> dict[str, Any] | None:
    """The JSON Schema of a plain-data annotation, else None."""
    try:
        return TypeAdapter(annotation).json_schema(ref_template="#/$defs/{model}")
    except Exception:  # noqa: BLE001 - not a plain-data field
        return None


def unions(annotation: Any) -> tuple[Any, ...]:
    """The options of a union annotation, flattened (the annotation itself otherwise)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return tuple(a for arg in typing.get_args(annotation) for a in unions(arg))
    return (annotation,)


def accepts_text(annotation: Any, value: str) -> bool:
    """Whether `value` may stand as text for `annotation` (a `str` or a `Literal` option)."""
    for option in unions(annotation):
        if option is str:
            return True
        if typing.get_origin(option) is typing.Literal and value in typing.get_args(option):
            return True
    return False
