"""Spec files are data: size, depth and alias limits, and no duplicate keys."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graphflow.spec import SpecError, load_spec

REPO = Path(__file__).resolve().parents[2]

VALID = """
kind: FunctionAgent
name: step
fn: "graphflow.testing:ScriptedChatModel"
output_key: out
"""


def _alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "kind: FunctionAgent\nname: bomb\ndescription:\n" + textwrap.indent(
        "\n".join(lines), "  "
    )


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    spec = tmp_path / "bomb.yaml"
    spec.write_text(_alias_bomb(9))
    assert len(spec.read_bytes()) < 700
    # in a child process: before the limit, loading this ran for minutes (kill it if so)
    code = (
        "import sys\nfrom graphflow.spec import SpecError, load_spec\n"
        "try:\n    load_spec(sys.argv[1])\nexcept SpecError as e:\n    print('REFUSED', e)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(spec)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("loading a 9-level alias bomb did not stop within 120 s")
    assert done.stdout.startswith("REFUSED"), done.stderr[-2000:]
    assert "aliases are expanded" in done.stdout
    assert f"{spec}:" in done.stdout  # names the file and the line where it stopped


def test_an_alias_cycle_is_a_spec_error_naming_the_line(tmp_path: Path) -> None:
    spec = tmp_path / "cycle.yaml"
    spec.write_text("kind: FunctionAgent\nname: loop\ndescription: &d\n  - x\n  - *d\n")
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    assert "cycle" in str(info.value) and info.value.line == 5


@pytest.mark.parametrize("flow", [True, False])
def test_deep_nesting_is_a_spec_error_not_a_recursion_error(tmp_path: Path, flow: bool) -> None:
    spec = tmp_path / "deep.yaml"
    if flow:
        deep = "[" * 1000 + "]" * 1000
    else:
        deep = "\n" + "\n".join("  " * (i + 1) + f"k{i}:" for i in range(1000)) + " x"
    spec.write_text(f"kind: FunctionAgent\nname: deep\ndescription: {deep}\n")
    with pytest.raises(SpecError, match="nested more than 100 levels deep"):
        load_spec(spec)


def test_json_specs_have_the_same_limits(tmp_path: Path) -> None:
    spec = tmp_path / "deep.json"
    spec.write_text('{"kind": "FunctionAgent", "name": "deep", "description": ' + "[" * 1000)
    with pytest.raises(SpecError, match="nested more than"):
        load_spec(spec)


def test_a_duplicate_key_names_both_lines(tmp_path: Path) -> None:
    spec = tmp_path / "dup.yaml"
    spec.write_text(
        textwrap.dedent(
            """\
            kind: SequentialAgent
            name: team
            sub_agents:
              - kind: FunctionAgent
                name: first
                fn: "graphflow:output_contains"
                name: second
            """
        )
    )
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    message = str(info.value)
    assert message.startswith(f"{spec}:7: duplicate key 'name'")
    assert "first on line 5, again on line 7" in message


def test_merge_keys_and_plain_aliases_still_load(tmp_path: Path) -> None:
    spec = tmp_path / "ok.yaml"
    spec.write_text(
        textwrap.dedent(
            """\
            kind: SequentialAgent
            name: team
            description: &text shared words
            sub_agents:
              - &base {kind: FunctionAgent, name: a, fn: "graphflow:output_contains"}
              - <<: *base
                name: b
                description: *text
            """
        )
    )
    team = load_spec(spec)
    assert [a.name for a in team.sub_agents] == ["a", "b"]
    assert team.sub_agents[1].description == "shared words"


def test_an_oversized_spec_is_refused(tmp_path: Path, monkeypatch) -> None:
    from graphflow.spec import _yaml

    monkeypatch.setattr(_yaml, "MAX_SPEC_BYTES", 1000)
    spec = tmp_path / "big.yaml"
    spec.write_text(VALID + "description: " + "x" * 2000 + "\n")
    with pytest.raises(SpecError, match="more than the 1,000"):
        load_spec(spec)
