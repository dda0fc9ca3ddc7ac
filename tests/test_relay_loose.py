"""The forgiving reader that finds whom to answer when a frame is refused."""

from __future__ import annotations

import json
import sys

import pytest

from proxy.relay import loose


def deep_batch(depth: int) -> bytes:
    text = b"[" * depth + b'""' + b"]" * depth
    return (b'[{"jsonrpc": "2.0", "id": 7, "method": "ping"}, '
            b'{"jsonrpc": "2.0", "id": "x-1", "method": "tools/call", '
            b'"params": {"name": "echo", "arguments": {"text": ' + text + b"}}}]")


@pytest.mark.parametrize("depth", [1100, sys.getrecursionlimit() * 3])
def test_a_batch_nested_past_the_stack_still_names_each_request(depth: int) -> None:
    with pytest.raises(RecursionError):
        json.loads(deep_batch(depth))  # the stdlib gives up here; Node's reader does not
    members = loose.read(deep_batch(depth))
    assert isinstance(members, list)
    assert [(m.kind, m.raw_id, m.method) for m in members] == [
        ("request", b"7", "ping"), ("request", b'"x-1"', "tools/call")]


@pytest.mark.parametrize("tail", [b"", b"]", b"}]", b"}}},", b"}}} {}]"])
def test_a_deep_batch_that_is_not_closed_is_one_unreadable_batch(tail: bytes) -> None:
    data = deep_batch(1100)
    cut = data[: data.rindex(b"}}}]")] + tail
    assert loose.read(cut) == []


def test_a_deep_batch_reads_its_other_members_as_unknown() -> None:
    data = b'[1, "s", [' + b"[" * 1100 + b"]" * 1100 + b'], {"id": 2, "result": {}}]'
    members = loose.read(data)
    assert isinstance(members, list)
    assert [m.kind for m in members] == ["unknown", "unknown", "unknown", "response"]
    assert members[3].raw_id == b"2"


@pytest.mark.parametrize(
    "raw", [b"1.0", b"1e2", b"-0", b'"\\u0041"', b"123456789012345678901234567890"])
def test_batch_member_ids_are_echoed_as_written(raw: bytes) -> None:
    data = b'[{"jsonrpc": "2.0", "id": ' + raw + b', "method": "x", "params": {"a": [1}]'
    assert loose.read(data) == []  # not JSON: one error, id null
    data = b'[{"jsonrpc": "2.0", "id": ' + raw + b', "method": "ping"}, {"id": ' + raw + b"}]"
    members = loose.read(data)
    assert isinstance(members, list)
    assert [m.raw_id for m in members] == [raw, raw]


def test_a_batch_member_with_two_different_ids_is_not_echoed() -> None:
    members = loose.read(b'[{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}]')
    assert isinstance(members, list) and members[0].raw_id is None
