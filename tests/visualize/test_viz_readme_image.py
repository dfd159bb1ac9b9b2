"""The README's picture of the example team is current (scripts/draw_readme.py writes it)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from tests.visualize.viz_support import REPO, program


def _script() -> object:
    spec = importlib.util.spec_from_file_location(
        "draw_readme", REPO / "scripts" / "draw_readme.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_picture_is_current() -> None:
    script = _script()
    assert script.stored_digest() == script.digest(script.dot_source()), (  # type: ignore[attr-defined]
        "docs/images/competitive_analysis.svg is stale: run python scripts/draw_readme.py"
    )
    svg = script.OUT.read_text(encoding="utf-8")  # type: ignore[attr-defined]
    for name in ("competitive_analysis", "researcher", "refine", "writer", "reviewer"):
        assert f">{name}" in svg


def test_script_check_fails_on_a_stale_picture(tmp_path, monkeypatch) -> None:
    script = _script()
    stale = tmp_path / "stale.svg"
    stale.write_text(
        "<?xml version='1.0'?>\n<!-- graphflow-dot-sha256: " + "0" * 64 + " -->\n<svg/>"
    )
    monkeypatch.setattr(script, "OUT", stale)
    assert script.main(["--check"]) == 1  # type: ignore[attr-defined]


def test_rendered_picture_is_valid_svg(tmp_path) -> None:
    program("dot")
    script = _script()
    svg = script.render()  # type: ignore[attr-defined]
    assert svg.startswith("<?xml") and "<svg" in svg and svg.rstrip().endswith("</svg>")
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "draw_readme.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stdout + out.stderr
