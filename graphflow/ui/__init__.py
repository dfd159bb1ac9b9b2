"""`graphflow ui`: a local web app to watch, inspect, approve, resume and fork runs (offline).

`create_app(targets, checkpointer)` is the ASGI app (Starlette); `graphflow ui TARGET` serves it
with uvicorn on 127.0.0.1. Needs the `ui` extra (`pip install graphflow[ui]`).
"""

from __future__ import annotations

from graphflow.ui.app import create_app

__all__ = ("create_app",)
