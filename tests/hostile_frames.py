"""Malformed JSON-RPC lines that mainstream parsers still read one way or another.

Python's json and Node's JSON.parse accept several of these (NaN, lone surrogate escapes,
duplicate keys with the last one winning, invalid bytes replaced), so a proxy that forwards
them undecided lets the call run. Shared by the relay core tests, the end-to-end frame tests
and the property test.
"""

from __future__ import annotations

from proxy.relay.strict import MAX_DEPTH


def malformed_calls(
    rpc_id: int | None, tool: str, key: str, value: str, benign: str = "echo"
) -> dict[str, bytes]:
    """tools/call lines for `tool` with the argument key=value (ASCII), one per flaw; without a
    newline. `rpc_id` None makes them notifications. `benign` is the tool a parser that keeps
    the first of two duplicate names would see."""
    rid = b"" if rpc_id is None else b'"id":%d,' % rpc_id
    call = b'{"jsonrpc":"2.0",' + rid + b'"method":"tools/call","params":'
    head = call + b'{"name":"' + tool.encode() + b'","arguments":'
    k, v = key.encode(), value.encode()
    pair = b'"' + k + b'":"' + v + b'"'

    def string(extra: bytes) -> bytes:
        return head + b'{"' + k + b'":"' + v + extra + b'"}}}'

    def beside(extra: bytes) -> bytes:
        return head + b"{" + pair + b"," + extra + b"}}}"

    deep, limit = b"[" * 1100 + b"]" * 1100, b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    return {
        "invalid UTF-8": string(b"\xff"),
        "overlong encoding": string(b"\xc0\xae\xc0\xae"),
        "surrogate bytes": string(b"\xed\xa0\x80"),
        "lone high surrogate escape": string(b"\\ud800"),
        "lone low surrogate escape": string(b"\\udc00"),
        "NaN": beside(b'"n":NaN'),
        "-Infinity": beside(b'"n":-Infinity'),
        "number beyond a double": beside(b'"n":1e400'),
        "duplicate argument": head + b'{"' + k + b'":"harmless",' + pair + b"}}}",
        "duplicate key deep down": beside(b'"x":[{"k":1,"k":2}]'),
        "duplicate tool name": call + b'{"name":"' + benign.encode() + b'","arguments":{'
        + pair + b'},"name":"' + tool.encode() + b'"}}',
        "duplicate method": b'{"jsonrpc":"2.0",' + rid + b'"method":"ping","method":"tools/call",'
        b'"params":{"name":"' + tool.encode() + b'","arguments":{' + pair + b"}}}",
        "1,100 levels": beside(b'"x":' + deep),
        "past the depth limit": beside(b'"x":' + limit),
        "trailing content": string(b"") + b' {"x":1}',
        "truncated": head + b"{" + pair,
        "control character in a string": string(b"\x00"),
        "byte order mark": b"\xef\xbb\xbf" + string(b""),
    }
