"""Import paths of a spec (`"module:attr"`), resolved from the spec's own folder first.

A spec may name modules that sit next to it (`fn: helpers:clean` with `helpers.py` beside
`team.yaml`). Putting the folder on `sys.path` would leak: the module would be cached under its
bare name, so a second spec in another folder naming its own `helpers` would silently get the
first one's. Instead each folder is a private package, `graphflow_spec_<hash>` (a name made
from the folder's path), whose `__path__` is that folder only: `helpers` next to `team.yaml`
is imported as `graphflow_spec_<hash>.helpers`, once per folder, and never as `helpers`.
Modules of one folder reach each other with relative imports (`from . import utils`).

A name not found in the folder is imported as usual (installed packages, `graphflow`, modules on
`sys.path`). A module already imported from the very same file (an app that put the folder on
`sys.path` itself) is used as it is, so its objects stay the app's objects.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import re
import sys
import threading
import types
from pathlib import Path
from typing import Any

from graphflow.exceptions import SpecImportError

__all__ = ("IMPORT_PATH", "SpecImportError", "Importer", "public_module")

IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
"""`module:attr` (dotted on both sides)."""

_PREFIX = "graphflow_spec_"
_lock = threading.Lock()


class Importer:
    """Resolves `module:attr` paths for one spec (relative to its folder, when it has one)."""

    def __init__(self, folder: Path | None) -> None:
        """Resolve from `folder` first (None: the usual import only)."""
        self.folder = folder.resolve() if folder is not None else None
        self._package: str | None = None

    def resolve(self, target: str) -> Any:
        """The object `target` (`module:attr`) names.

        Raises:
            SpecImportError: the module cannot be imported or has no such attribute.
        """
        module_name, _, attr = target.partition(":")
        module = self.module(module_name)
        obj: Any = module
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise SpecImportError(f"module {module_name!r} has no attribute {attr!r}")
            obj = getattr(obj, part)
        return obj

    def module(self, name: str) -> types.ModuleType:
        """The module `name`, from the spec's folder when it is there."""
        local = self._local_name(name)
        try:
            return importlib.import_module(local or name)
        except ImportError as exc:
            raise SpecImportError(
                f"cannot import {name!r}: {exc}{self._hint(exc, local)}"
            ) from None
        except SystemExit as exc:  # a module that ends the process on import
            raise SpecImportError(
                f"importing {name!r} called sys.exit({exc.code!r}); a module a spec names must "
                "not run a program when imported (guard it with `if __name__ == '__main__':`)"
            ) from None
        except Exception as exc:  # noqa: BLE001 - the module's own code failed
            raise SpecImportError(
                f"importing {name!r} failed: {type(exc).__name__}: {exc}"
            ) from None

    def _local_name(self, name: str) -> str | None:
        """`graphflow_spec_<hash>.<name>` when `name` lives in the spec's folder, else None."""
        if self.folder is None:
            return None
        top = name.partition(".")[0]
        if top == "graphflow":  # the framework's own names are never a file next to the spec
            return None
        found = importlib.machinery.PathFinder.find_spec(top, [str(self.folder)])
        if found is None:
            return None
        loaded = sys.modules.get(top)
        if loaded is not None and _same_file(loaded, found):
            return None  # already imported from this very file: the app's own module
        return f"{self._folder_package()}.{name}"

    def _folder_package(self) -> str:
        if self._package is not None:
            return self._package
        assert self.folder is not None
        digest = hashlib.sha1(str(self.folder).encode(), usedforsecurity=False).hexdigest()
        name = f"{_PREFIX}{digest[:16]}"
        with _lock:
            if name not in sys.modules:
                spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
                spec.submodule_search_locations = [str(self.folder)]
                package = importlib.util.module_from_spec(spec)
                package.__doc__ = f"The modules next to the specs in {self.folder}."
                sys.modules[name] = package
        self._package = name
        return name

    def _hint(self, exc: ImportError, local: str | None) -> str:
        missing = getattr(exc, "name", None)
        if local is None or not missing or self.folder is None or "." in missing:
            return ""
        if importlib.machinery.PathFinder.find_spec(missing, [str(self.folder)]) is None:
            return ""
        return (
            f" (a module next to the spec imports {missing!r} by its bare name; spec modules "
            f"are a package private to their folder: write `from . import {missing}`)"
        )


def _same_file(module: types.ModuleType, spec: importlib.machinery.ModuleSpec) -> bool:
    file = getattr(module, "__file__", None)
    if not file or not spec.origin:
        return False
    try:
        return Path(file).resolve() == Path(spec.origin).resolve()
    except OSError:
        return False


def public_module(name: str) -> str:
    """A module's name as a spec writes it: without the private folder package."""
    if name.startswith(_PREFIX):
        return name.partition(".")[2] or name
    return name
