"""proxy.relay.strict: what counts as a frame every parser reads the same way."""

from __future__ import annotations

import json

import pytest

from proxy.relay.strict import INVALID_REQUEST, MAX_DEPTH, PARSE_ERROR, FrameError, parse


def nested(depth: int, kind: str = "list") -> bytes:
    if kind == "list":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


@pytest.mark.parametrize("kind", ["list", "object"])
def test_depth_up_to_the_limit_passes_and_one_more_is_refused(kind: str) -> None:
    # orjson's own write limit is the check: if a new orjson moved it, this test says so.
    value, _ = parse(nested(MAX_DEPTH, kind))
    assert value is not None
    with pytest.raises(FrameError) as err:
        parse(nested(MAX_DEPTH + 1, kind))
    assert err.value.code == INVALID_REQUEST and "deeper" in err.value.reason


def test_canonical_frames_are_flagged_so_ids_can_be_rewritten_exactly() -> None:
    assert parse(b'{"id":1,"a":[1.5,"x"]}') == ({"id": 1, "a": [1.5, "x"]}, True)
    assert parse(b'{"id": 1}\n')[1] is False
    # A huge integer is read as a double (as JavaScript reads it): not canonical any more.
    assert parse(b'{"id":18446744073709551616}')[1] is False


@pytest.mark.parametrize(
    "data",
    [b'{"a":1,"a":1}', b'{"a": {"b": [ {"c":1, "c":2} ]}}', b'[{"x":1},{"x":1,"y":2,"x":3}]',
     b'{"\\u0061":1,"a":2}', b'{"a":1, "a":1}'],
)
def test_duplicate_keys_are_refused_however_written(data: bytes) -> None:
    with pytest.raises(FrameError) as err:
        parse(data)
    assert err.value.code == INVALID_REQUEST and "duplicate" in err.value.reason


@pytest.mark.parametrize(
    "data",
    [b'{"a":"\xff"}', b'{"a":"\xc0\xae"}', b'{"a":"\xed\xa0\x80"}', b'{"a":"\\ud800"}',
     b'{"a":"\\udc00"}', b'{"a":NaN}', b'{"a":Infinity}', b'{"a":-Infinity}', b'{"a":1e400}',
     b"\xef\xbb\xbf{}", b'{"a":1} x', b'{"a":"\x00"}', b"", b"{"],
)
def test_what_orjson_refuses_is_a_parse_error(data: bytes) -> None:
    with pytest.raises(FrameError) as err:
        parse(data)
    assert err.value.code == PARSE_ERROR


def test_what_stays_valid() -> None:
    for text in ('{"a":"\\ud83d\\ude00"}', '{"a":"caf\\u00e9","b":[true,false,null]}',
                 '{"n":-0.0,"m":1E+2}', '  {"x" : 1}  '):
        assert parse(text.encode())[0] == json.loads(text)
