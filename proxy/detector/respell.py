"""Respelling tricks undone, each as a view of the whole text: leetspeak ("1gn0r3 4ll"), words
spelled out letter by letter ("i g n o r e", "S-Y-S-T-E-M", "i.g.n.o.r.e y.o.u.r", and with no
gap between words "i g n o r e a l l": cut back into words), and class words cut in two
("prev ious instruc tions").

Views are whole copies, not regions around the changes: the learned layer counts a word once
per window of the words before it, so a region cut out of the text would score its first
window without that history, higher than the same words score in the text itself.
"""

from __future__ import annotations

import functools
import itertools
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from proxy.detector.lexicon import ENGLISH
from proxy.detector.re2spans import compiled, found, spans

_LEET_DIGITS = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"}
_LEET_MAP = str.maketrans(_LEET_DIGITS)
# "@", "$" and "!" read as letters too ("@ll", "$y$tem", "!gnore", "in$truct!ons"), but only
# where the whole word then is one of the words injections are made of (SEGMENT_WORDS): "@"
# and "$" are addresses, npm scopes and shell variables far more often, and those never read
# as such a word ("user@host", "@types", "$HOME"). A "!" that ends a word is punctuation.
_SYMBOL_MAP = str.maketrans({**_LEET_DIGITS, "@": "a", "$": "s", "!": "i"})
# Read only in a text where a word with symbols inside ("p@ssword", "in$truct!ons", "4$$1$t4nt")
# reads as such a word: a word that only starts with one ("@ll", "$ystem") is read beside it,
# not alone, since code starts words with them everywhere ("$.ajax", "!function", "@media").
# Whole words of three characters or more with a symbol: the short ones ("!e", "$t", "!0")
# are minified code's negations and names, hundreds in 64 KB, and would each be a match.
_SYMBOL_WORD = (rb"[a-zA-Z013457@$!]+[@$!][a-zA-Z013457@$!]+|[@$!][a-zA-Z013457@$!]{2,}"
                rb"|[a-zA-Z013457@$!]{2,}[@$!]")
_SYMBOL_MARK = "[a-zA-Z013457][@$!]+[a-zA-Z]"  # not "return!0", minified code's true
_SYMBOL_INSIDE = rb"[a-zA-Z013457@$!]*" + _SYMBOL_MARK.encode() + rb"[a-zA-Z013457@$!]*"
_LEET_MARK = "[a-zA-Z][013457]|[013457][a-zA-Z]|" + _SYMBOL_MARK
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
# Letters one by one with one separator between them: "i g n o r e", "S.Y.S.T.E.M",
# "i-g-n-o-r-e a-l-l" (one separator per run: the spaces between runs are the gaps between
# words). RE2 has no backreference, so each separator is an alternative of its own.
_SEPARATORS = " .-_|*~+/"


def _letter_runs(least: int) -> str:
    """A run of letters `least` + 1 or more long with one separator between them."""
    runs = "|".join(f"[a-zA-Z](?:[{sep}][a-zA-Z]){{{least},}}" for sep in _SEPARATORS)
    return rf"\b(?:{runs})\b"


_SPACED_PATTERN = _letter_runs(3)  # four letters or more: a word spelled out
_SPELLED_RUN = _letter_runs(1)  # in a text that has one, every run of two letters or more
# Words a spelled-out run is cut into when its letters came one space apart with no wider
# gap between words ("i g n o r e a l l"): the class words of English and the short words
# injections are made of. Two letters at least, but "a" and "i".
_FUNCTION_WORDS = [
    "a", "i", "about", "after", "again", "all", "also", "am", "an", "and", "any", "api", "are",
    "as", "at", "be", "been", "both", "but", "by", "can", "code", "could", "data", "did", "do",
    "does", "done", "down", "each", "email", "every", "file", "files", "for", "from", "get",
    "give", "go", "has", "have", "he", "her", "here", "him", "his", "how", "if", "in", "into",
    "is", "it", "its", "just", "key", "keys", "let", "like", "mail", "make", "me", "mode", "more",
    "my", "need", "new", "no", "not", "now", "of", "on", "one", "only", "or", "our", "out",
    "over", "own", "please", "reveal", "same", "she", "should", "show", "so", "some", "such",
    "tell", "text", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "true", "up", "us", "use", "via", "was", "we", "what", "when", "where",
    "which", "who", "why", "will", "with", "would", "yes", "you", "your",
]
SEGMENT_WORDS = frozenset(
    [w for words in ENGLISH.values() for w in words if len(w) > 1 and w.isalpha()]
    + _FUNCTION_WORDS
)
# Class words cut in two ("prev ious", "instruc tions", "disr egard"): each cut of an English
# word of six letters or more of the classes an override is made of, into parts of two
# letters or more, but the cuts whose two parts are both ordinary words ("pass word", "for
# get", "any thing"), which text writes. The classes of verbs and urgency are left out: each
# cut is one more alternative in the prefilter's automaton, which every text pays for.
_CUT_CLASSES = ("IGNORE", "PRIOR", "INSTR", "AI", "ROLE", "UNBOUND", "SECRET", "HIDE",
                "AUTHORITY")
