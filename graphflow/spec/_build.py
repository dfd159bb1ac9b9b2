"""Spec mapping -> agent tree: each field by its role, errors with the field path and line."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphflow.agents import Agent
from graphflow.agents.base import kinds_with_field
from graphflow.exceptions import AgentSpecError, GraphflowConfigError, GraphflowError, SpecError
from graphflow.spec._fields import accepts_text, fields, kinds, list_item, role
from graphflow.spec._imports import IMPORT_PATH, Importer, SpecImportError
from graphflow.spec._origins import remember, remember_mcp
from graphflow.spec._plain import plain

__all__ = ("MAX_AGENT_DEPTH", "agent_from_spec")

MAX_AGENT_DEPTH = 50
"""Deepest agent nesting a spec may describe (a mapping built in code has no YAML limits)."""


def agent_from_spec(
    data: Mapping[str, Any],
    *,
    kind: type[Agent] | None = None,
    lines: Mapping[str, int] | None = None,
    file: str | None = None,
    folder: Path | None = None,
) -> Agent:
    """The agent tree a spec mapping describes (`Agent.from_spec` calls this).

    MCP servers that `{mcp: ...}` items start belong to the tree: `agent.close()` (or leaving
    `with agent:`) stops them; a spec that fails to load stops those it started.

    Args:
        data: the spec, as `load_spec` reads it from a file.
        kind: the agent class to use when `data` has no `kind`.
        lines: field path -> line in the file (for error messages).
        file: the file name (for error messages).
        folder: where modules named by import paths are looked up first (see `_imports`).
    """
    builder = _Builder(lines or {}, file, Importer(folder))
    try:
        agent = builder.agent(data, "", kind)
        try:
            agent.to_graph()  # the tree checks: placeholders, duplicate names and keys, ...
        except GraphflowConfigError as exc:
            raise builder.tree_error(exc) from None
    except BaseException:
        builder.close_started()
        raise
    return agent


class _Builder:
    def __init__(self, lines: Mapping[str, int], file: str | None, importer: Importer) -> None:
        self.lines = lines
        self.file = file
        self.importer = importer
        self.paths: dict[str, tuple[str, type[Agent]]] = {}  # agent name -> its path and kind
        self.started: list[Any] = []  # MCP toolsets started for this tree
        self.owners: list[list[Any]] = []  # per agent being built: the toolsets it owns
        self.depth = 0

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

    def close_started(self) -> None:
        for toolset in self.started:
            toolset.close()

    def agent(self, data: Any, path: str, default: type[Agent] | None = None) -> Agent:
        if isinstance(data, Agent):
            return data
        if not isinstance(data, Mapping):
            raise self.error(
                f"an agent spec is a mapping with kind and name, got {type(data).__name__}", path
            )
        if self.depth >= MAX_AGENT_DEPTH:
            raise self.error(
                f"agents nested more than {MAX_AGENT_DEPTH} levels deep (a cycle?)", path
            )
        self.depth += 1
        self.owners.append([])
        try:
            agent = self._agent(data, path, default)
        finally:
            self.depth -= 1
            owned = self.owners.pop()
        agent._owned.extend(owned)
        return agent

    def _agent(self, data: Mapping[str, Any], path: str, default: type[Agent] | None) -> Agent:
        cls = self.kind(data.get("kind"), _join(path, "kind"), default)
        known = fields(cls)
        values: dict[str, Any] = {}
        for key, raw in data.items():
            if key == "kind":
                continue
            where = _join(path, str(key))
            if key not in known:
                names = ", ".join(sorted(known))
                owners = kinds_with_field(str(key))
                elsewhere = f" (a field of {', '.join(owners)})" if owners else ""
                raise self.error(
                    f"{cls.__name__} has no field {key!r}{elsewhere}; its fields are: kind, {names}",
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
            names = ", ".join(sorted(kinds()))
            raise self.error(f"missing; give the agent kind: {names} or module:Class", path)
        known = kinds()
        if isinstance(value, str) and value in known:
            return known[value]
        if isinstance(value, str) and IMPORT_PATH.match(value):
            cls = self.imported(value, path)
            if isinstance(cls, type) and issubclass(cls, Agent):
                return cls
            raise self.error(f"{value!r} is not an Agent subclass", path)
        names = ", ".join(sorted(known))
        raise self.error(f"unknown agent kind {value!r}; use one of {names} or module:Class", path)

    def imported(self, target: str, path: str) -> Any:
        try:
            return self.importer.resolve(target)
        except SpecImportError as exc:
            raise self.error(f"{exc} (for {target!r})", path) from None

    def value(self, cls: type[Agent], key: str, raw: Any, path: str) -> Any:
        annotation = fields(cls)[key]
        kind = role(annotation)
        if kind == "agents":
            if not isinstance(raw, list):
                raise self.error("a list of agent specs", path)
            return [self.agent(item, f"{path}[{i}]") for i, item in enumerate(raw)]
        if kind == "agent":
            return self.agent(raw, path)
        if kind == "data":
            return raw
        item_type = list_item(annotation)
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
            if accepts_text(annotation, raw) or not IMPORT_PATH.match(raw):
                if accepts_text(annotation, raw):
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
        remember(made, plain(raw))
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
        if not config.is_absolute() and self.importer.folder is not None:
            config = self.importer.folder / config
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
        self.started.append(toolset)
        self.owners[-1].append(toolset)
        try:
            tools = toolset.tools()
        except GraphflowError as exc:
            raise self.error(str(exc), path) from None
        origin = plain(entry)
        for tool in tools:
            remember_mcp(tool, toolset, origin)
        return tools

    def call(
        self, target: Any, args: list[Any], kwargs: dict[str, Any], name: str, path: str
    ) -> Any:
        if not callable(target):
            raise self.error(f"{name!r} is not callable", path)
        try:
            return target(*args, **kwargs)
        except SystemExit as exc:
            raise self.error(f"calling {name!r} called sys.exit({exc.code!r})", path) from None
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
        return self.error(text, _join(path, field) if field in fields(cls) else path)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
