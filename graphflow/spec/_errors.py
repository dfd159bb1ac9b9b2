"""`SpecError`: a spec that cannot become an agent tree, with its file, line and field path."""

from __future__ import annotations

from graphflow.exceptions import GraphflowConfigError

__all__ = ("SpecError",)


class SpecError(GraphflowConfigError):
    """A spec cannot be turned into an agent tree (or an agent into a spec).

    Attributes:
        path: the field path, e.g. `sub_agents[1].instruction` (empty for the whole spec).
        line: the 1-based line in the file, when known.
        file: the spec file, when loaded from one.
        reason: the message without its location.
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
