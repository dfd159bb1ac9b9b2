"""`event_from_json` on lines that are not events: one clear `InputError`, never a raw error."""

from __future__ import annotations

import json

import pytest

from graphflow import events as ev
from graphflow.exceptions import InputError

TOKEN = ev.ModelToken(seq=3, timestamp=1.5, thread_id="t", agent_path=("root", "w"), text="hi")


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("[1, 2]", "an event is a JSON object with a 'type' and its fields, found a list"),
        (["a"], "found a list"),
        ('"text"', "found a str"),
        ("null", "found a NoneType"),
        ("{not json", "not a JSON event line"),
        ('{"type": "ModelToken"}', "ModelToken event lacks seq, timestamp, thread_id, agent_path"),
        ('{"type": "ModelToken", "seq": 1}', "lacks timestamp, thread_id, agent_path"),
        ({"type": "RunStarted"}, "RunStarted event lacks"),
        ({"type": 7}, "unknown event type 7"),
    ],
)
def test_lines_that_are_not_events_are_input_errors(line, says) -> None:
    with pytest.raises(InputError) as info:
        ev.event_from_json(line)
    assert says in str(info.value)


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("seq", "3", "field 'seq' is '3'; expected an integer"),
        ("seq", True, "expected an integer"),
        ("agent_path", "root/w", "expected a list of agent names"),
        ("agent_path", ["root", 1], "holds a non-text name"),
        ("thread_id", 5, "expected text"),
        ("iteration", "x", "expected an integer or null"),
        ("text", {"$usage": [1]}, "field 'text': cannot decode"),
        ("text", {"$message": 5}, "field 'text': cannot decode"),
    ],
)
def test_fields_of_the_wrong_kind_are_named(field, value, says) -> None:
    data = {**TOKEN.to_json(), field: value}
    with pytest.raises(InputError, match="ModelToken") as info:
        ev.event_from_json(json.dumps(data))
    assert says in str(info.value)


def test_good_lines_still_round_trip_and_extra_keys_are_ignored() -> None:
    assert ev.event_from_json(TOKEN.to_json_line()) == TOKEN
    assert ev.event_from_json({**TOKEN.to_json(), "added_later": 1}) == TOKEN
