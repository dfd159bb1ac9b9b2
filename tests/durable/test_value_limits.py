"""Values msgpack cannot hold faithfully are refused when written, on every store, saying why.

Found by the second adversarial round (issue 20): an integer beyond 64 bits, a value nested
deeper than msgpack goes, or a list that holds itself failed the write with a raw `TypeError`
from ormsgpack (`Integer exceeds 64-bit range`, `Recursion limit reached`); text holding a lone
surrogate (bytes that were not UTF-8, decoded with `surrogateescape`) was stored as `?` without
a word — the resumed run read other text than the live one — and as a dict key failed raw.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from graphflow import InputError, StateValueError
from graphflow.checkpoint.serde import MAX_DEPTH
from tests.support.helpers import made_then_after
from tests.support.stores import store_url

STORES = ["memory", "sqlite", "postgres"]


def _nested(depth: int) -> list[Any]:
    top: list[Any] = []
    inner = top
    for _ in range(depth - 1):
        inner.append([])
        inner = inner[0]
    return top


def _cycle() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


CASES = {
    "big-int": (2**100, r"made: an integer of 31 digits.*at most 64 bits; write it as text"),
    "surrogate": (
        "ab\udcffcd",
        r"made: text holding a lone surrogate at index 2.*errors='replace'",
    ),
    "surrogate-key": ({"\ud800": 1}, r"made\['\\ud800'\] \(key\): text holding a lone surrogate"),
    "deep": (_nested(MAX_DEPTH + 50), rf"nested more than {MAX_DEPTH} levels deep.*flatten it"),
    "cycle": (_cycle(), r"made\[0\]: a list that holds itself.*break the cycle"),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("kind", STORES)
def test_a_value_msgpack_cannot_hold_is_refused_when_written_saying_why(
    kind: str, case: str, tmp_path: Path
) -> None:
    value, why = CASES[case]
    url = store_url(kind, tmp_path)
    thread = f"limits-{uuid.uuid4().hex[:8]}"
    calls: list[str] = []
    team = made_then_after(value, calls)
    with pytest.raises(StateValueError, match=rf"^Agent `make`: its function wrote .*{why}"):
        team.invoke("go", thread_id=thread, checkpointer=url)
    assert calls == ["make"]  # nothing ran on a value the store would have changed or refused
    assert "made" not in team.get_state(thread, checkpointer=url).values


@pytest.mark.parametrize("kind", STORES)
def test_values_inside_the_limits_round_trip_exactly(kind: str, tmp_path: Path) -> None:
    url = store_url(kind, tmp_path)
    value = {
        "ints": [2**64 - 1, -(2**63)],
        "text": "naïve 中文 😀",
        "deep": _nested(MAX_DEPTH - 10),
        "shared": [[1], [1]],
    }
    thread = f"limits-ok-{uuid.uuid4().hex[:8]}"
    team = made_then_after(value, [])
    assert team.invoke("go", thread_id=thread, checkpointer=url)["tail"] == "AFTER"
    assert team.get_state(thread, checkpointer=url).values["made"] == value


def test_an_input_with_undecodable_bytes_is_refused_before_the_run(tmp_path: Path) -> None:
    calls: list[str] = []
    team = made_then_after("x", calls)
    with pytest.raises(InputError, match=r"the input's input: text holding a lone surrogate"):
        team.invoke("ab\udcffcd", thread_id="t", checkpointer=f"sqlite:///{tmp_path}/runs.db")
    assert calls == []
