"""The floor for an inspecting relay: the least a Python proxy that reads each call can do.

    python bench/parse_relay.py [--no-search] COMMAND [ARGS...]

Like bench/raw_relay.py (one `readline` and one `write` per frame), and besides: every frame
is parsed as JSON (orjson, as the proxy does), and every string of a `tools/call`'s arguments
and every text of its result is searched once, as UTF-8, with the result rules' RE2 set (the
rules' patterns as they are, no normalisation, no readers, no learned layer, no audit, no
policy). Nothing is ever refused: the frame's own bytes are forwarded. A proxy that looks at
the text at all pays at least this; `gatewatch run` adds everything else it does.
`--no-search`: parse only (a proxy that reads each frame's JSON and nothing else).
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import raw_relay


def _search() -> Callable[[bytes], list[int]]:
    """The result rules' RE2 set of the rules read on the flattened text, their exact
    patterns (what the scanner searches a text longer than one window with)."""
    from proxy.detector.loader import load_detector
    from proxy.detector.scanner import CompiledRules

    match = CompiledRules(load_detector().result_rules).flat_match
    assert match is not None
    return match


def _texts(msg: Any) -> Iterator[str]:
    if not isinstance(msg, dict):
        return
    params = msg.get("params")
    if isinstance(params, dict) and msg.get("method") == "tools/call":
        arguments = params.get("arguments")
        if isinstance(arguments, dict):
            yield from (v for v in arguments.values() if isinstance(v, str))
    result = msg.get("result")
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        for block in result["content"]:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                yield block["text"]


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
               search: Callable[[bytes], list[int]]) -> None:
    import orjson

    while line := await reader.readline():
        try:
            msg = orjson.loads(line)
        except orjson.JSONDecodeError:
            msg = None
        for text in _texts(msg):
            search(text.encode())
        writer.write(line)
        await writer.drain()
    writer.close()


def run(argv: list[str]) -> int:
    if argv[:1] == ["--no-search"]:
        argv = argv[1:]
        search: Callable[[bytes], list[int]] = lambda data: []  # noqa: E731
    else:
        search = _search()
    return asyncio.run(raw_relay.main(argv, functools.partial(pump, search=search)))


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
