"""Reading a module's imports: the package tests check layers and homes with it."""

from __future__ import annotations

import ast

__all__ = ("import_base",)


def import_base(node: ast.ImportFrom, package: str) -> str:
    """The absolute module a `from ... import` names, relative levels resolved from `package`."""
    base = node.module or ""
    if not node.level:
        return base
    anchor = package
    for _ in range(node.level - 1):
        anchor = anchor.rpartition(".")[0]
    return f"{anchor}.{base}" if base else anchor
