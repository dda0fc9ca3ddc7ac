"""The relay benchmark's upstream (bench/relay_bench.py): a tiny MCP server with one `echo` tool.

- `initialize` and `tools/list` are answered as an MCP server would (one tool, `echo(text)`).
- `tools/call` of `echo` returns its `text` argument as a text content block, so the result is
  as large as the arguments. The argument's JSON-encoded bytes are copied into the answer
  without decoding when the request has the compact shape the benchmark sends; any other shape
  (a proxy that re-serialises) is parsed with the standard library.
- `bench/echo` (the pass-through contrast) answers with its params as the result.
Only the standard library is imported, so it costs almost nothing to start or run.
"""

import json
import sys

TOOLS = {
    "tools": [
        {
            "name": "echo",
            "description": "Return the text it is given.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        }
    ]
}
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bench-echo", "version": "1"},
}
_CALL = b',"method":"tools/call","params":{"name":"echo","arguments":{"text":'
_TAIL = b"}}}\n"


def fast_echo(line: bytes) -> bytes | None:
    """The answer to a compact echo call, by slicing; None for any other line."""
    if not line.startswith(b'{"jsonrpc":"2.0","id":') or not line.endswith(_TAIL):
        return None
    at = line.find(_CALL, 22, 64)
    if at < 0:
        return None
    rpc_id = line[22:at]
    text = line[at + len(_CALL) : -len(_TAIL)]
    return (
        b'{"jsonrpc":"2.0","id":' + rpc_id + b',"result":{"content":[{"type":"text","text":'
        + text + b'}],"isError":false}}\n'
    )


def answer(msg: dict) -> object:
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "initialize":
        return INIT
    if method == "tools/list":
        return TOOLS
    if method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        return {"content": [{"type": "text", "text": text}], "isError": False}
    return params


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        out = fast_echo(line)
        if out is None:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
                continue  # notifications and responses get no answer
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": answer(msg)}
            out = json.dumps(reply, separators=(",", ":")).encode() + b"\n"
        stdout.write(out)
        stdout.flush()


if __name__ == "__main__":
    main()
