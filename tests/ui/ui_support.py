"""Helpers of the UI tests and measurements: seeding runs, serving the app on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from tests.ui import ui_targets

TARGET_KEY = "graphflow_target"


def seed(url: str, target: str, thread_id: str, input: Any = "go") -> dict[str, Any]:
    """Run `target` on `url` as `graphflow run` would (its target recorded in the checkpoints)."""
    agent = ui_targets.targets()[target]
    return agent.invoke(
        input, thread_id=thread_id, checkpointer=url, config={"metadata": {TARGET_KEY: target}}
    )


class Served:
    """A uvicorn server on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", timeout_graceful_shutdown=5
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the UI server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        ui_targets.GATE.set()
        self.server.should_exit = True
        self.thread.join(timeout=30)
