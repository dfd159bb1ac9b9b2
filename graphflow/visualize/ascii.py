"""A box-drawing tree for terminals: one line per agent, nested like the tree.

```text
competitive_analysis · sequential
├── 1. researcher · react · tools: web_search → research_data
└── 2. refine · loop ⟲ until=output_contains('review_feedback', 'APPROVE') or ≤ 3 passes
    ├── 1. writer · react → draft_article
    └── 2. reviewer · react → review_feedback
```
"""

from __future__ import annotations

from graphflow.strategies.loop import loop_ends
from graphflow.visualize._style import run_text
from graphflow.visualize.model import AgentBox, Drawing

__all__ = ("render",)


def _line(box: AgentBox) -> str:
    """One agent: name · kind, its settings, hooks, run state."""
    d = box.details
    parts = [f"{box.name} · {box.kind}"]
    if d.get("tools"):
        parts.append("tools: " + ", ".join(d["tools"]))
    if box.kind == "function":
        parts.append(f"fn: {d.get('fn')}")
    if box.kind == "parallel":
        bound = f", max_concurrency={d['max_concurrency']}" if d.get("max_concurrency") else ""
        parts.append(f"merge={d.get('merge')}{bound}")
    if box.kind == "routing":
        parts.append("LLM routing" + (f", fallback={d['fallback']}" if d.get("fallback") else ""))
    line = " · ".join(parts)
    key = d.get("merge_output_key") or d.get("output_key")
    if key:
        line += f" → {key}"
    if box.kind == "loop":
        line += " ⟲ " + " or ".join(loop_ends(d))
    hooks = [h["name"] for h in d.get("hooks", [])]
    if hooks:
        line += f" [hooks: {', '.join(hooks)}]"
    text = run_text(box.run)
    if text:
        line += f"  [{text}]"
    return line


def render(drawing: Drawing) -> str:
    """The drawing as an indented box-drawing tree (xray adds each agent's LangGraph nodes)."""
    agents = {a.id: a for a in drawing.agents}
    tools: dict[str, list[AgentBox]] = {}
    for box in drawing.agents:
        if box.tool_of:
            tools.setdefault(box.tool_of, []).append(box)
    xray: dict[str, list[str]] = {}
    for node in drawing.nodes:
        if node.kind == "xray" and node.owner:
            xray.setdefault(node.owner, []).append(node.label)
    lines: list[str] = []

    def emit(box: AgentBox, prefix: str, marker: str, child_prefix: str, index: str) -> None:
        lines.append(f"{prefix}{marker}{index}{_line(box)}")
        extras: list[str] = []
        if box.id in xray:
            extras.append("xray: " + ", ".join(xray[box.id]))
        if drawing.dataflow and box.details.get("reads"):
            keys = [f"{{{r['key']}{'?' if r['optional'] else ''}}}" for r in box.details["reads"]]
            extras.append("reads " + ", ".join(keys))
        children = [agents[c] for c in box.children] + tools.get(box.id, [])
        items: list[tuple[str, AgentBox | None, str]] = [(e, None, "") for e in extras]
        for position, child in enumerate(children, 1):
            if child.tool_of:
                tag = f"tool of {box.name}: "
            elif box.kind in ("sequential", "loop"):
                tag = f"{position}. "
            elif box.kind == "parallel":
                tag = "∥ "
            elif box.kind == "routing":
                tag = "? "
            else:
                tag = ""
            items.append(("", child, tag))
        for i, (text, item, tag) in enumerate(items):
            last = i == len(items) - 1
            mark, more = ("└── ", "    ") if last else ("├── ", "│   ")
            if item is None:
                lines.append(f"{child_prefix}{mark}{text}")
            else:
                emit(item, child_prefix, mark, child_prefix + more, tag)

    emit(agents[drawing.root], "", "", "", "")
    return "\n".join(lines) + "\n"
