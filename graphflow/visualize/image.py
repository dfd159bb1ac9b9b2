"""SVG and PNG bytes, rendered from the DOT drawing by Graphviz's `dot` program."""

from __future__ import annotations

from graphflow.exceptions import RendererMissingError
from graphflow.visualize.dot import graphviz_module, to_graphviz
from graphflow.visualize.model import Drawing

__all__ = ("render_image",)


def render_image(drawing: Drawing, format: str) -> bytes:
    """`svg` or `png` bytes of the drawing.

    Raises:
        RendererMissingError: Graphviz's `dot` program is not installed.
        ImportError: the `graphviz` package is not installed (`graphflow-agents[viz]`).
    """
    graphviz = graphviz_module()

    try:
        return bytes(to_graphviz(drawing).pipe(format=format))
    except graphviz.ExecutableNotFound as exc:
        raise RendererMissingError(
            f"draw: {format} needs Graphviz's `dot` program, which is not on PATH; install the "
            "graphviz system package (Debian/Ubuntu: apt-get install graphviz; macOS: brew "
            "install graphviz; conda: conda install graphviz), or draw format='dot' / 'mermaid' / "
            "'html', which need no program"
        ) from exc
