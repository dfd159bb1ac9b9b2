"""How `graphflow run` / `resume` show a run: a live rich tree, plain lines, or JSON lines."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from graphflow import events as ev
from graphflow.agents.base import Agent

__all__ = ("JsonView", "LiveView", "PlainView", "View", "make_view")


def _path(event: ev.Event) -> str:
    return "/".join(event.agent_path)


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class View:
    """Receives every event of a stream; `close()` when the stream ends."""

    on_terminal = False
    """Whether it draws on a terminal (then the outputs are printed for reading, not parsing)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def show(self, event: ev.Event) -> None:
        """Show one event."""

    def close(self) -> None:
        """The stream ended (normally or not)."""


class JsonView(View):
    """One JSON line per event (`--json`)."""

    def show(self, event: ev.Event) -> None:
        self.out.write(event.to_json_line() + "\n")
        self.out.flush()


class PlainView(View):
    """One line per event, tokens gathered into the agent's answer (`--plain`, or not a TTY)."""

    def show(self, event: ev.Event) -> None:
        line = self._line(event)
        if line:
            self.out.write(f"[{_path(event)}] {line}\n")
            self.out.flush()

    def _line(self, event: ev.Event) -> str | None:
        if isinstance(event, ev.AgentStarted):
            where = f" (pass {event.iteration + 1})" if event.iteration is not None else ""
            return f"started {event.kind}{where}"
        if isinstance(event, ev.AgentFinished):
            return (
                f"done: {event.reason} in {event.duration_s:.2f}s, "
                f"{event.usage.total_tokens} tokens"
            )
        if isinstance(event, ev.AgentFailed):
            return f"failed: {event.error_type}: {event.error}"
        if isinstance(event, ev.ModelFinished) and event.message is not None:
            text = event.message.text
            calls = [c["name"] for c in getattr(event.message, "tool_calls", None) or ()]
            return f"model: {_short(text)}" if text else f"model calls {', '.join(calls)}"
        if isinstance(event, ev.ToolCallStarted):
            return f"tool {event.name}({_short(dict(event.args), 60)})"
        if isinstance(event, ev.ToolCallFinished):
            return f"tool {event.name} → " + (
                f"error: {_short(event.error)}" if event.error else _short(event.result)
            )
        if isinstance(event, ev.ModelReplyDiscarded):
            return f"model reply discarded ({event.error_type}: {_short(event.error, 100)})"
        if isinstance(event, ev.HookFired):
            return f"hook {event.hook} ({event.phase})"
        if isinstance(event, ev.Interrupted):
            return f"waiting for an answer: {_short([p['value'] for p in event.pending], 120)}"
        if isinstance(event, ev.CustomEvent):
            return f"event {_short(event.data)}"
        if isinstance(event, ev.RunFinished):
            return f"run finished, {event.usage.total_tokens} tokens"
        return None


_STATUS_STYLE = {
    "waiting": ("·", "dim"),
    "running": ("", "yellow"),
    "done": ("✔", "green"),
    "failed": ("✘", "red"),
    "interrupted": ("⏸", "magenta"),
    "stopped": ("■", "yellow"),
}


