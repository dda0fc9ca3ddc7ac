"""Framing of the local socket: the same messages whatever the reads look like."""

from __future__ import annotations

from typing import Any

import orjson

from proxy.ipc.framing import LineDecoder, encode

MESSAGES: list[dict[str, Any]] = [
    {"type": "hello", "protocol": 1, "role": "proxy", "server": "gmail"},
    {"type": "ask", "ask_id": "a-1", "arguments_preview": "{\"to\": \"x@y.z\"}\n"},
    {"type": "heartbeat", "calls": 3},
]
STREAM = b"".join(encode(m) for m in MESSAGES)


def test_every_split_of_the_stream_decodes_the_same() -> None:
    for cut in range(1, len(STREAM)):
        decoder = LineDecoder()
        got = decoder.feed(STREAM[:cut]) + decoder.feed(STREAM[cut:])
        assert got == MESSAGES, cut


def test_byte_by_byte_and_all_at_once() -> None:
    decoder = LineDecoder()
    one_by_one = [m for i in range(len(STREAM)) for m in decoder.feed(STREAM[i : i + 1])]
    assert one_by_one == MESSAGES
    assert LineDecoder().feed(STREAM) == MESSAGES


def test_a_multibyte_character_split_across_reads() -> None:
    data = encode({"type": "notice", "reason": "naïve → ünïcode ✓"})
    cut = data.index("✓".encode()) + 1  # inside the three-byte character
    decoder = LineDecoder()
    assert decoder.feed(data[:cut]) == []
    assert decoder.feed(data[cut:]) == [{"type": "notice", "reason": "naïve → ünïcode ✓"}]


def test_oversize_line_is_dropped_and_the_stream_goes_on() -> None:
    decoder = LineDecoder(max_line=1000)
    big = orjson.dumps({"type": "ask", "pad": "x" * 5000}) + b"\n"
    got = []
    for i in range(0, len(big), 300):  # arrives in pieces, never buffered whole
        got += decoder.feed(big[i : i + 300])
    got += decoder.feed(encode(MESSAGES[0]))
    assert got == [MESSAGES[0]]
    assert decoder.dropped == 1


def test_oversize_line_in_a_single_read_with_neighbours() -> None:
    decoder = LineDecoder(max_line=100)
    data = encode(MESSAGES[2]) + b'{"type":"x","p":"' + b"y" * 200 + b'"}\n' + encode(MESSAGES[2])
    assert decoder.feed(data) == [MESSAGES[2], MESSAGES[2]]
    assert decoder.dropped == 1


def test_garbage_and_untyped_lines_are_dropped() -> None:
    decoder = LineDecoder()
    data = b"not json\n[1,2]\n{\"no\": \"type\"}\n{\"type\": 5}\n\n" + encode(MESSAGES[1])
    assert decoder.feed(data) == [MESSAGES[1]]
    assert decoder.dropped == 4
