"""Find a test's server processes by a mark in their environment (`GF_TEST_MARK=<mark>`)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def marked_pids(mark: str) -> list[int]:
    """Processes whose environment holds `GF_TEST_MARK=<mark>`."""
    needle = f"GF_TEST_MARK={mark}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().split()[2]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.append(int(entry))
    return found


def wait_gone(mark: str, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (pids := marked_pids(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids
