"""The destination finders as they were before session 5, kept to test the faster ones against.

`extract` is `proxy.engine.destinations.extract_destinations` as of commit a374a24: every dot,
every '#' and every colon-bearing text visited in Python. The finders that did not change are
imported, so only the rewritten parts are frozen here.
"""

from __future__ import annotations

import bisect
import re

from proxy.engine import destinations as d

_DOTS = re.compile(r"\.(?=[A-Za-z0-9])")
_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


def extract(text: str) -> tuple[d.Found, ...]:
    text = text[: d.MAX_SCAN]
    spans: list[tuple[int, int, str, str]] = []
    starts: list[int] = []

    def taken(start: int, end: int) -> bool:
        i = bisect.bisect_right(starts, start) - 1
        if i >= 0 and spans[i][1] > start:
            return True
        return i + 1 < len(spans) and spans[i + 1][0] < end

    def add(start: int, end: int, key: str | None, kind: str) -> None:
        if key and not taken(start, end):
            i = bisect.bisect_right(starts, start)
            starts.insert(i, start)
            spans.insert(i, (start, end, key, kind))

    if "://" in text:
        d._find_urls(text, add)
    if "@" in text:
        d._find_at(text, add, taken)
    if "::" in text or text.count(":") >= 7:
        d._find_ipv6(text, add)
    if "." in text:
        _find_dotted(text, add, taken)
    if "+" in text or "(" in text or "-" in text:
        d._find_phones(text, add)
    if "#" in text:
        for m in re.finditer("#", text):
            at = m.start()
            if at and (text[at - 1].isalnum() or text[at - 1] in "_&#/"):
                continue
            match = d._CHANNEL_RE.match(text, at)
            if match:
                raw = match.group(0).rstrip(".,;:!?")
                add(at, at + len(raw), raw.casefold(), d.CHANNEL)
    d._find_ibans(text, add)
    return tuple((key, kind, s, e) for s, e, key, kind in spans)


def _find_dotted(text: str, add: d._Add, taken: d._Taken) -> None:
    done = 0
    for m in _DOTS.finditer(text):
        dot = m.start()
        if dot < done or dot == 0 or text[dot - 1] not in _LABEL_CHARS:
            continue
        start = dot
        while start > 0 and dot - start < 63 and text[start - 1] in _LABEL_CHARS:
            start -= 1
        before = text[start - 1] if start else " "
        if before.isalnum() or before in "_@./-":
            done = dot + 1
            continue
        if text[dot - 1].isdigit() and text[dot + 1].isdigit():
            ip_match = d._IPV4_RE.match(text, start)
            if ip_match is not None:
                done = ip_match.end()
                ip = d.canonical_ip(ip_match.group(0))
                add(start, done, ip, d.IP)
                continue
        match = d._HOST_RE.match(text, start)
        if match is None:
            continue
        raw = match.group(0).rstrip(".,;:!?")
        done = start + len(raw)
        if not d._tld_ok(raw) or taken(start, done):
            continue
        after = text[done:done + 1]
        if after and (after.isalnum() or after in "_@"):
            continue
        found = d._url_key(raw, True)
        if found is not None:
            add(start, done, found[0], found[1])
