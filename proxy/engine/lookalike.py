"""Tool names that a model (or a human skimming a list) would read as the same name.

`fold_name` maps a name to a key: NFKC, without invisible characters and accents, Cyrillic and
Greek look-alikes read as Latin (proxy.detector.confusables), case folded, separators dropped
and the letters that pass for one another in common fonts (l, I, 1, |; o, 0; rn, m; vv, w)
merged. Two different names with one key impersonate each other: `Send_Email`, `send-email`,
`send_emaіl` (Cyrillic і), `ｓｅｎｄ_email` and `send_emai1` all fold to the key of `send_email`.
Keys that differ only where one has a letter of another script are alike too (`alike`), so a
look-alike the table does not know still counts.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from proxy.detector.confusables import FOLD

# Categories that change nothing a reader sees: format (zero-width, bidi), controls, and the
# combining marks left after NFD (accents on a Latin base letter).
_DROP = frozenset(("Cf", "Cc", "Mn", "Me"))
_SEPARATORS = re.compile(r"[\W_]+")
_ALIKE = str.maketrans({"1": "l", "i": "l", "|": "l", "!": "l", "0": "o"})
_PAIRS = (("rn", "m"), ("vv", "w"))


@functools.lru_cache(maxsize=4096)  # a first listing compares every name with every other
def fold_name(name: str) -> str:
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) not in _DROP)
    text = text.translate(FOLD).casefold().translate(FOLD)
    text = _SEPARATORS.sub("", text).translate(_ALIKE)
    for pair, letter in _PAIRS:
        text = text.replace(pair, letter)
    return text


def alike(key: str, other: str) -> bool:
    """Two fold keys a reader cannot tell apart: equal, or equal but for a few letters outside
    ASCII standing where the other has an ASCII one (a look-alike of any script, listed in the
    table or not: `ꜱend_email` with a small-capital s). Two names in another script that
    differ are not alike: there one letter differs from another, as in any language."""
    if key == other:
        return True
    if len(key) != len(other):
        return False
    swapped = [(a, b) for a, b in zip(key, other, strict=True) if a != b]
    return len(swapped) <= max(1, len(key) // 4) and all(
        a.isascii() != b.isascii() for a, b in swapped
    )


def is_plain(name: str) -> bool:
    """Printable ASCII: such a name differs from another only in ways a reader can see."""
    return name.isascii() and name.isprintable()


def shown(name: str) -> str:
    """The name with every character outside printable ASCII written as an escape."""
    return name if is_plain(name) else name.encode("ascii", "backslashreplace").decode()


MAX_SCAN = 512  # same-length keys outside ASCII one name is compared with, one by one


class KeyIndex:
    """The fold keys of known tools, to find a look-alike of a name without comparing it with
    every other: equal keys by lookup, and `alike` only where a key has letters outside ASCII
    (two ASCII keys are alike only when equal), among keys of its length."""

    def __init__(self) -> None:
        self._exact: dict[str, list[str]] = {}
        self._by_len: dict[int, list[tuple[str, str]]] = {}  # every key
        self._odd_by_len: dict[int, list[tuple[str, str]]] = {}  # keys outside ASCII

    def add(self, name: str, keys: frozenset[str]) -> None:
        for key in keys:
            self._exact.setdefault(key, []).append(name)
            self._by_len.setdefault(len(key), []).append((key, name))
            if not key.isascii():
                self._odd_by_len.setdefault(len(key), []).append((key, name))

    def twin(self, name: str, keys: frozenset[str]) -> str | None:
        """Another tool whose key is alike one of `keys`, or None. Past MAX_SCAN candidates
        (a listing of hundreds of non-ASCII names of one length) the first other one is
        answered: such a tool is asked about, never approved unseen."""
        for key in keys:
            for other in self._exact.get(key, ()):
                if other != name:
                    return other
        for key in keys:
            pool = (self._odd_by_len if key.isascii() else self._by_len).get(len(key), [])
            if len(pool) > MAX_SCAN:
                return next((other for _k, other in pool if other != name), None)
            for other_key, other in pool:
                if other != name and alike(key, other_key):
                    return other
        return None
