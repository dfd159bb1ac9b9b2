"""The run facade: how agent specs are compiled, run, resumed, inspected and drawn."""

from graphflow.runtime.compiled import CompiledAgent
from graphflow.runtime.graphs import DEFAULT_RECURSION_LIMIT
from graphflow.runtime.inputs import normalize_input
from graphflow.runtime.runner import Runtime

__all__ = ("DEFAULT_RECURSION_LIMIT", "CompiledAgent", "Runtime", "normalize_input")
