"""Import paths of a spec resolve from the spec's own folder, without leaking between specs."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from graphflow.spec import SpecError, load_spec

SPEC = """
kind: FunctionAgent
name: clean
fn: "spec_helpers:clean"
output_key: out
"""


def _folder(root: Path, name: str, body: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "spec_helpers.py").write_text(textwrap.dedent(body))
    (folder / "team.yaml").write_text(SPEC)
    return folder / "team.yaml"


def test_two_specs_with_same_named_helpers_each_get_their_own(tmp_path: Path) -> None:
    path_before = list(sys.path)
    first = _folder(tmp_path, "one", "def clean(state):\n    return 'one:' + state['input']\n")
    second = _folder(tmp_path, "two", "def clean(state):\n    return 'two:' + state['input']\n")
    a, b = load_spec(first), load_spec(second)
    assert a.invoke("x", checkpointer="memory:")["out"] == "one:x"
    assert b.invoke("x", checkpointer="memory:")["out"] == "two:x"
    assert sys.path == path_before  # no spec folder left on the import path
    assert "spec_helpers" not in sys.modules  # nor a module under its bare name
    # each writes itself back as it was written
    assert a.to_spec() == b.to_spec() == yaml.safe_load(SPEC)
    # loading the first again gives the same functions (the folder's modules load once)
    assert load_spec(first).fn is a.fn


def test_modules_of_one_folder_import_each_other_relatively(tmp_path: Path) -> None:
    spec = _folder(
        tmp_path,
        "rel",
        "from . import spec_words\n\ndef clean(state):\n    return spec_words.WORD\n",
    )
    (spec.parent / "spec_words.py").write_text("WORD = 'relative'\n")
    assert load_spec(spec).invoke("x", checkpointer="memory:")["out"] == "relative"


def test_a_bare_sibling_import_says_how_to_fix_it(tmp_path: Path) -> None:
    spec = _folder(
        tmp_path,
        "bare",
        "import spec_words_bare\n\ndef clean(state):\n    return spec_words_bare.WORD\n",
    )
    (spec.parent / "spec_words_bare.py").write_text("WORD = 'bare'\n")
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    message = str(info.value)
    assert message.startswith(f"{spec}:4: fn: cannot import 'spec_helpers'")
    assert "from . import spec_words_bare" in message


def test_installed_modules_and_agent_kinds_by_path_still_resolve(tmp_path: Path) -> None:
    folder = tmp_path / "kinds"
    folder.mkdir()
    (folder / "spec_kinds_custom.py").write_text(
        textwrap.dedent(
            """
            from graphflow import FunctionAgent

            class Upper(FunctionAgent):
                pass

            def shout(state):
                return state["input"].upper()
            """
        )
    )
    spec = folder / "team.yaml"
    spec.write_text(
        'kind: "spec_kinds_custom:Upper"\nname: up\nfn: "spec_kinds_custom:shout"\n'
        "output_key: out\nhooks: [graphflow:LoggingHook]\n"
    )
    agent = load_spec(spec)
    assert type(agent).__name__ == "Upper"
    assert agent.invoke("hi", checkpointer="memory:")["out"] == "HI"
    assert agent.to_spec()["kind"] == "spec_kinds_custom:Upper"


def test_a_module_or_call_that_exits_is_a_spec_error(tmp_path: Path) -> None:
    spec = _folder(tmp_path, "exits", "import sys\nsys.exit(0)\n")
    with pytest.raises(SpecError, match=r"importing 'spec_helpers' called sys.exit\(0\)"):
        load_spec(spec)
    spec.write_text(SPEC.replace('"spec_helpers:clean"', '{call: "sys:exit", args: [3]}'))
    with pytest.raises(SpecError, match=r"calling 'sys:exit' called sys.exit\(3\)"):
        load_spec(spec)


def test_graphflow_names_never_come_from_the_spec_folder(tmp_path: Path) -> None:
    spec = _folder(tmp_path, "shadow", "def clean(state):\n    return 'x'\n")
    (spec.parent / "graphflow.py").write_text("raise RuntimeError('not the framework')\n")
    spec.write_text(
        SPEC.replace(
            'fn: "spec_helpers:clean"', 'fn: "spec_helpers:clean"\nhooks: [graphflow:LoggingHook]'
        )
    )
    assert type(load_spec(spec).hooks[0]).__name__ == "LoggingHook"
