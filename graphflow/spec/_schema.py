"""`spec_schema`: the JSON Schema of spec files, from the agent kinds' own fields."""

from __future__ import annotations

import inspect
from typing import Any

from graphflow.agents import Agent
from graphflow.spec._fields import fields, json_schema, kinds, list_item, role, unions

__all__ = ("spec_schema",)

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
    known = kinds()
    for name in sorted(known):
        defs[name] = _kind_schema(known[name], defs)
    defs["Agent"] = {"oneOf": [{"$ref": f"#/$defs/{name}"} for name in sorted(known)]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "graphflow agent spec",
        "$ref": "#/$defs/Agent",
        "$defs": defs,
    }


def _kind_schema(cls: type[Agent], defs: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {"kind": {"const": cls.__name__}}
    required = ["kind"]
    for key, annotation in fields(cls).items():
        info = cls.model_fields[key]
        kind_of = role(annotation)
        if kind_of == "agents":
            schema: dict[str, Any] = {"type": "array", "items": {"$ref": "#/$defs/Agent"}}
        elif kind_of == "agent":
            schema = {"$ref": "#/$defs/Agent"}
        elif kind_of == "data":
            schema = dict(json_schema(annotation) or {})
            defs.update(schema.pop("$defs", {}))
        elif list_item(annotation) is not None:
            item = "ToolRef" if key == "tools" else "ObjectRef"
            schema = {"type": "array", "items": {"$ref": f"#/$defs/{item}"}}
        else:
            schema = {"$ref": "#/$defs/ObjectRef"}
            if any(o is str for o in unions(annotation)):
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
