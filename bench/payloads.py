"""Realistic tool-call payloads for the relay benchmark, built from files already on the machine.

Six kinds of text a tool really passes around: English prose (licence texts), a JSON API
response (generated, GitHub-issues-like, full of URLs and users), source code (the Python
standard library), a log file (generated access and application log lines), a base64 blob (of a
compiled extension module) and minified JavaScript (from the npm packages the tests install).
Nothing is downloaded: every source is an installed file or a seeded generator, so one machine
gives the same bytes every run.
"""

from __future__ import annotations

import base64
import json
import random
import sysconfig
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("prose", "json", "code", "log", "base64", "minjs")
_SOURCE_CAP = 4 * 1024 * 1024  # enough to cut a 1 MB payload without repeating


def _read_all(paths: Iterator[Path], cap: int = _SOURCE_CAP) -> str:
    parts: list[str] = []
    total = 0
    for path in paths:
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        parts.append(text)
        total += len(text)
        if total >= cap:
            break
    return "\n".join(parts)


def _prose() -> str:
    debian = Path("/usr/share/common-licenses")
    files = sorted(p for p in debian.glob("*") if p.is_file()) if debian.is_dir() else []
    site = Path(sysconfig.get_paths()["purelib"])
    files += sorted(site.glob("*.dist-info/LICENSE*"))
    return _read_all(iter(files))


def _code() -> str:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return _read_all(iter(sorted((stdlib / "asyncio").glob("*.py")) + sorted(stdlib.glob("*.py"))))


def _minjs() -> str:
    found = sorted((ROOT / "tests" / "npm" / "node_modules").glob("**/*.min.js"))
    if not found:
        raise SystemExit("bench: no *.min.js under tests/npm/node_modules (run npm ci there)")
    return _read_all(iter(found))


def _base64() -> str:
    import orjson  # its compiled extension module: realistic binary bytes

    dynload = Path(sysconfig.get_paths()["stdlib"]) / "lib-dynload"
    modules = sorted(Path(orjson.__file__).parent.glob("*.so")) + sorted(dynload.glob("*.so"))
    blob = b"".join(path.read_bytes() for path in modules)
    return base64.b64encode(blob[: _SOURCE_CAP * 3 // 4]).decode()


_PHRASE = (
    "the server returned an error while the client retried the request after a timeout and "
    "the user reported that the page was blank so we rolled back the deploy to the previous "
    "release and opened a ticket for the storage team who found a full disk on one replica"
)
_WORDS = _PHRASE.split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def _json_api() -> str:
    """A page of a GitHub-like issues API response, pretty-printed as such APIs return it."""
    rng = random.Random(1337)
    users = [f"user{n}" for n in range(40)]
    issues = []
    size = 0
    number = 1
    while size < _SOURCE_CAP // 2:
        login = rng.choice(users)
        issue = {
            "id": 1_000_000 + number,
            "node_id": f"I_kwDO{rng.getrandbits(48):012x}",
            "number": number,
            "url": f"https://api.example.org/repos/acme/widgets/issues/{number}",
            "html_url": f"https://example.org/acme/widgets/issues/{number}",
            "title": _sentence(rng)[:60],
            "state": rng.choice(["open", "closed"]),
            "user": {
                "login": login,
                "id": 5000 + users.index(login),
                "avatar_url": f"https://avatars.example.org/u/{5000 + users.index(login)}?v=4",
                "type": "User",
            },
            "labels": [{"name": rng.choice(["bug", "docs", "perf", "ui"]), "color": "d73a4a"}],
            "comments": rng.randint(0, 30),
            "created_at": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z",
            "body": " ".join(_sentence(rng) for _ in range(rng.randint(1, 6))),
        }
        issues.append(issue)
        size += len(json.dumps(issue))
        number += 1
    return json.dumps(issues, indent=2)


def _log() -> str:
    rng = random.Random(42)
    paths = ["/api/v1/items", "/api/v1/users/42", "/static/app.js", "/login", "/healthz"]
    agents = ["Mozilla/5.0 (X11; Linux x86_64)", "curl/8.5.0", "python-httpx/0.27"]
    lines: list[str] = []
    size = 0
    second = 0
    while size < _SOURCE_CAP:
        second += rng.randint(0, 2)
        stamp = f"2026-11-30T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
        if rng.random() < 0.7:
            ip = ".".join(str(rng.randint(1, 254)) for _ in range(4))
            line = (
                f'{ip} - - [{stamp}] "GET {rng.choice(paths)} HTTP/1.1" '
                f'{rng.choice([200, 200, 200, 304, 404, 500])} {rng.randint(120, 90000)} '
                f'"-" "{rng.choice(agents)}"'
            )
        else:
            level = rng.choice(["INFO", "INFO", "WARNING", "ERROR", "DEBUG"])
            line = (
                f"{stamp} {level} worker[{rng.randint(1, 8)}] "
                f"request_id={rng.getrandbits(64):016x} {_sentence(rng)}"
            )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


_SOURCES: dict[str, Callable[[], str]] = {
    "prose": _prose,
    "json": _json_api,
    "code": _code,
    "log": _log,
    "base64": _base64,
    "minjs": _minjs,
}


@cache
def source(kind: str) -> str:
    text = _SOURCES[kind]()
    if not text:
        raise SystemExit(f"bench: found no source text for the {kind!r} payload")
    return text


def payload(kind: str, size: int, variant: int = 0) -> str:
    """About `size` bytes of JSON-encoded text of `kind`; `variant` shifts the window so calls
    differ (no cache anywhere may answer a repeated text for free)."""
    text = source(kind)
    if len(text) <= size:  # a short source is rotated, so variants still differ
        at = (variant * 7919) % len(text)
        text = text[at:] + "\n" + text[:at]
    start = (variant * 7919) % max(1, len(text) - size) if len(text) > size else 0
    piece = text[start : start + size]
    while len(piece) < size:  # a source shorter than the size is repeated
        piece += "\n" + text[: size - len(piece) - 1]
    # Trim to the target size as it travels (JSON-escaped inside a frame).
    while len(json.dumps(piece)) > size + 2 and len(piece) > 1:
        over = len(json.dumps(piece)) - size - 2
        piece = piece[: len(piece) - max(1, over // 2)]
    return piece
