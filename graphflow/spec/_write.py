"""Agent tree -> spec mapping: plain fields as data, objects as the spec value or import path."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from graphflow.agents import Agent
from graphflow.exceptions import SpecError
from graphflow.spec._fields import fields, kinds, list_item, role, unions
from graphflow.spec._imports import public_module
from graphflow.spec._origins import mcp_entry, origin

__all__ = ("agent_to_spec", "dump_spec")


def agent_to_spec(agent: Agent) -> dict[str, Any]:
    """The spec mapping of an agent tree (`agent.to_spec()` calls this).

    Fields left at their defaults (and not given explicitly) are omitted. Objects are written as
    the spec value they were loaded from, else as the import path that finds them (a
    module-level function, class, tool or model).

    Raises:
        SpecError: a value cannot be written (e.g. a lambda); the message names the field path.
    """
    return _to_spec(agent, "")


def dump_spec(agent: Agent, format: str = "yaml") -> str:
    """`agent_to_spec(agent)` as YAML or JSON text."""
    data = agent_to_spec(agent)
    if format == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if format == "yaml":
        import yaml

        return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    raise SpecError(f"unknown spec format {format!r}; use yaml or json")


def _to_spec(agent: Agent, path: str) -> dict[str, Any]:
    cls = type(agent)
    kind = (
        cls.__name__
        if kinds().get(cls.__name__) is cls
        else f"{_module_name(cls.__module__)}:{cls.__qualname__}"
    )
    out: dict[str, Any] = {"kind": kind}
    for key, annotation in fields(cls).items():
        value = getattr(agent, key)
        info = cls.model_fields[key]
        explicit = key in agent.model_fields_set
        default = info.get_default(call_default_factory=True)
        if not info.is_required() and not explicit and _is_default(value, default):
            continue
        where = _join(path, key)
        kind_of = role(annotation)
        if kind_of == "agents":
            out[key] = [_to_spec(child, f"{where}[{i}]") for i, child in enumerate(value)]
        elif kind_of == "agent":
            out[key] = _to_spec(value, where)
        elif kind_of == "data":
            out[key] = TypeAdapter(annotation).dump_python(value, mode="json")
        elif list_item(annotation) is not None:
            out[key] = _objects_spec(value, list_item(annotation), where)
        else:
            out[key] = _object_spec(value, annotation, where)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _objects_spec(values: list[Any], annotation: Any, path: str) -> list[Any]:
    """A list of objects; the tools of one `{mcp: ...}` entry are that entry, once."""
    out: list[Any] = []
    entries: set[int] = set()
    for i, value in enumerate(values):
        came = mcp_entry(value)
        if came is not None:
            toolset, entry = came
            if toolset not in entries:
                entries.add(toolset)
                out.append(entry)
            continue
        out.append(_object_spec(value, annotation, f"{path}[{i}]"))
    return out


def _is_default(value: Any, default: Any) -> bool:
    try:
        return bool(value == default)
    except Exception:  # noqa: BLE001
        return False


def _object_spec(value: Any, annotation: Any, path: str) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    known, came_from = origin(value)
    if known:
        return came_from
    made_by = _factory_call(value)
    if made_by is not None:
        return made_by
    found = _import_path(value) or _search_modules(value)
    if found is None:
        raise SpecError(
            f"cannot write {type(value).__name__} {value!r:.60} to a spec: it has no import "
            "path. Define it at module level (or load the agent from a spec)",
            path=path,
        )
    text_too = any(o is str for o in unions(annotation))
    return {"ref": found} if text_too else found


def _import_path(value: Any) -> str | None:
    candidates: list[tuple[str, str | None]] = []
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        candidates.append((module, qualname))
    for inner in ("func", "coroutine", "fn"):
        wrapped = getattr(value, inner, None)
        mod = getattr(wrapped, "__module__", None)
        if isinstance(mod, str):
            candidates.append((mod, None))
    for mod_name, name in candidates:
        module_obj = sys.modules.get(mod_name)
        if module_obj is None:
            continue
        if name is not None and _resolve(module_obj, name) is value:
            return f"{_module_name(mod_name)}:{name}"
        for attr, obj in vars(module_obj).items():
            if obj is value and not attr.startswith("_"):
                return f"{_module_name(mod_name)}:{attr}"
    return None


def _factory_call(value: Any) -> dict[str, Any] | None:
    """`{call: ..., args: [...]}` for a value made by one of graphflow's own factories."""
    if (
        getattr(value, "__module__", None) == "graphflow.agents.loop"
        and getattr(value, "__qualname__", "") == "output_contains.<locals>.predicate"
    ):
        cells = inspect.getclosurevars(value).nonlocals
        return {"call": "graphflow:output_contains", "args": [cells["key"], cells["token"]]}
    return None


def _search_modules(value: Any) -> str | None:
    """The import path of a module-level object of the application (not of installed packages)."""
    skip = (sys.prefix, sys.base_prefix, sys.exec_prefix)
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        if name != "__main__" and (not file or file.startswith(skip) or "site-packages" in file):
            continue
        for attr, obj in list(vars(module).items()):
            if obj is value and not attr.startswith("_"):
                return f"{_module_name(name)}:{attr}"
    return None


def _module_name(name: str) -> str:
    # a script run as __main__ is importable by its file name; a spec folder's module by its
    # name next to the spec
    if name == "__main__":
        main = sys.modules["__main__"]
        file = getattr(main, "__file__", None)
        return Path(file).stem if file else name
    return public_module(name)


def _resolve(module: Any, qualname: str) -> Any:
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj
