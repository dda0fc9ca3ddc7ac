"""Calendar dates named in text, in one canonical form, so that a date an injection wrote as
"from the 1st to the 5th of May 2024" is recognised when a call passes it as `2024-05-01`.

An agent reformats what it read: a date in prose becomes an ISO argument, "05/01/2024"
becomes "2024-05-01". Both sides are reduced to keys `YYYY-MM-DD`, or `xxxx-MM-DD` when the
text gave no year (then any year matches). Numeric day/month orders that are ambiguous give
both readings: this feeds a deny for values an injection planted, where a wider net costs
nothing benign.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_MONTHS = {
    name: number
    for number, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
         ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
         ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
         ("december", "dec")],
        start=1,
    )
    for name in names
}
# Words that join the days of a range or a list to their month ("the 1st to the 5th of May").
_JOINERS = frozenset(["the", "of", "to", "and", "or", "until", "till", "through", "thru",
                      "from", "-", "–", "—", "&", ",", "on"])
_TOKEN = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{4}|\d{4}[/.]\d{1,2}[/.]\d{1,2}"
                    r"|\d+(?:st|nd|rd|th)?|[^\W\d_]+|[-–—&,]", re.IGNORECASE)
_DAY = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?", re.IGNORECASE)
_YEAR = re.compile(r"(?:19|20)\d\d")
_ANCHORS = re.compile(r"\d[-/.]\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)",
                      re.IGNORECASE)
MAX_SCAN = 256 * 1024
_WINDOW = 8  # tokens walked either side of a month name


def _key(year: int | None, month: int, day: int) -> str | None:
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{year:04d}-{month:02d}-{day:02d}" if year else f"xxxx-{month:02d}-{day:02d}"


def _numeric(token: str) -> Iterator[str | None]:
    if "-" in token:  # ISO
        y, m, d = (int(p) for p in token.split("-"))
        yield _key(y, m, d)
        return
    parts = re.split(r"[/.]", token)
    if len(parts[0]) == 4:
        y, m, d = (int(p) for p in parts)
        yield _key(y, m, d)
        return
    a, b, y = (int(p) for p in parts)
    yield _key(y, a, b)  # month first
    yield _key(y, b, a)  # day first


def date_keys(text: str) -> set[str]:
    """Every date `text` names, as `YYYY-MM-DD` or `xxxx-MM-DD` (no year given)."""
    text = text[:MAX_SCAN]
    if not _ANCHORS.search(text):
        return set()
    tokens = [t.casefold() for t in _TOKEN.findall(text)]
    keys: set[str | None] = set()
    for i, token in enumerate(tokens):
        if token[0].isdigit() and len(token) >= 8 and not token.isdigit():
            keys.update(_numeric(token))
            continue
        month = _MONTHS.get(token)
        if month is None:
            continue
        days: list[int] = []
        year: int | None = None
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(tokens) and abs(j - i) <= _WINDOW:
                word = tokens[j]
                if step == 1 and _YEAR.fullmatch(word):
                    year = int(word)
                    break
                day = _DAY.fullmatch(word)
                if day:
                    days.append(int(day.group(1)))
                elif word not in _JOINERS:
                    break
                j += step
        keys.update(_key(year, month, day) for day in days)
    keys.discard(None)
    return {k for k in keys if k is not None}


def matches(value_keys: set[str], text_keys: set[str]) -> str | None:
    """A date of the value that the text named (a year-less mention matches any year)."""
    for key in sorted(value_keys):
        if key in text_keys or f"xxxx{key[4:]}" in text_keys:
            return key
    return None
