"""Where a derived view differs from the text it was derived from, found at C speed.

A respelled or decoded copy of a megabyte usually differs from the text in a few words; the
learned layer re-reads only those (see model.py). `char_regions` finds the differing stretches:
for two strings of one length by XOR-ing their bytes (one big-integer operation and a regex
over the result), otherwise by comparing growing slices and re-anchoring after each change.
Any list it returns is a valid edit script: outside its regions the two texts are equal,
character for character, at the offsets it gives; a poor alignment only makes regions larger.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

Region = tuple[int, int, int, int]  # s[s0:s1] was replaced by t[t0:t1]

_NONZERO = re.compile(rb"[^\x00]+")
_ANCHOR = 32  # characters that must agree to re-align after a change
_MAX_SKIP = 1 << 13  # a change wider than this is not looked for: the caller scores in full
_FIRST_STEP = 64


def char_regions(s: str, t: str, max_regions: int) -> list[Region] | None:
    """The stretches where `t` differs from `s`, in order; None when there are more than
    `max_regions` of them or the texts could not be re-aligned."""
    if len(s) == len(t):
        return _same_length(s, t, max_regions)
    return _shifted(s, t, max_regions)


def _same_length(s: str, t: str, max_regions: int) -> list[Region] | None:
    if s.isascii() and t.isascii():
        bs, bt, width = s.encode("ascii"), t.encode("ascii"), 1
    else:
        bs = s.encode("utf-32-le", "surrogatepass")
        bt = t.encode("utf-32-le", "surrogatepass")
        width = 4
    diff = (int.from_bytes(bs, "little") ^ int.from_bytes(bt, "little")).to_bytes(
        len(bs), "little"
    )
    out: list[Region] = []
    for match in _NONZERO.finditer(diff):
        start, end = match.start() // width, -(-match.end() // width)
        if out and out[-1][1] >= start:  # two byte runs inside one UTF-32 character
            start = out.pop()[0]
        out.append((start, end, start, end))
        if len(out) > max_regions:
            return None
    return out


def _shifted(s: str, t: str, max_regions: int) -> list[Region] | None:
    out: list[Region] = []
    i = j = 0
    ns, nt = len(s), len(t)
    while True:
        k = common_prefix(s, i, t, j)
        i += k
        j += k
        if i == ns or j == nt:
            if i < ns or j < nt:
                out.append((i, ns, j, nt))
            return out if len(out) <= max_regions else None
        found = _realign(s, i, t, j)
        if found is None:
            return None
        out.append((i, found[0], j, found[1]))
        if len(out) > max_regions:
            return None
        i, j = found


def _realign(s: str, i: int, t: str, j: int) -> tuple[int, int] | None:
    """A pair of positions past (i, j) where the texts agree again for _ANCHOR characters:
    the nearest anchor taken from either text and found in the other."""
    skip = 1
    while skip <= _MAX_SKIP:
        reach = 2 * skip + _ANCHOR
        anchor = s[i + skip : i + skip + _ANCHOR]
        if len(anchor) == _ANCHOR:
            q = t.find(anchor, j, j + reach + _ANCHOR)
            if q >= 0:
                return i + skip, q
        anchor = t[j + skip : j + skip + _ANCHOR]
        if len(anchor) == _ANCHOR:
            p = s.find(anchor, i, i + reach + _ANCHOR)
            if p >= 0:
                return p, j + skip
        if i + skip + _ANCHOR > len(s) and j + skip + _ANCHOR > len(t):
            return len(s), len(t)  # no room for an anchor: the rest differs
        skip *= 2
    return None


def common_prefix(s: str, i: int, t: str, j: int) -> int:
    """Length of the common prefix of s[i:] and t[j:]: growing slices, then halving."""
    n = min(len(s) - i, len(t) - j)
    k, step = 0, _FIRST_STEP
    while k < n:
        m = min(step, n - k)
        if s[i + k : i + k + m] != t[j + k : j + k + m]:
            lo, hi = k, k + m  # s[i:i+lo] == t[j:j+lo]; they differ before i + hi
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if s[i + lo : i + mid] == t[j + lo : j + mid]:
                    lo = mid
                else:
                    hi = mid
            return lo
        k += m
        step = min(step * 2, 1 << 16)
    return n


# Word characters of the model's tokens ([^\W_] on ASCII) as b"a", everything else as b" ".
_MASK_TABLE = bytes(
    0x61 if chr(c).isascii() and chr(c).isalnum() else 0x20 for c in range(256)
)
_LONG_RUN = b"a" * 41  # longer than one token (see model._TOKEN)


def long_runs(mask: bytes) -> list[tuple[int, int]]:
    """(start, end) of each run of `mask` (word_mask's: only b"a" and b" ") longer than one
    token, as re.finditer(rb"a{41,}") gives them; by bytes.find, some 40 times faster than
    the regex engine's walk over 64 KB."""
    out = []
    at = mask.find(_LONG_RUN)
    while at >= 0:  # the first 41 of a run: the run's start (the search starts past a run)
        end = mask.find(b" ", at)
        end = len(mask) if end < 0 else end
        out.append((at, end))
        at = mask.find(_LONG_RUN, end)
    return out


def word_mask(text: str) -> bytes | None:
    """One byte per character of ASCII `text`: b"a" where a token can be, else b" "."""
    if not text.isascii():
        return None
    return text.encode("ascii").translate(_MASK_TABLE)


class TokenIndex:
    """Counts the tokens of stretches of a text without tokenising them again."""

    def __init__(self, text: str, mask: bytes, tokenize: Callable[[str], list[str]]) -> None:
        self.mask = mask
        # A run of word characters is one token unless it is longer than a token can be.
        self.long_starts: list[int] = []
        self.extra_before: list[int] = [0]  # extra tokens of the long runs before each
        for start, end in long_runs(mask):
            self.long_starts.append(start)
            extra = len(tokenize(text[start:end])) - 1
            self.extra_before.append(self.extra_before[-1] + extra)

    def count(self, start: int, end: int) -> int:
        """Tokens in text[start:end]; both ends are word boundaries."""
        if start >= end:
            return 0
        runs = self.mask.count(b" a", start, end) + (self.mask[start] == 0x61)
        if self.long_starts:
            runs += (self.extra_before[bisect.bisect_left(self.long_starts, end)]
                     - self.extra_before[bisect.bisect_left(self.long_starts, start)])
        return runs


TokenRegion = tuple[int, int, int, int]  # s_toks[a0:a1] was replaced by t_toks[b0:b1]


def token_splice(
    s: str,
    s_toks: list[str],
    index: TokenIndex,
    t: str,
    regions: list[Region],
    tokenize: Callable[[str], list[str]],
) -> tuple[list[str], list[TokenRegion]] | None:
    """The tokens of `t` (== tokenize(t)) built from those of `s` by re-reading only the words
    in `regions` (char_regions(s, t)), and where they differ; None when `t` is not ASCII."""
    t_mask = word_mask(t)
    if t_mask is None:
        return None
    s_mask = index.mask
    words: list[Region] = []  # the regions widened to whole runs of word characters
    for s0, s1, t0, t1 in regions:
        s0, t0 = s_mask.rfind(b" ", 0, s0) + 1, t_mask.rfind(b" ", 0, t0) + 1
        s1, t1 = s_mask.find(b" ", s1), t_mask.find(b" ", t1)
        s1 = len(s) if s1 < 0 else s1
        t1 = len(t) if t1 < 0 else t1
        if words and (s0 <= words[-1][1] or t0 <= words[-1][3]):
            p0, p1, q0, q1 = words.pop()
            s0, s1, t0, t1 = p0, max(p1, s1), q0, max(q1, t1)
        words.append((s0, s1, t0, t1))
    # Every changed stretch of t tokenised in one call (a space between them ends a token),
    # then cut by the number of runs of word characters in each.
    new_all = tokenize(" ".join(t[t0:t1] for _s0, _s1, t0, t1 in words))
    counts = [t_mask.count(b" a", t0, t1) + (t_mask[t0] == 0x61) if t0 < t1 else 0
              for _s0, _s1, t0, t1 in words]
    exact = sum(counts) == len(new_all)  # else a run longer than a token: one at a time
    out: list[str] = []
    changes: list[TokenRegion] = []
    at = pos = 0  # the token of s that starts at or after s[pos]
    copied = shift = taken = 0  # tokens of s handled so far; len(out) - copied; of new_all
    for (s0, s1, t0, t1), count in zip(words, counts, strict=True):
        start = at + index.count(pos, s0)
        pos, at = s1, start + index.count(s0, s1)
        if exact:
            new = new_all[taken : taken + count]
            taken += count
        else:
            new = tokenize(t[t0:t1])
        if s_toks[start:at] == new:
            continue
        out += s_toks[copied:start]
        out += new
        changes.append((start, at, start + shift, start + shift + len(new)))
        shift += len(new) - (at - start)
        copied = at
    out += s_toks[copied:]
    return out, changes
