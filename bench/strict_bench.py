"""What strict frame parsing costs per frame, next to a plain orjson parse.

    .venv/bin/python bench/strict_bench.py [--json]

Frames: tools/call requests and results of 200 B to 1 MB (prose), a 40-tool tools/list answer,
a structured result of 2,000 rows, each as the SDKs write them (compact, canonical) and as
Python's json.dumps writes them (spaces: not canonical, so the duplicate-key check runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson

from proxy.relay.strict import parse

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while",
         "every", "licence", "grants", "you"]


def prose(n: int) -> str:
    out: list[str] = []
    size = 0
    i = 0
    while size < n:
        word = WORDS[i % len(WORDS)]
        out.append(word)
        size += len(word) + 1
        i += 1
    return " ".join(out)[:n]


def frames() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for size, label in ((200, "200 B"), (4096, "4 KB"), (65536, "64 KB"), (1 << 20, "1 MB")):
        out[f"tools/call {label}"] = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                      "params": {"name": "echo",
                                                 "arguments": {"text": prose(size)}}}
        out[f"result {label}"] = {"jsonrpc": "2.0", "id": 7, "result": {
            "content": [{"type": "text", "text": prose(size)}], "isError": False}}
    out["tools/list 40 tools"] = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [
        {"name": f"tool_{i}", "description": prose(120),
         "inputSchema": {"type": "object", "required": ["p0"], "properties": {
             f"p{j}": {"type": "string", "description": prose(40)} for j in range(6)}}}
        for i in range(40)]}}
    out["result 2,000 rows"] = {"jsonrpc": "2.0", "id": 3, "result": {
        "content": [{"type": "text", "text": "rows"}],
        "structuredContent": {"rows": [{"id": i, "name": f"n{i}", "url": f"https://x/{i}"}
                                       for i in range(2000)]}}}
    return out


def best(fn: Any, data: bytes) -> float:
    number = max(1, int(2e6 / max(len(data), 200)))
    return min(timeit.repeat(lambda: fn(data), number=number, repeat=5)) / number


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for name, msg in frames().items():
        for style, data in (("compact", orjson.dumps(msg)),
                            ("spaced", json.dumps(msg, ensure_ascii=False).encode())):
            base, strict = best(orjson.loads, data), best(parse, data)
            rows.append({"frame": name, "style": style, "bytes": len(data),
                         "orjson_us": base * 1e6, "strict_us": strict * 1e6,
                         "added_us": (strict - base) * 1e6})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'frame':22} {'style':8} {'bytes':>9} {'orjson µs':>10} {'strict µs':>10} "
          f"{'added µs':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['frame']:22} {r['style']:8} {r['bytes']:>9} {r['orjson_us']:>10.1f} "
              f"{r['strict_us']:>10.1f} {r['added_us']:>9.1f} "
              f"{r['strict_us'] / r['orjson_us']:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
