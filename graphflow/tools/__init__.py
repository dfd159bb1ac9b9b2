"""Built-in tools."""

from graphflow.tools.exit_loop import exit_loop, is_exit_loop

__all__ = ("exit_loop", "is_exit_loop")
