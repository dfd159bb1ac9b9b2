"""The difference between two states of a run (two checkpoints), for the run page.

Values are compared in their JSON form (`_jsonable`): keys added, removed and changed; a list of
messages is compared message by message (by id, else by position), so a long conversation
shows the few messages that came or went rather than two whole lists, and an object key by key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ("diff_values",)


def diff_values(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """`{added, removed, changed, same}` between two JSON states (keys sorted).

    `added`/`removed`: `[{key, value}]`; `changed`: `[{key, before, after}]`, with `messages`
    (`{added, removed, changed, kept}` of messages) when both values are message lists, or
    `keys` (this same difference, one level down) when both are objects; `same`: the keys
    equal in both.
    """
    added = [{"key": k, "value": after[k]} for k in sorted(after) if k not in before]
    removed = [{"key": k, "value": before[k]} for k in sorted(before) if k not in after]
    changed = []
    same = []
    for key in sorted(set(before) & set(after)):
        old, new = before[key], after[key]
        if old == new:
            same.append(key)
            continue
        entry: dict[str, Any] = {"key": key, "before": old, "after": new}
        if _messages(old) and _messages(new):
            entry["messages"] = _message_diff(old, new)
        elif isinstance(old, Mapping) and isinstance(new, Mapping):
            entry["keys"] = diff_values(old, new)  # a dict: which of its keys changed
        changed.append(entry)
    return {"added": added, "removed": removed, "changed": changed, "same": same}


def _messages(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(m, Mapping) and "type" in m and "content" in m for m in value
    )


def _message_diff(old: list[Any], new: list[Any]) -> dict[str, Any]:
    def key(i: int, m: Mapping[str, Any]) -> str:
        return str(m.get("id") or f"#{i}")

    before = {key(i, m): (i, m) for i, m in enumerate(old)}
    after = {key(i, m): (i, m) for i, m in enumerate(new)}
    return {
        "added": [{"index": i, "message": m} for k, (i, m) in after.items() if k not in before],
        "removed": [{"index": i, "message": m} for k, (i, m) in before.items() if k not in after],
        "changed": [
            {"index": i, "before": before[k][1], "after": m}
            for k, (i, m) in after.items()
            if k in before and before[k][1] != m
        ],
        "kept": sum(1 for k in after if k in before and before[k][1] == after[k][1]),
    }
