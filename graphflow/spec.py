"""Declarative team specs: an agent tree as YAML or JSON, and back.

```yaml
kind: SequentialAgent
name: competitive_analysis
sub_agents:
  - kind: ReactAgent
    name: researcher
    model: openai:gpt-4o-mini            # a model name ...
    model_settings: {temperature: 0}
    tools: [mypkg.tools:search]          # tools, functions, predicates, schemas: import paths
    instruction: Research {input}.
    output_key: research_data
  - kind: LoopAgent
    name: refine
    until: {call: graphflow:output_contains, args: [review_feedback, APPROVE]}
    hooks: [{call: graphflow:LoggingHook, kwargs: {level: 20}}]
    sub_agents: [...]
```

Every field of an agent kind is a spec field under its own name (new fields are picked up from
the agents' pydantic models; `checkpointer` is a run option, not part of a spec). Plain values
(text, numbers, lists, dicts) are used as written. A field that holds Python objects takes an
import path `"module:attr"` (`{ref: "module:attr"}` where the field also takes plain text, such
as `model`), or `{call: "module:attr", args: [...], kwargs: {...}}` for the result of a call. A
hook given as the path of a class is instantiated without arguments. In `tools`, an item
`{mcp: "mcp.json", servers: [time]}` stands for the tools of the servers of an `mcpServers` config
file (relative to the spec file; `servers` picks some), started when the spec is loaded. `kind`
is the class name of a graphflow agent kind, or the import path of another `Agent` subclass.

Errors are `SpecError`s naming the file, the line and the field path, e.g.
``team.yaml:14: sub_agents[1].sub_agents[0].instruction: Agent `writer`: instruction uses
{draft} but no earlier agent writes that key; ...``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from graphflow.agents import Agent  # the package imports every built-in kind (see `_kinds`)
from graphflow.agents.base import kinds_with_field
from graphflow.exceptions import AgentSpecError, GraphflowConfigError, GraphflowError

__all__ = ("SpecError", "agent_from_spec", "agent_to_spec", "dump_spec", "load_spec", "spec_schema")

_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

# objects made from a spec remember the spec value they came from (so `to_spec` writes it back);
# keyed by id, holding the object so the id cannot be reused
_origins: dict[int, tuple[Any, Any]] = {}
# tools that came from one `{mcp: ...}` entry: tool id -> (tool, the entry's toolset, the entry);
# holding the toolset keeps its sessions open while its tools may be called
_mcp_tools: dict[int, tuple[Any, Any, Any]] = {}


class SpecError(GraphflowConfigError):
    """A spec cannot be turned into an agent tree (or an agent into a spec).

    Attributes:
        path: the field path, e.g. `sub_agents[1].instruction` (empty for the whole spec).
        line: the 1-based line in the file, when known.
        file: the spec file, when loaded from one.
    """

    def __init__(
        self, message: str, *, path: str = "", line: int | None = None, file: str | None = None
    ) -> None:
        where = ":".join(str(p) for p in (file, line) if p is not None)
        text = ": ".join(p for p in (where, path, message) if p)
        super().__init__(text)
        self.path = path
        self.line = line
        self.file = file
        self.reason = message


# -- loading -----------------------------------------------------------------------------------


def load_spec(path: str | Path) -> Agent:
    """The agent tree described by a YAML (`.yaml`/`.yml`) or JSON (`.json`) file.

    The file's folder is importable while its import paths are resolved, so a spec may name
    modules that sit next to it.

    Raises:
        SpecError: the file is missing or malformed, or a field is invalid (names file, line,
            field path).
    """
    file = Path(path)
    if not file.is_file():
        raise SpecError(f"no spec file {str(file)!r}; pass a .yaml, .yml or .json file")
    text = file.read_text(encoding="utf-8")
    data, lines = _parse(text, str(file))
    folder = str(file.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return agent_from_spec(data, lines=lines, file=str(file))


def agent_from_spec(
    data: Mapping[str, Any],
    *,
    kind: type[Agent] | None = None,
    lines: Mapping[str, int] | None = None,
    file: str | None = None,
) -> Agent:
    """The agent tree a spec mapping describes (`Agent.from_spec` calls this).

    Args:
        data: the spec, as `load_spec` reads it from a file.
        kind: the agent class to use when `data` has no `kind`.
        lines: field path -> line in the file (for error messages).
        file: the file name (for error messages).
    """
    builder = _Builder(lines or {}, file)
    agent = builder.agent(data, "", kind)
    try:
        agent.to_graph()  # the tree checks: placeholders, duplicate names and keys, ...
    except GraphflowConfigError as exc:
        raise builder.tree_error(exc) from None
    return agent


def _parse(text: str, file: str) -> tuple[Any, dict[str, int]]:
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        yaml = None
    if yaml is None:
        try:
            return json.loads(text), {}
        except json.JSONDecodeError as exc:
            raise SpecError(f"not valid JSON: {exc.msg}", line=exc.lineno, file=file) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(f"not valid YAML/JSON: {problem}", line=line, file=file) from None
    lines: dict[str, int] = {}
    if node is not None:
        _lines(node, "", lines)
    return data, lines


def _lines(node: Any, path: str, out: dict[str, int]) -> None:
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node.value, list):
        for i, item in enumerate(node.value):
            if isinstance(item, tuple):  # mapping: (key node, value node)
                key, value = item
                child = f"{path}.{key.value}" if path else str(key.value)
                out.setdefault(child, key.start_mark.line + 1)
                _lines(value, child, out)
            else:
                _lines(item, f"{path}[{i}]", out)


class _Builder:
    def __init__(self, lines: Mapping[str, int], file: str | None) -> None:
        self.lines = lines
        self.file = file
        self.paths: dict[str, tuple[str, type[Agent]]] = {}  # agent name -> its path and kind

    def error(self, message: str, path: str) -> SpecError:
        line = None
        probe = path
        while line is None:
            line = self.lines.get(probe)
            if not probe:
                break
            # the nearest enclosing field that has a line: drop the last `.key` or `[i]`
            probe = re.sub(r"(\.?[^.\[\]]+|\[\d+\])$", "", probe)
        return SpecError(message, path=path, line=line, file=self.file)

    def agent(self, data: Any, path: str, default: type[Agent] | None = None) -> Agent:
        if isinstance(data, Agent):
            return data
        if not isinstance(data, Mapping):
            raise self.error(
                f"an agent spec is a mapping with kind and name, got {type(data).__name__}", path
            )
        cls = self.kind(data.get("kind"), _join(path, "kind"), default)
        fields = _fields(cls)
        values: dict[str, Any] = {}
        for key, raw in data.items():
            if key == "kind":
                continue
            where = _join(path, str(key))
            if key not in fields:
                known = ", ".join(sorted(fields))
                owners = kinds_with_field(str(key))
                elsewhere = f" (a field of {', '.join(owners)})" if owners else ""
                raise self.error(
                    f"{cls.__name__} has no field {key!r}{elsewhere}; its fields are: kind, {known}",
                    where,
                )
            values[key] = self.value(cls, key, raw, where)
        try:
            agent = cls(**values)
        except AgentSpecError as exc:
            raise self.agent_error(exc, path) from None
        except (GraphflowError, ValueError, TypeError) as exc:
            raise self.error(str(exc), path) from None
        self.paths.setdefault(agent.name, (path, cls))
        return agent

    def kind(self, value: Any, path: str, default: type[Agent] | None) -> type[Agent]:
        if value is None:
            if default is not None and default is not Agent:
                return default
            names = ", ".join(sorted(_kinds()))
            raise self.error(f"missing; give the agent kind: {names} or module:Class", path)
        kinds = _kinds()
        if isinstance(value, str) and value in kinds:
            return kinds[value]
        if isinstance(value, str) and _IMPORT_PATH.match(value):
            cls = self.imported(value, path)
            if isinstance(cls, type) and issubclass(cls, Agent):
                return cls
            raise self.error(f"{value!r} is not an Agent subclass", path)
        names = ", ".join(sorted(kinds))
        raise self.error(f"unknown agent kind {value!r}; use one of {names} or module:Class", path)

    def imported(self, target: str, path: str) -> Any:
        module_name, _, attr = target.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise self.error(f"cannot import {module_name!r} for {target!r}: {exc}", path) from None
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise self.error(f"module {module_name!r} has no attribute {attr!r}", path)
            obj = getattr(obj, part)
        return obj

    def value(self, cls: type[Agent], key: str, raw: Any, path: str) -> Any:
        annotation = _fields(cls)[key]
        role = _role(annotation)
        if role == "agents":
            if not isinstance(raw, list):
                raise self.error("a list of agent specs", path)
            return [self.agent(item, f"{path}[{i}]") for i, item in enumerate(raw)]
        if role == "agent":
            return self.agent(raw, path)
        if role == "data":
            return raw
        item_type = _list_item(annotation)
        if item_type is not None:
            if not isinstance(raw, list):
                raise self.error(f"a list (of import paths), got {type(raw).__name__}", path)
            hooks = key == "hooks"
            out: list[Any] = []
            for i, item in enumerate(raw):
                where = f"{path}[{i}]"
                if key == "tools" and isinstance(item, Mapping) and "mcp" in item:
                    out.extend(self.mcp_tools(item, where))
                else:
                    out.append(self.obj(item, item_type, where, instantiate=hooks))
            return out
        return self.obj(raw, annotation, path)

    def obj(self, raw: Any, annotation: Any, path: str, *, instantiate: bool = False) -> Any:
        if isinstance(raw, str):
            if _accepts_text(annotation, raw) or not _IMPORT_PATH.match(raw):
                if _accepts_text(annotation, raw):
                    return raw
                raise self.error(f"{raw!r} is not an import path like 'mypkg.tools:search'", path)
            made = self.imported(raw, path)
            if instantiate and isinstance(made, type):
                made = self.call(made, [], {}, raw, path)
        elif isinstance(raw, Mapping) and set(raw) == {"ref"}:
            made = self.imported(str(raw["ref"]), _join(path, "ref"))
        elif isinstance(raw, Mapping) and "call" in raw and set(raw) <= {"call", "args", "kwargs"}:
            target = self.imported(str(raw["call"]), _join(path, "call"))
            args, kwargs = raw.get("args") or [], raw.get("kwargs") or {}
            if not isinstance(args, list) or not isinstance(kwargs, Mapping):
                raise self.error("args is a list and kwargs a mapping", path)
            made = self.call(target, args, dict(kwargs), raw["call"], path)
        else:
            return raw
        _remember(made, _plain(raw))
        return made

    def mcp_tools(self, entry: Mapping[str, Any], path: str) -> list[Any]:
        """The tools of the MCP servers an `mcpServers` config file names (started now)."""
        unknown = sorted(set(entry) - {"mcp", "servers"})
        if unknown or not isinstance(entry["mcp"], str):
            raise self.error(
                "an MCP entry is {mcp: path/to/mcp.json, servers: [names]} (servers optional)"
                + (f"; unknown keys: {', '.join(unknown)}" if unknown else ""),
                path,
            )
        try:
            from graphflow.mcp import MCPToolset, load_mcp_config
        except ImportError as exc:
            raise self.error(str(exc), path) from None
        config = Path(entry["mcp"])
        if not config.is_absolute() and self.file is not None:
            config = Path(self.file).resolve().parent / config
        try:
            servers = load_mcp_config(config)
        except GraphflowError as exc:
            raise self.error(str(exc), _join(path, "mcp")) from None
        wanted = entry.get("servers")
        if wanted is not None:
            missing = [n for n in wanted if n not in servers] if isinstance(wanted, list) else []
            if not isinstance(wanted, list) or missing:
                raise self.error(
                    f"no server {', '.join(map(repr, missing)) or repr(wanted)} in {config}; "
                    f"its servers: {', '.join(servers)}",
                    _join(path, "servers"),
                )
            servers = {n: servers[n] for n in wanted}
        toolset = MCPToolset(servers)
        try:
            tools = toolset.tools()
        except GraphflowError as exc:
            toolset.close()
            raise self.error(str(exc), path) from None
        origin = _plain(entry)
        for tool in tools:
            _mcp_tools[id(tool)] = (tool, toolset, origin)
        return tools

    def call(
        self, target: Any, args: list[Any], kwargs: dict[str, Any], name: str, path: str
    ) -> Any:
        if not callable(target):
            raise self.error(f"{name!r} is not callable", path)
        try:
            return target(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure is the spec's
            raise self.error(
                f"calling {name!r} failed: {type(exc).__name__}: {exc}", path
            ) from None

    def agent_error(self, exc: AgentSpecError, path: str) -> SpecError:
        if exc.fields:
            field, message = exc.fields[0]
            where = _join(path, field.split(".")[0]) if field != "(agent)" else path
            return self.error(message, where)
        return self.error(str(exc), path)

    def tree_error(self, exc: GraphflowConfigError) -> SpecError:
        # "Agent `writer`: instruction uses {draft} ...": the agent, then the field at fault
        text = str(exc)
        named = re.search(r"`([A-Za-z_]\w*)`(?::\s*(\w+))?", text)
        if named is None or named.group(1) not in self.paths:
            return self.error(text, "")
        path, cls = self.paths[named.group(1)]
        field = named.group(2)
        return self.error(text, _join(path, field) if field in _fields(cls) else path)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _plain(raw: Any) -> Any:
    return json.loads(json.dumps(raw)) if isinstance(raw, Mapping | list) else raw


def _remember(obj: Any, origin: Any) -> None:
    _origins[id(obj)] = (obj, origin)


# -- field roles ---------------------------------------------------------------------------------


def _kinds() -> dict[str, type[Agent]]:
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


def _fields(cls: type[Agent]) -> dict[str, Any]:
    return {
        name: info.annotation
        for name, info in cls.model_fields.items()
        if not info.exclude and name != "checkpointer"
    }


def _mentions_agent(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, Agent):
        return True
    return any(_mentions_agent(a) for a in typing.get_args(annotation))


def _list_item(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, typing.Sequence) or (
        isinstance(origin, type) and origin.__name__ == "Sequence"
    ):
        args = typing.get_args(annotation)
        return args[0] if args else Any
    return None


def _role(annotation: Any) -> str:
    if _mentions_agent(annotation):
        return "agents" if _list_item(annotation) is not None else "agent"
    return "data" if _is_plain(annotation) else "object"


_PLAIN = (str, int, float, bool, type(None))


def _is_plain(annotation: Any) -> bool:
    """Whether values of `annotation` are plain JSON data (written as they are in a spec)."""
    if annotation is Any or annotation in _PLAIN:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin is typing.Annotated:
        return _is_plain(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return all(_is_plain(a) for a in typing.get_args(annotation))
    if origin in (list, dict, tuple, set, frozenset) or (
        isinstance(origin, type) and origin.__name__ in ("Sequence", "Mapping")
    ):
        return all(_is_plain(a) for a in typing.get_args(annotation) if a is not Ellipsis)
    return False


def _json_schema(annotation: Any) -> dict[str, Any] | None:
    try:
        return TypeAdapter(annotation).json_schema(ref_template="#/$defs/{model}")
    except Exception:  # noqa: BLE001 - not a plain-data field
        return None


def _unions(annotation: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return tuple(a for arg in typing.get_args(annotation) for a in _unions(arg))
    return (annotation,)


def _accepts_text(annotation: Any, value: str) -> bool:
    for option in _unions(annotation):
        if option is str:
            return True
        if typing.get_origin(option) is typing.Literal and value in typing.get_args(option):
            return True
    return False


# -- writing -----------------------------------------------------------------------------------


def agent_to_spec(agent: Agent) -> dict[str, Any]:
    """The spec mapping of an agent tree (`agent.to_spec()` calls this).

    Fields left at their defaults (and not given explicitly) are omitted. Objects are written as the spec value they were
    loaded from, else as the import path that finds them (a module-level function, class, tool
    or model).

    Raises:
        SpecError: a value cannot be written (e.g. a lambda); the message names the field path.
    """
    return _to_spec(agent, "")


def _to_spec(agent: Agent, path: str) -> dict[str, Any]:
    cls = type(agent)
    kinds = _kinds()
    kind = (
        cls.__name__ if kinds.get(cls.__name__) is cls else f"{cls.__module__}:{cls.__qualname__}"
    )
    out: dict[str, Any] = {"kind": kind}
    for key, annotation in _fields(cls).items():
        value = getattr(agent, key)
        info = cls.model_fields[key]
        explicit = key in agent.model_fields_set
        default = info.get_default(call_default_factory=True)
        if not info.is_required() and not explicit and _is_default(value, default):
            continue
        where = _join(path, key)
        role = _role(annotation)
        if role == "agents":
            out[key] = [_to_spec(child, f"{where}[{i}]") for i, child in enumerate(value)]
        elif role == "agent":
            out[key] = _to_spec(value, where)
        elif role == "data":
            out[key] = TypeAdapter(annotation).dump_python(value, mode="json")
        elif _list_item(annotation) is not None:
            out[key] = _objects_spec(value, _list_item(annotation), where)
        else:
            out[key] = _object_spec(value, annotation, where)
    return out


def _objects_spec(values: list[Any], annotation: Any, path: str) -> list[Any]:
    """A list of objects; the tools of one `{mcp: ...}` entry are that entry, once."""
    out: list[Any] = []
    entries: set[int] = set()
    for i, value in enumerate(values):
        came = _mcp_tools.get(id(value))
        if came is not None and came[0] is value:
            if id(came[1]) not in entries:
                entries.add(id(came[1]))
                out.append(came[2])
            continue
        out.append(_object_spec(value, annotation, f"{path}[{i}]"))
    return out


def _is_default(value: Any, default: Any) -> bool:
    try:
        return bool(value == default)
    except Exception:  # noqa: BLE001
        return False


def _object_spec(value: Any, annotation: Any, path: str) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value
    remembered = _origins.get(id(value))
    if remembered is not None and remembered[0] is value:
        return remembered[1]
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
    text_too = any(o is str for o in _unions(annotation))
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
            return f"{_public_module(mod_name)}:{name}"
        for attr, obj in vars(module_obj).items():
            if obj is value and not attr.startswith("_"):
                return f"{_public_module(mod_name)}:{attr}"
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
                return f"{_public_module(name)}:{attr}"
    return None


def _public_module(name: str) -> str:
    # a script run as __main__ is importable by its file name
    if name == "__main__":
        main = sys.modules["__main__"]
        file = getattr(main, "__file__", None)
        return Path(file).stem if file else name
    return name


def _resolve(module: Any, qualname: str) -> Any:
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def dump_spec(agent: Agent, format: str = "yaml") -> str:
    """`agent_to_spec(agent)` as YAML or JSON text."""
    data = agent_to_spec(agent)
    if format == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if format == "yaml":
        import yaml

        return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    raise SpecError(f"unknown spec format {format!r}; use yaml or json")


# -- JSON Schema ---------------------------------------------------------------------------------

_REF_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "description": "import path module:attr"},
        {
            "type": "object",
            "properties": {"ref": {"type": "string"}},
            "required": ["ref"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "call": {"type": "string"},
                "args": {"type": "array"},
                "kwargs": {"type": "object"},
            },
            "required": ["call"],
            "additionalProperties": False,
        },
    ]
}


_MCP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "the tools of the servers of an mcpServers JSON file (relative to the spec)",
    "properties": {
        "mcp": {"type": "string"},
        "servers": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["mcp"],
    "additionalProperties": False,
}


def spec_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a spec file, for editors and checks."""
    defs: dict[str, Any] = {
        "ObjectRef": _REF_SCHEMA,
        "MCPServers": _MCP_SCHEMA,
        "ToolRef": {"anyOf": [{"$ref": "#/$defs/ObjectRef"}, {"$ref": "#/$defs/MCPServers"}]},
    }
    kinds = _kinds()
    for name in sorted(kinds):
        defs[name] = _kind_schema(kinds[name], defs)
    defs["Agent"] = {"oneOf": [{"$ref": f"#/$defs/{name}"} for name in sorted(kinds)]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "graphflow agent spec",
        "$ref": "#/$defs/Agent",
        "$defs": defs,
    }


def _kind_schema(cls: type[Agent], defs: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {"kind": {"const": cls.__name__}}
    required = ["kind"]
    for key, annotation in _fields(cls).items():
        info = cls.model_fields[key]
        role = _role(annotation)
        if role == "agents":
            schema: dict[str, Any] = {"type": "array", "items": {"$ref": "#/$defs/Agent"}}
        elif role == "agent":
            schema = {"$ref": "#/$defs/Agent"}
        elif role == "data":
            schema = dict(_json_schema(annotation) or {})
            defs.update(schema.pop("$defs", {}))
        elif _list_item(annotation) is not None:
            item = "ToolRef" if key == "tools" else "ObjectRef"
            schema = {"type": "array", "items": {"$ref": f"#/$defs/{item}"}}
        else:
            schema = {"$ref": "#/$defs/ObjectRef"}
            if any(o is str for o in _unions(annotation)):
                schema = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/ObjectRef"}]}
        if info.description:
            schema["description"] = info.description
        properties[key] = schema
        if info.is_required():
            required.append(key)
    return {
        "type": "object",
        "title": cls.__name__,
        "description": inspect.cleandoc(cls.__doc__ or "").split("\n")[0],
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
