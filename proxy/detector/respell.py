"""Respelling tricks undone: leetspeak ("1gn0r3 4ll") and words spelled out letter by letter
("i g n o r e", "S-Y-S-T-E-M"), each as a view of the whole text.

Views are whole copies, not regions around the changes: the learned layer counts a word once
per window of the words before it, so a region cut out of the text would score its first
window without that history, higher than the same words score in the text itself.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from proxy.detector.re2spans import found, spans

# Digits only: "@" and "$" are addresses, npm scopes and shell variables far more often.
_LEET_MAP = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"})
_LEET_MARK = "[a-zA-Z][013457]|[013457][a-zA-Z]"
_LEET_WORD = re.compile(r"(?<!\w)\w*(?:[a-zA-Z][013457]|[013457][a-zA-Z])\w*")
# In ASCII text, for RE2 over bytes: only the words that can read as letters (every character a
# letter or one of the digits read as one), whole (\b on both sides: no other word character),
# and of those only the ones _unleet can accept, so a log's timestamps are not each a match:
# a letter followed by a digit alone (`v1`, `x11`: letters then digits) is _HEXISH, so a word
# read as letters has a digit followed by a letter; one that starts with digits has its first
# letter there, and is _HEXISH when that letter is a final `Z` or a `T` between digits
# (`05Z`, `30T01`). Every word this leaves out, _unleet would have refused.
_LEET_WORD_ASCII = (
    rb"\b(?:(?:[a-zA-Z][a-zA-Z013457]*[013457][a-zA-Z]"
    rb"|[013457]+(?:[a-zA-SU-Y]|Z[a-zA-Z013457]|T[013457]*[a-zA-Z]))[a-zA-Z013457]*"
    rb"|[013457]+T)\b"
)
# Hashes, versions, units, names with a number (sha256, v2, 10ms, 3rd, utf8) and the pieces of
# ISO 8601 times (`30T01` of 2026-11-30T01:02, `05Z`), not disguises.
_HEXISH = re.compile(
    r"[0-9a-fA-F]{6,}|[vV]\d+|\d+(?:[kmgtKMGT]?[bB]|ms|px|[smhkxdKMGX]|th|st|nd|rd)|[a-zA-Z]+\d+"
    r"|\d+T\d+|\d+Z"
)
MIN_LEET_WORDS = 3
# Letters one by one with the same separator between them: "i g n o r e", "S.Y.S.T.E.M".
_SPACED_PATTERN = r"\b(?:[a-zA-Z][ .\-_|*~+/]){3,}[a-zA-Z]\b"
_SPACED_SEP = re.compile(r"[ .\-_|*~+/]")
_LETTER_SPACE = re.compile(r"(?<=\b[a-zA-Z]) (?=[a-zA-Z]\b)")
# The same spaces in ASCII text, for RE2 over bytes: runs of one-letter words one space apart.
_LETTER_RUN_ASCII = rb"\b[a-zA-Z](?: [a-zA-Z]\b)+"


@functools.cache
def _leet_mark() -> Any:
    import re2

    return re2.compile(_LEET_MARK)


@functools.cache
def _leet_word_ascii() -> Any:
    import re2

    return re2.compile(_LEET_WORD_ASCII)


@functools.cache
def _letter_run_ascii() -> Any:
    import re2

    return re2.compile(_LETTER_RUN_ASCII)


@functools.cache
def _spaced() -> Any:
    import re2

    return re2.compile(_SPACED_PATTERN)


# What respelled_views searches first, for a caller's combined prefilter.
MARK_PATTERNS = (_LEET_MARK, _SPACED_PATTERN)


def respelled_views(
    text: str, marks: tuple[bool, ...] | None = None
) -> list[tuple[str, str]]:
    """(trick, view) for each trick `text` uses. Each is found first with one linear RE2
    search, so ordinary text costs one pass. `marks`: whether each of MARK_PATTERNS occurs
    in `text`, when the caller knows, so those searches are not run again."""
    views: list[tuple[str, str]] = []
    data = text.encode("utf-8")  # what the re2 wrapper would encode (strictly) per search
    leet_mark, spaced = marks if marks is not None else (found(_leet_mark(), data), True)
    if leet_mark:
        leet = _leet_view(text, data)
        if leet is not None:
            views.append(("leet", leet))
    if spaced and any(
        _spells(data[start:end].decode("ascii")) for start, end in spans(_spaced(), data)
    ):
        # Letters one space apart are one word ("D o" too), words are wider apart.
        view = _join_letters(text)
        views.append(("spaced", _spaced().sub(lambda m: _SPACED_SEP.sub("", m.group()), view)))
    return views


def _join_letters(text: str) -> str:
    """`text` without the spaces between one-letter words (_LETTER_SPACE)."""
    if text.isascii():  # RE2: Python's engine tries the lookbehind at every character
        joined = _letter_run_ascii().sub(
            lambda m: m.group().replace(b" ", b""), text.encode("ascii")
        )
        return str(joined.decode("ascii"))
    return _LETTER_SPACE.sub("", text)


def _spells(run: str) -> bool:
    """Whether letters spelled out one by one can be a word: "a a a a" (a list, a table's
    filler) cannot, and would cost a whole copy of the text."""
    return len(set(run[::2].lower())) > 1


def _leet_view(text: str, data: bytes) -> str | None:
    """The text with its disguised words read as letters (at least MIN_LEET_WORDS of them)."""
    words: dict[str, str | None] = {}  # a word seen again costs a dict lookup
    pieces: list[str] = []
    at = changed = 0
    for start, end, word in _leet_words(text, data):
        plain = words.get(word, "")
        if plain == "":
            plain = words[word] = _unleet(word)
        if plain is not None:
            pieces += [text[at:start], plain]
            at = end
            changed += 1
    if changed < MIN_LEET_WORDS:
        return None
    pieces.append(text[at:])
    return "".join(pieces)


def _leet_words(text: str, data: bytes | None = None) -> list[tuple[int, int, str]]:
    """`data`: the text's UTF-8 bytes if already made (an ASCII text's offsets are theirs)."""
    if text.isascii():  # RE2: Python's engine backtracks through every word of the text
        data = text.encode("ascii") if data is None else data
        return [(start, end, text[start:end]) for start, end in spans(_leet_word_ascii(), data)]
    return [(m.start(), m.end(), m.group()) for m in _LEET_WORD.finditer(text)]


def _unleet(word: str) -> str | None:
    """The word with digits read as letters, or None when it is not a disguised word."""
    if _HEXISH.fullmatch(word):
        return None
    plain = word.translate(_LEET_MAP)
    return plain if plain.isalpha() else None
