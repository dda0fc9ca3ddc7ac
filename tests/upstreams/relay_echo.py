"""A raw line-level upstream for the relay tests: no SDK, so every byte is under the test's control.

Requests (one JSON-RPC message per line) are answered by method:
  echo     result = params, so the answer is as large as the request
  digest   result = {"sha256", "size"} of the exact line received (proves bytes arrived untouched)
  pid      result = {"pid", "child"}: this process and, with --spawn-child, a grandchild's pid
  exit     exit at once with params["code"]
  hold     answered only when stdin reaches EOF (a call the client abandons)
  burst    result = {"n"}, after sending params["n"] progress notifications
  big      result = {"text": "x" * params["n"]} (a small request with a large answer)
  raw      answers with the bytes bytes.fromhex(params["hex"]) as its whole line
anything else → {"ok": true}. Notifications get no answer; a line that is not JSON gets a
-32700 error with id null, and a batch gets an array of answers (as a server would).
Options: --eof-exit N (exit code when stdin closes), --ignore-eof (keep running after EOF, until
a signal), --spawn-child, --pidfile PATH (write this process's pid there at start).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time


def answer(msg: object, line: bytes, held: list[object]) -> object | None:
    if not isinstance(msg, dict) or "method" not in msg:
        return None
    if "id" not in msg:
        return None
    rpc_id = msg["id"]
    method = msg["method"]
    params = msg.get("params") or {}
    if method == "echo":
        result: object = params
    elif method == "digest":
        result = {"sha256": hashlib.sha256(line.rstrip(b"\n")).hexdigest(), "size": len(line)}
    elif method == "pid":
        result = {"pid": os.getpid(), "child": CHILD.pid if CHILD else None}
    elif method == "exit":
        sys.stdout.flush()
        os._exit(int(params.get("code", 0)))
    elif method == "initialize":  # negotiates down to an older version, as old servers do
        result = {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "serverInfo": {"name": "relay-echo", "version": "1"},
        }
    elif method == "hold":
        held.append(rpc_id)
        return None
    elif method == "raw":
        sys.stdout.buffer.write(bytes.fromhex(params["hex"]) + b"\n")
        sys.stdout.buffer.flush()
        return None
    elif method == "big":
        result = {"text": "x" * int(params.get("n", 0))}
    elif method == "burst":
        for i in range(int(params.get("n", 0))):
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": rpc_id, "progress": i},
            }
            sys.stdout.write(json.dumps(note) + "\n")
        result = {"n": params.get("n", 0)}
    else:
        result = {"ok": True}
    return {"jsonrpc": "2.0", "id": rpc_id, "result": result}


CHILD: subprocess.Popen[bytes] | None = None


def main() -> int:
    global CHILD
    args = sys.argv[1:]
    eof_exit = int(args[args.index("--eof-exit") + 1]) if "--eof-exit" in args else 0
    if "--pidfile" in args:
        with open(args[args.index("--pidfile") + 1], "w") as f:
            f.write(str(os.getpid()))
    if "--spawn-child" in args:
        CHILD = subprocess.Popen(["sleep", "300"])
    held: list[object] = []
    stdin = sys.stdin.buffer
    for line in stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            out: object = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "parse error"},
            }
        else:
            if isinstance(msg, list):
                out = [a for m in msg if (a := answer(m, line, held)) is not None]
            else:
                out = answer(msg, line, held)
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
    for rpc_id in held:  # the client is gone; answer anyway, as a slow tool would
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": {"late": True}}))
        sys.stdout.write("\n")
    sys.stdout.flush()
    if "--ignore-eof" in args:
        while True:
            time.sleep(3600)
    return eof_exit


if __name__ == "__main__":
    sys.exit(main())