class LiveView(View):
    """A live tree of the agents with status, time, tokens, the tool call and the answer (rich)."""

    on_terminal = True

    def __init__(self, out: TextIO, agent: Agent) -> None:
        super().__init__(out)
        from rich.console import Console
        from rich.live import Live

        self.root = agent
        self.console = Console(file=out, force_terminal=True)
        self.status: dict[tuple[str, ...], str] = {}
        self.note: dict[tuple[str, ...], str] = {}
        self.answer: dict[tuple[str, ...], str] = {}
        self.started: dict[tuple[str, ...], float] = {}
        self.discarded: set[str] = set()
        self.live = Live(
            get_renderable=self._render, console=self.console, refresh_per_second=8, transient=False
        )
        self.live.start()

    def show(self, event: ev.Event) -> None:
        path = event.agent_path
        if isinstance(event, ev.AgentStarted):
            self.status[path] = "running"
            self.started[path] = time.monotonic()
            self.answer[path] = ""
            self.note[path] = f"pass {event.iteration + 1}" if event.iteration is not None else ""
        elif isinstance(event, ev.AgentFinished):
            self.status[path] = "done"
            self.note[path] = (
                f"{event.reason} · {event.duration_s:.1f}s · {event.usage.total_tokens} tokens"
            )
        elif isinstance(event, ev.AgentFailed):
            self.status[path] = "failed"
            self.note[path] = _short(f"{event.error_type}: {event.error}", 100)
        elif isinstance(event, ev.Interrupted):
            # the agent that asks, and every agent around it, waits
            for cut in range(1, len(path) + 1):
                self.status[path[:cut]] = "interrupted"
            self.note[path] = "waiting for an answer"
        elif isinstance(event, ev.ModelStarted):
            self.answer[path] = ""
        elif isinstance(event, ev.ModelToken):
            if event.message_id and event.message_id in self.discarded:
                return
            self.answer[path] = (self.answer.get(path, "") + event.text)[-400:]
        elif isinstance(event, ev.ModelReplyDiscarded):
            # the reply streamed so far failed part-way: it is no answer; a retry streams anew
            self.discarded.add(event.message_id)
            self.answer[path] = ""
            self.note[path] = _short(f"model reply discarded ({event.error_type})", 60)
        elif isinstance(event, ev.ToolCallStarted):
            self.note[path] = f"tool {event.name}({_short(dict(event.args), 50)})"
        elif isinstance(event, ev.ToolCallFinished):
            self.note[path] = f"tool {event.name} done"
        if not isinstance(event, ev.ModelToken):
            # a status changed: draw it now; tokens wait for the next tick (8 a second) so that
            # a fast model does not redraw the whole tree once per token
            self.live.refresh()

    def _render(self) -> Any:
        from rich.spinner import Spinner
        from rich.table import Table
        from rich.text import Text
        from rich.tree import Tree

        def label(agent: Agent, path: tuple[str, ...]) -> Any:
            state = self.status.get(path, "waiting")
            mark, style = _STATUS_STYLE[state]
            text = Text()
            text.append(f"{mark} " if mark else "", style=style)
            text.append(agent.name, style=f"bold {style}")
            text.append(f"  {state}", style=style)
            note = self.note.get(path)
            if state == "running" and path in self.started:
                note = f"{time.monotonic() - self.started[path]:.1f}s" + (
                    f" · {note}" if note else ""
                )
            if note:
                text.append(f"  {note}", style="dim")
            if state != "running":
                return text
            grid = Table.grid(padding=(0, 1))
            grid.add_row(Spinner("dots", style=style), text)
            answer = self.answer.get(path, "").strip()
            if answer and not agent.sub_agents_list:
                grid.add_row("", Text(_short(answer[-160:], 160), style="italic"))
            return grid

        def grow(tree: Tree, agent: Agent, path: tuple[str, ...]) -> None:
            for child in agent.sub_agents_list:
                child_path = (*path, child.name)
                grow(tree.add(label(child, child_path)), child, child_path)

        root_path = (self.root.name,)
        tree = Tree(label(self.root, root_path))
        grow(tree, self.root, root_path)
        return tree

    def close(self) -> None:
        # a stream that ends with agents still running was stopped (Ctrl-C, a closed output)
        for path, state in self.status.items():
            if state == "running":
                self.status[path] = "stopped"
        self.live.refresh()
        self.live.stop()


def make_view(agent: Agent, *, json_lines: bool, plain: bool, out: TextIO | None = None) -> View:
    """The view for the CLI's options: JSON lines, plain lines (also when not a TTY), or live."""
    stream = out or sys.stdout
    if json_lines:
        return JsonView(stream)
    if plain or not stream.isatty():
        return PlainView(stream)
    try:
        return LiveView(stream, agent)
    except ImportError:  # rich missing: plain lines
        return PlainView(stream)
