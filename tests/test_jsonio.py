"""The API's JSON (``service.jsonio``, by orjson) reads and writes every value as the
standard library does, and refuses a body it could not store; the access line's time
is ``datetime``'s."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from service import jsonio, logs
from tests.test_api import assert_problem


def json_values(floats):
    scalars = st.none() | st.booleans() | st.integers() | floats | st.text()
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@given(json_values(st.floats(allow_nan=False, allow_infinity=False)))
@example(2**64)  # the shortest integers orjson would read as floats
@example({"pot": [-2**63 - 1]})
def test_it_reads_what_the_standard_library_reads(value):
    text = json.dumps(value)
    # repr: 1 and 1.0, 10**23 and 1e23 look equal to ==, and key order counts
    assert repr(jsonio.loads(text)) == repr(json.loads(text))
    assert repr(jsonio.loads(text.encode())) == repr(json.loads(text))


@pytest.mark.parametrize("text", ["NaN", '{"a": [Infinity]}', "-Infinity", "1e400",
                                  '{"a": -1e400}', "[" * 5000 + "]" * 5000])
def test_what_is_no_json_or_past_what_is_read_is_refused(text):
    """NaN, Infinity and numbers past a float (which Python's reader would take), and
    nesting past what any of the readers reads: a ValueError, as for other bad text."""
    with pytest.raises(ValueError):
        jsonio.loads(text)
    with pytest.raises(ValueError):
        jsonio.loads(text.encode())


@given(json_values(st.floats(allow_nan=False, allow_infinity=False)))
def test_what_it_writes_reads_back_as_the_value(value):
    assert repr(json.loads(jsonio.dumps(value))) == repr(value)


def test_int_keys_are_written_as_strings_as_the_standard_library_does():
    assert json.loads(jsonio.dumps({1: "a", 2**70: "b"})) == {"1": "a", str(2**70): "b"}


def test_a_body_with_a_lone_surrogate_is_malformed_not_a_500(client, table):
    for text in ('{"name": "\\ud800", "buy_in": 100}', '{"name": "a\\udfff", "buy_in": 100}'):
        answer = client.post(f"/v1/tables/{table['id']}/players", data=text,
                             content_type="application/json")
        assert_problem(answer, 400, "malformed_json")
        assert "holds a lone surrogate" in answer.json["detail"]
    answer = client.post(f"/v1/tables/{table['id']}/players", data='{"name": "\\ud83c\\udca1"'
                         ', "buy_in": 100}', content_type="application/json")  # a pair: fine
    assert answer.status_code == 201, answer.json


def test_a_huge_integer_is_refused_by_the_schema_as_the_number_it_is(client, table):
    answer = client.post(f"/v1/tables/{table['id']}/players", data='{"name": "a", "buy_in": '
                         f'{10**30}}}', content_type="application/json")
    assert_problem(answer, 422, "invalid_request")


@given(st.floats(min_value=0, max_value=4e9))
def test_the_log_time_is_datetimes_isoformat(timestamp):
    expected = datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="milliseconds")
    assert logs._utc_time(timestamp) == expected
