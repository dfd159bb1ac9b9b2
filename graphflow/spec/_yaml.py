"""Spec text as data: YAML (and JSON, a subset of it) read with limits, and a line per field.

A spec file is data, so reading it must stay cheap whatever it holds. PyYAML's `SafeLoader`
builds no objects but shares aliased nodes, and everything that later walks the data (the
line map, the builder, `json.dumps`) expands them: nine levels of nine aliases ("billion
laughs", under 500 bytes) are 387 million values, an alias inside its own anchor is a cycle,
and a thousand nested brackets overflow the composer's recursion. `SpecLoader` counts while it
composes — the nesting depth, and the values the document holds with every alias expanded — and
stops at the first one over its limit, before anything is built. A mapping that names a key
twice is refused too (YAML says keys are unique; PyYAML keeps the last one silently).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml
from yaml.composer import Composer
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode

from graphflow.exceptions import SpecError

__all__ = ("MAX_DEPTH", "MAX_SPEC_BYTES", "MAX_VALUES", "SpecLoader", "parse")

MAX_SPEC_BYTES = 8_000_000
"""Largest spec text read, in characters."""
MAX_DEPTH = 100
"""Deepest nesting of mappings and lists (an agent tree nests two levels per agent)."""
MAX_VALUES = 200_000
"""Most values (scalars, lists, mappings) a spec may hold, each alias counted as what it copies."""

_MERGE = "tag:yaml.org,2002:merge"


if TYPE_CHECKING:
    from yaml import SafeLoader as _Base
elif yaml.__with_libyaml__:
    # libyaml's parser under PyYAML's (Python) composer, so that the limits below apply while
    # composing: the pure-Python scanner alone takes seconds on a thousand nested brackets (it
    # looks ahead for a possible key at every level)
    class _Base(Composer, yaml.CSafeLoader):
        def __init__(self, stream: str) -> None:
            yaml.CSafeLoader.__init__(self, stream)
            Composer.__init__(self)

else:  # pragma: no cover - PyYAML built without libyaml
    _Base = yaml.SafeLoader


class SpecLoader(_Base):
    """`yaml.SafeLoader` with limits on nesting depth and expanded size, and no duplicate keys."""

    def __init__(self, stream: str) -> None:
        """Read `stream` (the spec text)."""
        super().__init__(stream)
        self._depth = 0
        self._values = 0
        self._sizes: dict[str, int] = {}  # anchor -> values its node holds, aliases expanded
        self._open: set[str] = set()  # anchors whose node is being composed

    def compose_node(self, parent: Node | None, index: Any) -> Node:  # noqa: D102
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            anchor = event.anchor
            if anchor in self._open:
                raise _limit(
                    f"alias *{anchor} is inside the node it names (&{anchor}), a cycle; "
                    "an alias may only repeat a node that is complete",
                    event.start_mark,
                )
            self._count(self._sizes.get(anchor, 1), event)
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _limit(
                f"nested more than {MAX_DEPTH} levels deep; a spec is not that deep — "
                "flatten the data",
                event.start_mark,
            )
        self._count(1, event)
        anchor = event.anchor
        before = self._values
        if anchor is not None:
            self._open.add(anchor)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
            if anchor is not None:
                self._open.discard(anchor)
        if anchor is not None:
            self._sizes[anchor] = self._values - before + 1
        return node  # type: ignore[no-any-return]

    def compose_mapping_node(self, anchor: str | None) -> MappingNode:  # noqa: D102
        node: MappingNode = super().compose_mapping_node(anchor)
        seen: dict[tuple[str, str], Node] = {}
        for key, _ in node.value:
            if not isinstance(key, ScalarNode) or key.tag == _MERGE:
                continue
            first = seen.setdefault((key.tag, key.value), key)
            if first is not key:
                raise _limit(
                    f"duplicate key {key.value!r} (first on line {first.start_mark.line + 1}, "
                    f"again on line {key.start_mark.line + 1}); a key may appear once in a "
                    "mapping — keep one of them",
                    key.start_mark,
                )
        return node

    def _count(self, values: int, event: Any) -> None:
        self._values += values
        if self._values > MAX_VALUES:
            raise _limit(
                f"holds more than {MAX_VALUES:,} values once its aliases are expanded "
                "(an alias bomb?); write the data out, or load it from a file in code",
                event.start_mark,
            )


def _limit(problem: str, mark: Any) -> SpecError:
    """A limit of `SpecLoader` reached at `mark` (the file is added by `parse`)."""
    return SpecError(problem, line=mark.line + 1 if mark is not None else None)


def parse(text: str, file: str | None) -> tuple[Any, dict[str, int]]:
    """The data of a spec text and its field path -> 1-based line map.

    Raises:
        SpecError: the text is too large, not YAML/JSON, too deep or too big once aliases are
            expanded, has an alias cycle or a duplicate key (names the line).
    """
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError(
            f"the spec is {len(text):,} characters, more than the {MAX_SPEC_BYTES:,} a spec "
            "may have",
            file=file,
        )
    loader = SpecLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except SpecError as exc:  # a limit of SpecLoader
        raise SpecError(exc.reason, line=exc.line, file=file) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        what = "not valid YAML/JSON: "
        if "maximum nesting depth" in problem:  # libyaml's own limit, reached first
            problem = f"nested more than {MAX_DEPTH} levels deep; a spec is not that deep"
            what = ""
        raise SpecError(f"{what}{problem}", line=line, file=file) from None
    finally:
        loader.dispose()
    lines: dict[str, int] = {}
    if node is not None:
        _lines(node, "", lines)
    return data, lines


def _lines(node: Node, path: str, out: dict[str, int]) -> None:
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
