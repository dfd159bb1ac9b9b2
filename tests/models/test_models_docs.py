"""docs/openai-compatible.md matches the preset table and the test server it describes."""

from __future__ import annotations

from pathlib import Path

from graphflow.models import get_preset, preset_names
from tests.models.openai_server import BEHAVIOURS, COMBINED, REPLY_FAULTS, TOOL_ID_FAULTS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "openai-compatible.md").read_text()


def test_every_preset_row_matches_the_code() -> None:
    rows = {
        line.split("|")[1].strip().split()[0].strip("`"): line
        for line in DOC.splitlines()
        if line.startswith("| `")
    }
    for name in preset_names():
        preset = get_preset(name)
        row = rows[name]
        assert ", ".join(preset.structured_output) in row, name
        if preset.base_url:
            assert f"`{preset.base_url}`" in row, name
        if preset.api_key_env != "OPENAI_API_KEY":
            assert f"`{preset.api_key_env}`" in row, name


def test_every_behaviour_and_variable_is_documented() -> None:
    for behaviour in (*BEHAVIOURS, *REPLY_FAULTS, *TOOL_ID_FAULTS, *COMBINED):
        assert f"`{behaviour}`" in DOC
    for variable in (
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "GRAPHFLOW_MODEL",
        "GRAPHFLOW_MAX_TOKENS",
        "GRAPHFLOW_MODEL_TIMEOUT",
        "GRAPHFLOW_MODEL_RETRIES",
        "GRAPHFLOW_PROVIDER",
    ):
        assert f"`{variable}`" in DOC
