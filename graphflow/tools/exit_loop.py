"""The built-in `exit_loop` tool: a ReAct agent inside a `LoopAgent` calls it to end the loop."""

from __future__ import annotations

from langchain_core.tools import BaseTool, StructuredTool

__all__ = ("EXIT_LOOP_TOOL", "exit_loop", "is_exit_loop")

EXIT_LOOP_TOOL = "exit_loop"


def _exit_loop() -> str:
    """Call this when the task is complete to stop the enclosing loop after this pass."""
    return "Loop exit requested; the loop ends after this pass."


exit_loop: BaseTool = StructuredTool.from_function(
    _exit_loop,
    name=EXIT_LOOP_TOOL,
    description=(
        "Call this when the work is complete and no further iteration is needed. It ends the "
        "innermost enclosing loop; agents after you in this pass are skipped."
    ),
    metadata={"graphflow": EXIT_LOOP_TOOL},
)
"""Give this tool to a `ReactAgent` in a `LoopAgent` body: `ReactAgent(..., tools=[exit_loop])`."""


def is_exit_loop(tool: BaseTool | None) -> bool:
    """Whether `tool` is graphflow's `exit_loop`."""
    return tool is not None and (tool.metadata or {}).get("graphflow") == EXIT_LOOP_TOOL
