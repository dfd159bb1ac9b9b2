"""The drawing formats: one registry that `draw`, `draw_to` and `graphflow draw` all read.

A format is a name, a renderer (`Drawing -> str | bytes`), the file suffixes that ask for it and
whether it is bytes. Add your own without touching graphflow:

```python
from graphflow.visualize import register_format

def d2(drawing):                       # a graphflow.visualize.Drawing -> text
    return "".join(f"{e.source} -> {e.target};" for e in drawing.edges)

register_format("d2", d2, suffixes=(".d2",), description="D2 diagram")
agent.draw("d2"); agent.draw_to("team.d2")    # and `graphflow draw team.py:team -f d2`
```
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from graphflow.exceptions import GraphflowConfigError

if TYPE_CHECKING:
    from graphflow.visualize.model import Drawing

__all__ = (
    "Format",
    "format_for_path",
    "format_help",
    "registered_formats",
    "get_format",
    "register_format",
)

Renderer = Callable[["Drawing"], "str | bytes"]


@dataclass(frozen=True, kw_only=True)
class Format:
    """One registered drawing format."""

    name: str
    """What `draw(agent, name)` and `graphflow draw -f name` take."""
    render: Renderer
    """Turns the drawing model into the format's text (or bytes)."""
    suffixes: tuple[str, ...] = ()
    """File suffixes (lower case, with the dot) that pick this format in `draw_to`."""
    binary: bool = False
    """Whether `render` returns bytes (written as is, never printed as text)."""
    description: str = ""
    """A few words for help texts."""


_FORMATS: dict[str, Format] = {}


def register_format(
    name: str,
    renderer: Renderer,
    *,
    suffixes: Iterable[str] = (),
    binary: bool = False,
    description: str = "",
    replace: bool = False,
) -> Format:
    """Make `renderer` drawable as `name` by `draw`, `draw_to` (by suffix) and `graphflow draw`.

    Args:
        name: the format's name (`draw(agent, name)`).
        renderer: `Drawing -> str` (or bytes when `binary`).
        suffixes: file suffixes that pick the format in `draw_to`, e.g. `(".d2",)`.
        binary: the renderer returns bytes.
        description: a few words for help texts.
        replace: allow replacing a registered format (or taking over its suffixes).

    Raises:
        GraphflowConfigError: a bad name, a renderer that is not callable, a bad suffix, or a
            name or suffix already registered (without `replace=True`).
    """
    if (
        not isinstance(name, str)
        or not name
        or not name.replace("-", "").replace("_", "").isalnum()
    ):
        raise GraphflowConfigError(
            f"register_format: the name must be a word like 'd2' or 'mermaid-live'; got {name!r}"
        )
    if not callable(renderer):
        raise GraphflowConfigError(
            f"register_format({name!r}): the renderer must be callable (Drawing -> str | bytes); "
            f"got {type(renderer).__name__}"
        )
    wanted = tuple(s.lower() for s in suffixes)
    for suffix in wanted:
        if not suffix.startswith(".") or len(suffix) < 2:
            raise GraphflowConfigError(
                f"register_format({name!r}): a suffix starts with a dot, like '.d2'; got {suffix!r}"
            )
    if not replace:
        if name in _FORMATS:
            raise GraphflowConfigError(
                f"register_format: the format {name!r} is already registered; pass replace=True "
                "to replace it"
            )
        taken = {s: f.name for f in _FORMATS.values() for s in f.suffixes if s in wanted}
        if taken:
            raise GraphflowConfigError(
                f"register_format({name!r}): suffix(es) already pick another format: {taken}; "
                "pass replace=True to take them over"
            )
    fmt = Format(
        name=name, render=renderer, suffixes=wanted, binary=binary, description=description
    )
    for other in list(_FORMATS.values()):  # a suffix picks one format: the latest registered
        if other.name != name and set(other.suffixes) & set(wanted):
            kept = tuple(s for s in other.suffixes if s not in wanted)
            _FORMATS[other.name] = Format(
                name=other.name,
                render=other.render,
                suffixes=kept,
                binary=other.binary,
                description=other.description,
            )
    _FORMATS[name] = fmt
    return fmt


def registered_formats() -> Mapping[str, Format]:
    """Every registered format by name, in registration order (read-only view)."""
    return MappingProxyType(_FORMATS)


def get_format(name: str) -> Format:
    """The format called `name`.

    Raises:
        GraphflowConfigError: no format has that name (the message lists them).
    """
    fmt = _FORMATS.get(name) if isinstance(name, str) else None
    if fmt is None:
        raise GraphflowConfigError(
            f"draw: unknown format {name!r}; use one of {', '.join(_FORMATS)} (or add one with "
            "graphflow.visualize.register_format)"
        )
    return fmt


def format_help() -> str:
    """The registered formats in a line, for help texts: `mermaid (default), dot, ...`."""
    return ", ".join(f"{n} (default)" if n == "mermaid" else n for n in _FORMATS)


def format_for_path(path: str | Path) -> str:
    """The format a file name asks for (`team.svg` → svg)."""
    suffix = Path(path).suffix.lower()
    for fmt in _FORMATS.values():
        if suffix in fmt.suffixes:
            return fmt.name
    known = sorted(s for f in _FORMATS.values() for s in f.suffixes)
    raise GraphflowConfigError(
        f"draw_to: cannot tell the format of {str(path)!r} from its suffix {suffix!r}; use "
        f"one of {', '.join(known)} or pass format="
    )


def _mermaid(drawing: Drawing) -> str:
    from graphflow.visualize.mermaid import render

    return render(drawing)


def _dot(drawing: Drawing) -> str:
    from graphflow.visualize.dot import render

    return render(drawing)


def _plantuml(drawing: Drawing) -> str:
    from graphflow.visualize.plantuml import render

    return render(drawing)


def _ascii(drawing: Drawing) -> str:
    from graphflow.visualize.ascii import render

    return render(drawing)


def _json(drawing: Drawing) -> str:
    return drawing.to_json() + "\n"


def _html(drawing: Drawing) -> str:
    from graphflow.visualize.html import render

    return render(drawing)


def _image(kind: str) -> Renderer:
    def render(drawing: Drawing) -> bytes:
        from graphflow.visualize.image import render_image

        return render_image(drawing, kind)

    return render


for _name, _renderer, _suffixes, _binary, _description in (
    ("mermaid", _mermaid, (".mmd", ".mermaid"), False, "Mermaid flowchart (the default)"),
    ("dot", _dot, (".dot", ".gv"), False, "Graphviz DOT"),
    ("plantuml", _plantuml, (".puml", ".plantuml"), False, "PlantUML activity diagram"),
    ("ascii", _ascii, (".txt",), False, "a tree for terminals"),
    ("json", _json, (".json",), False, "the drawing model as JSON"),
    ("html", _html, (".html", ".htm"), False, "a self-contained viewer page"),
    ("svg", _image("svg"), (".svg",), True, "SVG image (Graphviz)"),
    ("png", _image("png"), (".png",), True, "PNG image (Graphviz)"),
):
    register_format(_name, _renderer, suffixes=_suffixes, binary=_binary, description=_description)
