"""The run page's screenshot in docs/ui.md is current (scripts/shoot_ui.py takes it).

Like the README's picture (tests/visualize/test_viz_readme_image.py), the file carries the digest
of what it shows — the UI's static files, the page's text and the run's drawing, with ids and
times left out — and the test compares digests, not pixels.
"""

from __future__ import annotations

import importlib.util
import struct
import zlib
from typing import Any

from tests.visualize.viz_support import REPO, program


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("shoot_ui", REPO / "scripts" / "shoot_ui.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of each chunk of a PNG, every CRC checked."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    out, at = [], 8
    while at < len(png):
        (size,) = struct.unpack(">I", png[at : at + 4])
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + size]
        (crc,) = struct.unpack(">I", png[at + 8 + size : at + 12 + size])
        assert crc == zlib.crc32(kind + data) & 0xFFFFFFFF, kind
        out.append((kind, data))
        at += 12 + size
    return out


def test_checked_in_screenshot_is_current() -> None:
    program("chromium")
    script = _script()
    png, digest = script.shoot()  # the run page of a freshly seeded run, as the script takes it
    assert script.stored_digest() == digest, (
        "docs/images/ui_run.png is stale: run python scripts/shoot_ui.py"
    )
    assert [k for k, _ in chunks(png)][0] == b"IHDR"
    assert "images/ui_run.png" in (REPO / "docs" / "ui.md").read_text()


def test_the_digest_rides_in_a_valid_png_and_a_stale_one_is_told(tmp_path, monkeypatch) -> None:
    script = _script()
    stored = script.OUT.read_bytes()
    found = chunks(stored)
    assert [k for k, _ in found][:2] == [b"IHDR", b"tEXt"] and found[-1][0] == b"IEND"
    bare = stored[:8] + b"".join(  # the same picture without its digest
        struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d) & 0xFFFFFFFF)
        for k, d in found
        if not d.startswith(script.KEY)
    )
    assert script.stored_digest(tmp_path / "missing.png") is None
    stale = tmp_path / "stale.png"
    stale.write_bytes(script.with_digest(bare, "0" * 64))
    assert [k for k, _ in chunks(stale.read_bytes())] == [k for k, _ in found]
    assert script.stored_digest(stale) == "0" * 64
    current = script.stored_digest()
    monkeypatch.setattr(script, "shoot", lambda: (bare, current))  # what the page shows now
    assert script.main(["--check"]) == 0
    monkeypatch.setattr(script, "OUT", stale)
    assert script.main(["--check"]) == 1
