"""Write docs/images/ui_run.png, the screenshot of `graphflow ui`'s run page in docs/ui.md.

    python scripts/shoot_ui.py          # rewrite the screenshot
    python scripts/shoot_ui.py --check  # exit 1 if the checked-in screenshot is stale

A seeded run (a support team paused at a refund that needs approval) is served by the web UI
and opened in Debian's Chromium (Playwright). The PNG carries, in a `tEXt` chunk, the SHA-256 of
what the page is made of — the UI's static files, the page's text once loaded and the run's
drawing (DOT) — with ids, times and the store's path left out, so the check compares the page
itself, not pixels (fonts and anti-aliasing differ between machines; the test does the same).
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "images" / "ui_run.png"
STATIC = REPO / "graphflow" / "ui" / "static"
KEY = b"graphflow-page-sha256"
THREAD = "support-1"
TARGET_KEY = "graphflow_target"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 900}


def team() -> Any:
    """A triage agent that looks the order up, then a refunder whose refund needs approval."""
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import tool

    from graphflow import HumanApproval, ReactAgent, SequentialAgent
    from graphflow.testing import ScriptedChatModel, tool_call

    def used(message: AIMessage, tokens: int) -> AIMessage:
        message.usage_metadata = {
            "input_tokens": tokens - 20,
            "output_tokens": 20,
            "total_tokens": tokens,
        }
        return message

    @tool
    def lookup_order(order_id: str) -> str:
        """Look an order up by its id."""
        return f"order {order_id}: 2 mugs, 24.90 EUR, delivered broken"

    @tool
    def refund(order_id: str, amount: float) -> str:
        """Refund an amount of an order."""
        return f"refunded {amount} EUR on {order_id}"

    def triage(messages: list[Any], n: int) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return used(AIMessage("Order A-17: 2 mugs, 24.90 EUR, arrived broken."), 412)
        return used(tool_call("lookup_order", {"order_id": "A-17"}), 356)

    def refunder(messages: list[Any], n: int) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return used(AIMessage(f"Done: {messages[-1].content}."), 530)
        return used(tool_call("refund", {"order_id": "A-17", "amount": 24.9}), 498)

    return SequentialAgent(
        name="support",
        sub_agents=[
            ReactAgent(
                name="triage",
                instruction="Find the order the customer means and what happened to it.",
                model=ScriptedChatModel(fn=triage),
                tools=[lookup_order],
                output_key="facts",
            ),
            ReactAgent(
                name="refunder",
                instruction="Refund what these facts allow: {facts}",
                model=ScriptedChatModel(fn=refunder),
                tools=[refund],
                hooks=[HumanApproval({"refund": "Sends money back to the customer."})],
                output_key="outcome",
            ),
        ],
    )


def _normal(text: str, store: str) -> str:
    """`text` without what changes from one shot to the next: ids, times, numbers, the store."""
    text = text.replace(store, "<store>")
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<id>", text)
    text = re.sub(r"\b(?:call|toolu|run)[-_][0-9A-Za-z_-]+", "<id>", text)
    text = re.sub(r"\d+", "0", text)
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def digest(page_text: str, dot: str) -> str:
    """SHA-256 of the static files, the page's (normalised) text and the drawing's DOT."""
    h = hashlib.sha256()
    for path in sorted(STATIC.rglob("*")):
        if path.is_file():
            h.update(path.relative_to(STATIC).as_posix().encode() + b"\0" + path.read_bytes())
    h.update(b"\0page\0" + page_text.encode())
    h.update(b"\0dot\0" + dot.encode())
    return h.hexdigest()


def shoot() -> tuple[bytes, str]:
    """(the PNG screenshot, its digest) of the run page of a freshly seeded run."""
    sys.path.insert(0, str(REPO))
    support = team()
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # the store is `sqlite:///runs.db`, as a reader's would be
        try:
            return _shoot(support, "sqlite:///runs.db")
        finally:
            os.chdir(here)


def _shoot(support: Any, url: str) -> tuple[bytes, str]:
    from playwright.sync_api import sync_playwright

    from graphflow.ui import create_app
    from tests.ui.ui_support import Served
    from tests.visualize.viz_support import program

    support.invoke(
        "My order A-17 arrived broken, please refund it.",
        thread_id=THREAD,
        checkpointer=url,
        config={"metadata": {TARGET_KEY: "support"}},
    )
    app = create_app({"support": support}, url)
    store = app.state.service.store
    dot = _normal(str(support.compile(url).draw("dot", thread_id=THREAD)), store)
    with Served(app) as served, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=program("chromium"), headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{served.url}/runs/{THREAD}")
        page.locator('#status[data-status="interrupted"]').wait_for(timeout=60_000)
        page.locator(".approval").first.wait_for(timeout=60_000)
        page.locator("li.checkpoint").first.wait_for(timeout=60_000)
        # the drawing (SVG from graphviz) loaded inline; no wait_for_function: the page's CSP
        # forbids the eval Playwright polls a string predicate with
        page.locator("#drawing-svg svg").wait_for(state="attached", timeout=60_000)
        page.click('tr[data-agent="triage"]')  # what it answered, in the panel
        page.locator("#agent-detail", has_text="arrived broken").wait_for(timeout=60_000)
        page.wait_for_timeout(500)  # what the page fetches after a click has landed
        text = _normal(page.inner_text("body"), store)
        png = page.screenshot(full_page=True)
        browser.close()
    return png, digest(text, dot)


def with_digest(png: bytes, value: str) -> bytes:
    """`png` with a `tEXt` chunk `graphflow-page-sha256` holding `value`, after its header."""
    data = KEY + b"\0" + value.encode()
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data
    chunk += struct.pack(">I", zlib.crc32(b"tEXt" + data) & 0xFFFFFFFF)
    end = 8 + 25  # signature, then the IHDR chunk (13 bytes of data + length, type, CRC)
    return png[:end] + chunk + png[end:]


def stored_digest(path: Path | None = None) -> str | None:
    """The digest recorded in the checked-in PNG (None if missing)."""
    path = path or OUT
    if not path.exists():
        return None
    match = re.search(re.escape(KEY) + rb"\x00([0-9a-f]{64})", path.read_bytes())
    return match.group(1).decode() if match else None


def main(argv: list[str]) -> int:
    """Write the screenshot, or with --check say whether it is current."""
    png, value = shoot()
    if "--check" in argv:
        current = stored_digest() == value
        print("up to date" if current else f"stale: run python scripts/shoot_ui.py ({OUT})")
        return 0 if current else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(with_digest(png, value))
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
