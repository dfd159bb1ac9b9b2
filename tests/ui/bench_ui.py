"""Measure the UI: first paint of `/` with N runs in a SQLite store, and event-to-screen latency.

    PYTHONPATH=$PWD .venv/bin/python tests/ui/bench_ui.py --runs 10000

Seeding is cheap: one real run of the `pipe` team, whose checkpoint rows are then copied in SQL
under N thread ids. First paint: from `page.goto("/")` to the first run row on screen (the page
then shows 50 rows, newest first). Latency: for each typed event of a run started from the page,
the time from the event's own timestamp to its line in the page's live log (one clock: same host).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from graphflow.ui import create_app  # noqa: E402
from tests.ui import ui_targets
from tests.ui.ui_support import Served, seed  # noqa: E402
from tests.visualize.viz_support import CHROMIUM_ARGS, program  # noqa: E402


def seed_many(db: Path, n: int) -> None:
    url = f"sqlite:///{db}"
    seed(url, "pipe", "seed")
    con = sqlite3.connect(db)
    with con:
        for table in ("checkpoints", "writes"):
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
            rest = ", ".join(c for c in cols if c != "thread_id")
            con.execute(
                f"INSERT INTO {table} (thread_id, {rest}) "
                f"SELECT 'run-' || printf('%05d', n.i), {rest} FROM {table}, "
                f"(WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) "
                f"SELECT i FROM c) AS n WHERE thread_id = 'seed'",
                (n - 1,),
            )
    con.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "runs.db"
        seed_many(db, args.runs)
        url = f"sqlite:///{db}"
        with Served(create_app(ui_targets.targets(), url)) as served, sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=program("chromium"), headless=True, args=CHROMIUM_ARGS
            )
            paints = []
            for _ in range(args.repeat):
                page = browser.new_page()
                page.add_init_script(
                    "new MutationObserver((records, self) => { for (const r of records)"
                    " for (const n of r.addedNodes) if (n.classList && n.classList.contains('run-row'))"
                    " { window.__paint = performance.now(); self.disconnect(); return; } })"
                    ".observe(document, { childList: true, subtree: true });"
                )
                start = time.perf_counter()
                page.goto(served.url + "/")
                page.locator("tr.run-row").first.wait_for(timeout=60_000)
                outside = time.perf_counter() - start
                paints.append((page.evaluate("window.__paint") / 1000, outside))
                rows = page.locator("tr.run-row").count()
                page.close()
            inside = [p[0] for p in paints]
            print(
                f"first paint of / with {args.runs} runs ({rows} rows shown), from navigation "
                f"start (performance.now): median {statistics.median(inside) * 1000:.0f} ms, "
                f"min {min(inside) * 1000:.0f} ms, max {max(inside) * 1000:.0f} ms; "
                f"goto to row seen by Playwright: median "
                f"{statistics.median(p[1] for p in paints) * 1000:.0f} ms"
            )
            page = browser.new_page()
            page.goto(served.url + "/runs/seed")
            page.locator("#status").wait_for(timeout=60_000)
            page.close()
            lat: list[float] = []
            for i in range(args.repeat):
                page = browser.new_page()
                page.add_init_script(
                    "window.__lat = []; new MutationObserver((records) => { const now = Date.now() / 1000;"
                    " for (const r of records) for (const n of r.addedNodes)"
                    " if (n.dataset && n.dataset.ts) window.__lat.push([Number(n.dataset.ts), now]); })"
                    ".observe(document, { childList: true, subtree: true });"
                )
                page.goto(served.url + "/")
                page.locator("#start-target option").first.wait_for(state="attached")
                page.select_option("#start-target", "gated")
                page.fill("#start-input", "go")
                page.fill("#start-thread", f"lat-{i}")
                ui_targets.GATE.clear()
                page.click("#start-button")
                page.wait_for_url(f"**/runs/lat-{i}")
                page.locator('#status[data-status="running"]').wait_for(timeout=60_000)
                opened = time.time()
                ui_targets.GATE.set()  # what happens from here on is seen live
                page.locator('#status[data-status="done"]').wait_for(timeout=60_000)
                page.wait_for_timeout(500)
                lat.extend(now - ts for ts, now in page.evaluate("window.__lat") if ts >= opened)
                page.close()
            browser.close()
    if lat:
        lat_ms = sorted(x * 1000 for x in lat)
        print(
            f"event to screen over {len(lat_ms)} events: median {statistics.median(lat_ms):.0f} ms, "
            f"p90 {lat_ms[int(len(lat_ms) * 0.9)]:.0f} ms, max {lat_ms[-1]:.0f} ms"
        )
    else:
        print("no live events were seen (a run started from the page shows none?)")


if __name__ == "__main__":
    main()