_WHOLE_PARTS = frozenset([
    *_FUNCTION_WORDS, "come", "fore", "get", "less", "load", "more", "over", "put", "ride",
    "rule", "self", "stead", "thing", "ward", "wards", "word",
])


def _cuts() -> dict[str, str]:
    out: dict[str, str] = {}
    for word in sorted({w for cls in _CUT_CLASSES for w in ENGLISH[cls] if len(w) >= 6}):
        for at in range(2, len(word) - 1):
            head, tail = word[:at], word[at:]
            if not (head in _WHOLE_PARTS and tail in _WHOLE_PARTS):
                out[f"{head} {tail}"] = word
    return out


CUTS = _cuts()
_MIN_CUT = 4  # a spelled-out run shorter than this is one word ("all", "you", "e.g.")
_DEADLINE_EVERY = 1024  # letters segment() reads between two looks at the clock
_CUT_PATTERN = r"(?i)\b(?:" + "|".join(sorted(CUTS)) + r")\b"


def _leet_mark() -> Any:
    return compiled(_LEET_MARK)


def _leet_word_ascii() -> Any:
    return compiled(_LEET_WORD_ASCII)


def _symbol_inside() -> Any:
    return compiled(_SYMBOL_INSIDE)


def _symbol_word() -> Any:
    return compiled(_SYMBOL_WORD)


def _spaced() -> Any:
    return compiled(_SPACED_PATTERN)


def _spelled_run() -> Any:
    return compiled(_SPELLED_RUN)


def _cut() -> Any:
    return compiled(_CUT_PATTERN)


# What respelled_views searches first, for a caller's combined prefilter.
MARK_PATTERNS = (_LEET_MARK, _SPACED_PATTERN, _CUT_PATTERN)


def respelled_views(
    text: str, marks: tuple[bool, ...] | None = None, deadline: float | None = None
) -> list[tuple[str, str]]:
    """(trick, view) for each trick `text` uses. Each is found first with one linear RE2
    search, so ordinary text costs one pass. `marks`: whether each of MARK_PATTERNS occurs
    in `text`, when the caller knows, so those searches are not run again. Past `deadline`
    (a time.perf_counter() value) spelled-out runs are joined but no longer cut into words."""
    views: list[tuple[str, str]] = []
    data = text.encode("utf-8")  # what the re2 wrapper would encode (strictly) per search
    if marks is None:
        marks = (found(_leet_mark(), data), True, found(_cut(), data))
    leet_mark, spaced, cut = marks
    if leet_mark:
        leet = _leet_view(text, data)
        if leet is not None:
            views.append(("leet", leet))
    if spaced and any(
        _spells(data[start:end].decode("ascii")) for start, end in spans(_spaced(), data)
    ):
        runs = list(spans(_spelled_run(), data))
        cut_view = _replaced(data, runs, _reader(deadline))
        views.append(("spaced", cut_view))
        # Where the writer marks gaps, each run is also read as one word. Beside the cut
        # reading, not instead of it: one marked gap elsewhere must not turn a whole phrase
        # spelled as one run into one long word.
        if _gaps_marked(data, runs):
            whole_view = _replaced(data, runs, _reader(deadline, whole=True))
            if whole_view != cut_view:
                views.append(("spaced", whole_view))
    if cut:
        views.append(("joined", _replaced(data, spans(_cut(), data),
                                          lambda run: run.replace(b" ", b""))))
    return views


def _replaced(
    data: bytes, found: Iterable[tuple[int, int]], read: Callable[[bytes], bytes]
) -> str:
    """The text of `data` with each span of `found` (re2spans' matches, in order) replaced by
    `read(match)`. Over the bytes (the wrapper's sub builds a Match object per run): the
    matches are ASCII, so their bytes are their characters."""
    pieces: list[bytes] = []
    at = 0
    for start, end in found:
        pieces += [data[at:start], read(data[start:end])]
        at = end
    pieces.append(data[at:])
    return b"".join(pieces).decode("utf-8")


_GAP = frozenset(b" \t\r\n" + _SEPARATORS.encode())


def _gaps_marked(data: bytes, runs: list[tuple[int, int]]) -> bool:
    """Whether the writer marked the gaps between spelled-out words: two runs with nothing
    but separators between them ("d i s r e g a r d   a l l", "i-g-n-o-r-e a-l-l"), which
    one run would have taken in had the gap been a single separator of its own. Then a run
    is also read as one word unless it is made of words SEGMENT_WORDS has and nothing else: a
    word the list lacks, cut into the words it has, falls apart ("contract" as "c on tr act")."""
    return any(
        end < start and all(c in _GAP for c in data[end:start])
        for (_s, end), (start, _e) in itertools.pairwise(runs)
    )


