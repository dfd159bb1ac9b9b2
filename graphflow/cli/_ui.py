"""`graphflow ui`: serve the web UI (`graphflow.ui`) over a run store with uvicorn."""

from __future__ import annotations

import argparse
import secrets
import sys
import threading
import webbrowser
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graphflow.cli._targets import load_agent

if TYPE_CHECKING:
    pass

__all__ = ("add_ui_parser", "cmd_ui")

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_ui_parser(
    command: Callable[[str, str], argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add `graphflow ui [TARGET ...] [--host H] [--port N] [--open]` through `command(name, help)`."""
    p = command("ui", "serve a local web app to watch, approve, resume and fork runs")
    p.add_argument("targets", nargs="*", metavar="TARGET", help="agents runs can be started of")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    return p


def cmd_ui(args: argparse.Namespace) -> int:
    """Serve the UI until Ctrl-C; returns the exit code."""
    try:
        import uvicorn

        from graphflow.ui import create_app
    except ImportError as exc:
        print(
            f"graphflow ui needs the ui extra ({exc.name} is missing): "
            "pip install 'graphflow-agents[ui]'",
            file=sys.stderr,
        )
        return 2
    from graphflow.checkpoint.urls import safe_url

    store = args.checkpointer
    targets = {name: load_agent(name) for name in args.targets}
    token = None if args.host in LOOPBACK else secrets.token_urlsafe(18)
    app = create_app(targets, store, token=token, load=load_agent)
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{args.port}/" + (f"?token={token}" if token else "")
    print(f"graphflow ui: runs in {safe_url(store)}", file=sys.stderr)
    if token:
        print("not on loopback: every request needs the token in this URL", file=sys.stderr)
    print(url, flush=True)
    if args.open:
        threading.Timer(1.0, webbrowser.open, [url]).start()
    config: Any = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    uvicorn.Server(config).run()
    return 0
