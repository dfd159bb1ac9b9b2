"""The seam between agent specs and the machinery that builds, runs and draws them.

Agent specs (this package) are declarative. Building a graph (`graphflow.strategies`), running it
(`graphflow.runtime`: `CompiledAgent`, stores, leases, events) and drawing it
(`graphflow.visualize`) live in layers *above* the specs, which import them. So that
`agent.invoke(...)` needs no import edge back up, `graphflow/_public.py` (the one place that
knows every layer, loaded by the first public name used or the first agent call) installs a
`graphflow.runtime.Runtime` here, and the agent methods call it.

The seam is typed with the real class (imported for type checkers only), so go-to-definition
from `Agent.invoke` reaches `Runtime.running` and `CompiledAgent.invoke`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphflow.exceptions import GraphflowError

if TYPE_CHECKING:
    from graphflow.runtime.runner import Runtime

__all__ = ("install", "runtime")

_installed: Runtime | None = None


def install(implementation: Runtime) -> None:
    """Install the runtime agent methods delegate to (done once, by `graphflow/__init__.py`)."""
    global _installed
    _installed = implementation


def runtime() -> Runtime:
    """The installed runtime."""
    if _installed is None:
        # `graphflow/__init__` loads its names lazily: wire the layers on the first agent call
        import importlib

        importlib.import_module("graphflow._public")
    if _installed is None:  # pragma: no cover - graphflow._public always installs it
        raise GraphflowError(
            "graphflow's runtime is not installed; import graphflow (not only graphflow.agents)"
        )
    return _installed