def _reader(deadline: float | None, whole: bool = False) -> Callable[[bytes], bytes]:
    """A spelled-out run (one separator between every two letters) as the words it spells;
    with `whole` (the text marks the gaps between words), as one word unless the words of
    SEGMENT_WORDS make it up entirely."""

    def read(run: bytes) -> bytes:
        letters = run[::2]
        if len(letters) < _MIN_CUT:
            return letters
        words = segment(letters.decode("ascii"), deadline)
        if whole and not all(w.lower() in SEGMENT_WORDS for w in words.split(" ")):
            return letters
        return words.encode("ascii")

    return read


def segment(letters: str, deadline: float | None = None) -> str:
    """`letters` cut into the words of SEGMENT_WORDS they are made of, the longest words
    first (a word scores its length squared, so "assistant" is not "as sis tant"); letters
    no word covers stay together as one piece between the words around them. Linear: a walk
    of the word trie from each letter, a few steps where no word starts. Past `deadline` the
    letters not read yet stay one piece."""
    low = letters.lower()
    n = stop = len(low)
    best = [-1] * (n + 1)
    start_of = [0] * (n + 1)  # where the last piece of the best reading of low[:i] starts
    best[0] = 0
    trie = _trie()
    for start in range(n):
        if (deadline is not None and start % _DEADLINE_EVERY == 0 and start
                and time.perf_counter() > deadline):
            stop = start  # best[start] is final: every piece ending there was weighed
            break
        here = best[start]
        if here > best[start + 1]:  # one letter no word covers
            best[start + 1], start_of[start + 1] = here, start
        node = trie
        end = start
        while end < n:
            step = node.get(low[end])
            if step is None:
                break
            node = step
            end += 1
            if _END in node:
                score = here + (end - start) ** 2
                if score > best[end]:
                    best[end], start_of[end] = score, start
    pieces = [letters[stop:]] if stop < n else []
    end = stop
    loose = False  # whether the piece after this one is a letter no word covers
    while end > 0:
        start = start_of[end]
        word = end - start > 1 or low[start:end] in SEGMENT_WORDS
        if not word and loose and pieces:
            pieces[-1] = letters[start:end] + pieces[-1]
        else:
            pieces.append(letters[start:end])
        loose = not word
        end = start
    return " ".join(reversed(pieces))


_END = ""  # a trie node's key for "a word ends here" (no letter is empty)


@functools.cache
def _trie() -> dict[str, Any]:
    root: dict[str, Any] = {}
    for word in sorted(SEGMENT_WORDS):
        node = root
        for letter in word:
            node = node.setdefault(letter, {})
        node[_END] = True
    return root


def _spells(run: str) -> bool:
    """Whether letters spelled out one by one can be a word: "a a a a" (a list, a table's
    filler) cannot, and would cost a whole copy of the text."""
    return len(set(run[::2].lower())) > 1


def _leet_view(text: str, data: bytes) -> str | None:
    """The text with its disguised words read as letters: at least MIN_LEET_WORDS of them, one
    of which reads as a word injections are made of (SEGMENT_WORDS). Hex fragments read as no
    such word ("3f", "4d0", "1e3" as "ef", "ado", "iee"), and three of them in a megabyte of
    code and logs cost the whole text a scan more."""
    symbols, read = _symbol_reader()
    if any(_symbol_plain(data[start:end]) for start, end in spans(_symbol_inside(), data)):
        with_symbols = _replaced(data, spans(_symbol_word(), data), read)
        text, data = with_symbols, with_symbols.encode("utf-8")
    words: dict[str, str | None] = {}  # a word seen again costs a dict lookup
    pieces: list[str] = []
    at = 0
    changed = len(symbols)
    known = bool(symbols)  # a word read with symbols is one of SEGMENT_WORDS already
    for start, end, word in _leet_words(text, data):
        plain = words.get(word, "")
        if plain == "":
            plain = words[word] = _unleet(word)
        if plain is not None:
            pieces += [text[at:start], plain]
            at = end
            changed += 1
            known = known or plain.lower() in SEGMENT_WORDS
    if changed < MIN_LEET_WORDS or not known:
        return None
    pieces.append(text[at:])
    return "".join(pieces)


def _symbol_reader() -> tuple[list[str], Callable[[bytes], bytes]]:
    """A reader of words with "@", "$" or "!" for _replaced, and the list of the words it
    read as letters."""
    read_as: list[str] = []

    def read(token: bytes) -> bytes:
        plain = _symbol_plain(token)
        if plain is None:
            return token
        read_as.append(plain)
        return plain.encode("ascii") + token[len(token.rstrip(b"!")):]

    return read_as, read


def _symbol_plain(token: bytes) -> str | None:
    """The word a token with symbols reads as, or None when it reads as no word injections
    are made of. Three letters at least: "!s", "!t", "@n" of code would read "is", "it", "an"."""
    plain = token.rstrip(b"!").decode("ascii").translate(_SYMBOL_MAP).lower()
    return plain if len(plain) >= 3 and plain in SEGMENT_WORDS else None


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
