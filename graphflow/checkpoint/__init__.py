"""Checkpointers from URLs: `memory:`, `sqlite:///path/runs.db`, `postgresql://...`."""

from graphflow.checkpoint.urls import resolve_checkpointer

__all__ = ("resolve_checkpointer",)
