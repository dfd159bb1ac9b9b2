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
file (relative to the spec file; `servers` picks some), started when the spec is loaded and
stopped with the tree (`with load_spec(...) as team:`, `team.close()`, or the end of the
process). `kind` is the class name of a graphflow agent kind, or the import path of another
`Agent` subclass.

A spec file is data: it is read with limits (size, nesting depth, values once aliases are
expanded; no duplicate keys — see `_yaml`), modules it names are looked up next to it first
without leaking into other specs (`_imports`), and loading it calls no model, so it needs no
API key.

Errors are `SpecError`s naming the file, the line and the field path, e.g.
``team.yaml:14: sub_agents[1].sub_agents[0].instruction: Agent `writer`: instruction uses
{draft} but no earlier agent writes that key; ...``.
"""

from __future__ import annotations

from graphflow.exceptions import SpecError
from graphflow.spec._build import agent_from_spec
from graphflow.spec._load import load_spec
from graphflow.spec._schema import spec_schema
from graphflow.spec._write import agent_to_spec, dump_spec

__all__ = ("SpecError", "agent_from_spec", "agent_to_spec", "dump_spec", "load_spec", "spec_schema")
