"""The learned layer's window scorer, and how a derived view is scored at the cost of its changes.

`Scorer.full` is the scorer (model.LinearModel.best_window): each position's contribution is
the weight of its token, of the bigram it ends and of its word-class keys, where a positive
key counts once per `window` tokens (a chain per key: counted when `window` tokens have passed
since the key last counted); the best sum over windows of half and the whole `window` wins.

A respelled copy of a megabyte differs from the text in a few words, and scoring it whole
costs as much as the text. `Scorer.derive` scores it from the text's run instead, exactly:
- its tokens are the text's with the changed words re-read (textdiff.token_splice);
- a position's contribution changes only where its keys change (the changed tokens and the
  two after them: bigrams and class pairs look back two tokens) or where the chain of one of
  its keys decides differently; the keys at changed positions ("dirty" keys, and around a
  change that shifts positions, the keys seen within `window` tokens before it) have their
  chains recomputed over their occurrences in the view (in a word-for-word copy only from
  each change until the chain agrees with the text's again), every other key decides as it
  did in the text; only the positions where something differs are summed again, in the scorer's own
  order of additions, so every contribution is the same float;
- the prefix sums and window sums are taken over the whole view again (C-speed maps): a
  window's float sum depends on everything before it.
The chains assume the scorer's keys are independent; `last` in the scorer is one dict for
token strings, bigram tuples, class names and class-pair tuples, so a model file whose
unigram keys include a class name (or bigram keys a class pair) shares a chain between the
two. Such a model is scored in full for every view (`Scorer.independent`), as is one with a
non-finite weight or a unigram weight of -0.0 (the mapped bigram sums add 0.0 everywhere).
A view that is not ASCII, or changes more than one token in _MAX_CHANGED_SHARE, is scored whole.

`full` and `short` of a model with independent keys, and the window sums, run in C where the
extension is built (proxy/detector/_native.c, loaded by native.py): the same additions in the
same order, so the same floats; this module is its fallback and its reference.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proxy.detector import native
from proxy.detector.lexicon import CLASS_OF
from proxy.detector.textdiff import (
    TokenIndex,
    TokenRegion,
    char_regions,
    token_splice,
    word_mask,
)

if TYPE_CHECKING:
    from proxy.detector import _native
    from proxy.detector.model import LinearModel

_ZEROS = itertools.repeat(0.0)  # endless: map() stops at the shorter input
MIN_DERIVED_CHARS = 32768  # shorter views cost less to score whole than to compare (measured)
_MAPPED_BIGRAMS = 4096  # from this many tokens on, bigrams are added by one map
_SHORT = 128  # up to this many tokens, one Python pass costs less than full()'s maps (measured)
_SPLICED_PIECES = 64  # with more pieces than this, the view's raw weights are mapped anew
# A changed word costs some 20 times what a token costs scored whole: derive only when at most
# one token in _MAX_CHANGED_SHARE changed.
_MAX_CHANGED_SHARE = 40
_LENGTH_SLACK = 8  # a base is looked for among runs within 1/8 of the view's length

Best = tuple[float, int, int]
# Skipped unigram, bigram and class-key occurrences of the view, and the occurrences walked.
Chains = tuple[set[int], set[int], set[tuple[int, int]], set[int], set[int],
               set[tuple[int, int]]]


@dataclass
class Run:
    """One scored token list: what `derive` needs to score a close copy of it."""

    toks: list[str]
    best: Best
    unigram: list[float] = field(default_factory=list)  # raw weight per position
    pairs: list[float] = field(default_factory=list)  # raw weight of the bigram at i, i+1
    classes: list[str | None] = field(default_factory=list)
    contrib: list[float] = field(default_factory=list)
    # Positive keys whose chain did not count them: unigram and bigram positions, (position,
    # slot) of class keys (slot 0 the class, 1 and 2 the pair with the class 1 and 2 back).
    skipped_u: set[int] = field(default_factory=set)
    skipped_b: set[int] = field(default_factory=set)
    skipped_c: set[tuple[int, int]] = field(default_factory=set)
    text: str | None = None  # set on runs that other views may be derived from
    index: TokenIndex | None = None
    derivable: bool = True  # False: scored by Scorer.short, without what `derive` needs


class Scorer:
    def __init__(self, model: LinearModel, tokenize: Callable[[str], list[str]]) -> None:
        self.span = model.window
        self.uni = model.unigrams
        self.bi = model.bigrams
        self.cls_w = model.classes
        self.pair_w = model.class_pairs
        self.tokenize = tokenize
        finite = all(math.isfinite(float(w)) for w in model.weights.values())
        shared = not self.uni.keys().isdisjoint(self.cls_w) or not self.bi.keys().isdisjoint(
            self.pair_w
        )
        negative_zero = any(w == 0.0 and math.copysign(1.0, w) < 0.0 for w in self.uni.values())
        self.independent = finite and not shared and not negative_zero
        # The C scorer (None: not built, switched off, or a weight that is not a float).
        self.native: _native.Model | None = None
        module = native.load() if self.independent else None
        if module is not None:
            try:
                self.native = module.Model(self.uni, self.bi, CLASS_OF, self.cls_w,
                                           self.pair_w, self.span)
            except (TypeError, ValueError):
                self.native = None
        self._windows_c = module.windows if self.native is not None and module else None

    def windows(self, contrib: list[float]) -> Best:
        """windows(contrib, self.span), in C where it can be."""
        if self._windows_c is not None:
            found = self._windows_c(contrib, self.span)
            if found is not None:
                return found
        return windows(contrib, self.span)

    def _native_full(self, toks: list[str], keep: bool) -> Run:
        """`full` by the C scorer: `short` up to _SHORT tokens (a run no view derives from),
        otherwise `full` with what `derive` needs when `keep`."""
        keep = keep and len(toks) > _SHORT
        assert self.native is not None
        found: Any = self.native.score(toks, keep)
        best = self._native_best(found)
        if not keep:
            return Run(toks, best, contrib=found[1], derivable=False)
        _best, contrib, unigram, pairs, classes, skipped_u, skipped_b, skipped_c = found
        return Run(toks, best, unigram, pairs, classes, contrib, skipped_u, skipped_b, skipped_c)

    def best(self, toks: list[str]) -> Best:
        """`full(toks, keep=False).best`, without the Run: a text scored alone (one view)."""
        if toks and self.native is not None:
            return self._native_best(self.native.score(toks, False))
        return self.full(toks, False).best

    def _native_best(self, found: Any) -> Best:
        """The best window of what the C scorer returned (its own, or from the contributions
        where it left that to Python)."""
        return found[0] if found[0] is not None else windows(found[1], self.span)

    # --- the scorer ---------------------------------------------------------------------

    def full(self, toks: list[str], keep: bool = True) -> Run:
        """The run of `toks`. `keep=False`: it will not be a base for derived views, so what
        `derive` needs of a base (raw weights, classes, skipped keys) is not kept."""
        if not toks:
            return Run(toks, (0.0, 0, 0))
        if self.native is not None:
            return self._native_full(toks, keep)
        if self.independent and len(toks) <= _SHORT:
            return self.short(toks)
        span = self.span
        uni, bi, cls_w, pair_w = self.uni, self.bi, self.cls_w, self.pair_w
        last: dict[Any, int] = {}
        seen = last.get
        # map() over dict.get runs at C speed; only the hits are walked in Python.
        unigram = list(map(uni.get, toks, itertools.repeat(0.0)))
        contrib = unigram.copy() if keep else unigram
        n = len(toks)
        skipped_u: set[int] = set()
        # Positive evidence counts once per window; negative evidence is kept as is. The
        # positions to walk are picked by compress() over C-speed maps, not a Python loop.
        for i in list(itertools.compress(range(n), map(operator.gt, contrib, _ZEROS))):
            tok = toks[i]
            if i - seen(tok, -span) < span:
                contrib[i] = 0.0
                if keep:
                    skipped_u.add(i)
            else:
                last[tok] = i
        pairs: list[float] = list(map(bi.get, itertools.pairwise(toks), itertools.repeat(0.0)))
        skipped_b: set[int] = set()
        if self.independent and n >= _MAPPED_BIGRAMS:
            # Negative bigrams always count and most bigrams are negative: only the positive
            # ones walk their chains, and every position gets its one bigram in a C-speed
            # map (adding 0.0 where it has none or it did not count: exact, as no unigram
            # weight is -0.0).
            terms = pairs.copy()
            for i in list(itertools.compress(range(n - 1), map(operator.gt, pairs, _ZEROS))):
                pair = (toks[i], toks[i + 1])
                if i + 1 - seen(pair, -span) >= span:
                    last[pair] = i + 1
                else:
                    terms[i] = 0.0
                    if keep:
                        skipped_b.add(i + 1)
            contrib[1:] = map(operator.add, itertools.islice(contrib, 1, None), terms)
        else:
            for i in list(itertools.compress(range(n - 1), pairs)):
                weight = pairs[i]
                pair = (toks[i], toks[i + 1])
                if weight < 0.0 or i + 1 - seen(pair, -span) >= span:
                    contrib[i + 1] += weight
                    if weight > 0.0:
                        last[pair] = i + 1
                elif keep:
                    skipped_b.add(i + 1)
        classes = list(map(CLASS_OF.get, toks))
        skipped_c: set[tuple[int, int]] = set()
        # Per class position its keys in order (the class, then the pairs with the class one
        # and two back), each added to the position's sum as it is met.
        for i in list(itertools.compress(range(n), classes)):
            cls = classes[i]
            assert cls is not None
            found = cls_w.get(cls)
            if found is not None:
                if found < 0.0 or i - seen(cls, -span) >= span:
                    contrib[i] += found
                    if found > 0.0:
                        last[cls] = i
                elif keep:
                    skipped_c.add((i, 0))
            for back in (1, 2) if i >= 2 else (1,) if i else ():
                prev = classes[i - back]
                if prev is None:
                    continue
                key = (prev, cls)
                found = pair_w.get(key)
                if found is None:
                    continue
                if found < 0.0 or i - seen(key, -span) >= span:
                    contrib[i] += found
                    if found > 0.0:
                        last[key] = i
                elif keep:
                    skipped_c.add((i, back))
        if not keep:
            return Run(toks, windows(contrib, span), contrib=contrib, derivable=False)
        return Run(toks, windows(contrib, span), unigram, pairs, classes, contrib,
                   skipped_u, skipped_b, skipped_c)

    def short(self, toks: list[str]) -> Run:
        """`full` for a short token list of a model whose keys are independent: one pass
        over the positions, with the same additions in the same order at each (its
        contribution, then its bigram's, then its class keys'), where the maps and
        compress() passes of `full` cost more than they save. Each key's chain sees its own
        occurrences in the same order either way, as no two kinds of key share a key."""
        span = self.span
        uni, bi, cls_w, pair_w = self.uni, self.bi, self.cls_w, self.pair_w
        last: dict[Any, int] = {}
        seen = last.get
        contrib: list[float] = []
        prev_tok = ""
        back1: str | None = None
        back2: str | None = None
        for i, tok in enumerate(toks):
            c = uni.get(tok, 0.0)
            if c > 0.0:
                if i - seen(tok, -span) < span:
                    c = 0.0
                else:
                    last[tok] = i
            if i:
                pair = (prev_tok, tok)
                weight = bi.get(pair, 0.0)
                if weight < 0.0:
                    c += weight
                elif weight > 0.0 and i - seen(pair, -span) >= span:
                    c += weight
                    last[pair] = i
            cls = CLASS_OF.get(tok)
            if cls is not None:
                found = cls_w.get(cls)
                if found is not None and (found < 0.0 or i - seen(cls, -span) >= span):
                    c += found
                    if found > 0.0:
                        last[cls] = i
                for prev in (back1, back2):
                    if prev is None:
                        continue
                    key = (prev, cls)
                    found = pair_w.get(key)
                    if found is not None and (found < 0.0 or i - seen(key, -span) >= span):
                        c += found
                        if found > 0.0:
                            last[key] = i
            contrib.append(c)
            prev_tok, back2, back1 = tok, back1, cls
        return Run(toks, windows(contrib, span), contrib=contrib, derivable=False)

    # --- a view scored from a close one -------------------------------------------------

    def derive(self, base: Run, toks: list[str], changes: list[TokenRegion]) -> Run:
        """The run of `toks`, which are base.toks with base.toks[a0:a1] replaced by
        toks[b0:b1] for each (a0, a1, b0, b1) of `changes` (in order, not overlapping)."""
        n = len(toks)
        if not toks or not base.toks:
            return self.full(toks)
        span, cls_w, pair_w = self.span, self.cls_w, self.pair_w
        pieces = _pieces(changes, n)
        copies = [(p, q, x) for p, q, x in pieces if x is not None]
        shifted = any(a1 - a0 != b1 - b0 for a0, a1, b0, b1 in changes)
        if not shifted:  # word for word: the base's lists with the changed places redone
            contrib = base.contrib.copy()
            unigram, classes, pairs = self._patched(base, toks, changes)
        else:
            contrib = []
            for p, q, x in pieces:
                if x is None:
                    contrib += itertools.repeat(0.0, q - p)  # new tokens: summed below
                else:
                    contrib += base.contrib[x : x + q - p]
            if len(pieces) > _SPLICED_PIECES:  # many changes: the maps over the whole view
                unigram = list(map(self.uni.get, toks, itertools.repeat(0.0)))
                classes = list(map(CLASS_OF.get, toks))
                pairs = list(map(self.bi.get, itertools.pairwise(toks), itertools.repeat(0.0)))
            else:
                unigram, classes, pairs = self._spliced(base, toks, pieces)
        touched: set[int] = set()  # positions of the view whose keys may differ
        base_touched: set[int] = set()  # positions of the base whose keys may be gone
        for p, q, x in copies:
            if p or x:  # after a change: the first two look back at it
                touched.update(range(p, min(p + 2, q)))
                base_touched.update(range(x, min(x + 2, x + q - p)))
        for a0, a1, b0, b1 in changes:
            touched.update(range(b0, b1))
            base_touched.update(range(a0, a1))
            if a1 - a0 != b1 - b0:  # positions after it shift: chains that reach across
                base_touched.update(range(max(0, a0 - span), a0))
                touched.update(range(max(0, b0 - span), b0))
        view = Run(toks, (0.0, 0, 0), unigram, pairs, classes, contrib)
        dirty_u: set[str] = set()
        dirty_b: set[tuple[str, str]] = set()
        dirty_c: set[str | tuple[str, str]] = set()
        for run, positions in ((base, base_touched), (view, touched)):
            for i in positions:
                self._keys(run, i, dirty_u, dirty_b, dirty_c)
        if shifted:
            chains = self._chains(view, dirty_u, dirty_b, dirty_c)
        else:
            chains = self._chains_near(view, base, dirty_u, dirty_b, dirty_c, sorted(touched))
        skip_u, skip_b, skip_c, walked_u, walked_b, walked_c = chains
        # Where a dirty key's chain decided otherwise than in the base, the sum is redone.
        redo = set(touched)
        starts = [p for p, _q, _x in copies]
        offsets = [x - p for p, _q, x in copies if x is not None]

        def in_base(i: int) -> int:
            return i + offsets[bisect.bisect_right(starts, i) - 1] if shifted else i

        if shifted:
            for i in walked_u:
                if (i in skip_u) != (in_base(i) in base.skipped_u):
                    redo.add(i)
            for i in walked_b:
                if (i in skip_b) != (in_base(i) in base.skipped_b):
                    redo.add(i)
            for i, slot in walked_c:
                if ((i, slot) in skip_c) != ((in_base(i), slot) in base.skipped_c):
                    redo.add(i)
        else:  # one position in both: set operations
            for mine, theirs, where in ((skip_u, base.skipped_u, walked_u),
                                        (skip_b, base.skipped_b, walked_b)):
                redo |= (mine & where) ^ (theirs & where)
            redo.update(i for i, _slot in (skip_c & walked_c) ^ (base.skipped_c & walked_c))
        # A key's occurrence decides as in the view's chain where that chain was walked (every
        # occurrence at a touched position is), elsewhere as it did in the base.
        for i in redo:
            j = -1 if i in touched else in_base(i)  # every key at a touched position is dirty
            c = unigram[i]
            if c > 0.0 and (i in skip_u if i in walked_u else j in base.skipped_u):
                c = 0.0
            if i:
                weight = pairs[i - 1]
                if weight < 0.0 or (weight > 0.0 and not (
                    i in skip_b if i in walked_b else j in base.skipped_b
                )):
                    c += weight
            cls = classes[i]
            if cls is not None:
                for slot, key in _class_keys(classes, i, cls):
                    found_w = cls_w.get(key) if isinstance(key, str) else pair_w.get(key)
                    if found_w is None:
                        continue
                    if found_w > 0.0 and (
                        (i, slot) in skip_c if (i, slot) in walked_c
                        else (j, slot) in base.skipped_c
                    ):
                        continue
                    c += found_w
            contrib[i] = c
        view.best = self.windows(contrib)
        return view

    def _patched(
        self, base: Run, toks: list[str], changes: list[TokenRegion]
    ) -> tuple[list[float], list[str | None], list[float]]:
        """The raw unigram weights, classes and bigram weights of a view whose changes each
        replace as many tokens as they remove: the base's, redone where tokens changed."""
        unigram, classes, pairs = base.unigram.copy(), base.classes.copy(), base.pairs.copy()
        uni, bi, n = self.uni, self.bi, len(toks)
        for _a0, _a1, b0, b1 in changes:
            for i in range(b0, b1):
                tok = toks[i]
                unigram[i] = uni.get(tok, 0.0)
                classes[i] = CLASS_OF.get(tok)
            for i in range(max(0, b0 - 1), min(b1, n - 1)):
                pairs[i] = bi.get((toks[i], toks[i + 1]), 0.0)
        return unigram, classes, pairs

    def _spliced(
        self, base: Run, toks: list[str], pieces: list[tuple[int, int, int | None]]
    ) -> tuple[list[float], list[str | None], list[float]]:
        """The raw unigram weights, classes and bigram weights of the view, copied from the
        base where its tokens are and looked up for the new ones."""
        n = len(toks)
        unigram: list[float] = []
        classes: list[str | None] = []
        pairs: list[float] = []
        for p, q, x in pieces:
            if x is None:
                new = toks[p:q]
                unigram += map(self.uni.get, new, itertools.repeat(0.0))
                classes += map(CLASS_OF.get, new)
                pairs += map(self.bi.get, itertools.pairwise(new), itertools.repeat(0.0))
            else:
                unigram += base.unigram[x : x + q - p]
                classes += base.classes[x : x + q - p]
                pairs += base.pairs[x : x + q - p - 1]
            if q < n:  # the bigram across the edge of two pieces
                pairs.append(self.bi.get((toks[q - 1], toks[q]), 0.0))
        return unigram, classes, pairs

    def _keys(
        self,
        run: Run,
        i: int,
        dirty_u: set[str],
        dirty_b: set[tuple[str, str]],
        dirty_c: set[str | tuple[str, str]],
    ) -> None:
        """Add the positive keys at position i of `run` to the dirty sets."""
        toks = run.toks
        if run.unigram[i] > 0.0:
            dirty_u.add(toks[i])
        if i and run.pairs[i - 1] > 0.0:
            dirty_b.add((toks[i - 1], toks[i]))
        cls = run.classes[i]
        if cls is not None:
            for _slot, key in _class_keys(run.classes, i, cls):
                found = self.cls_w.get(key) if isinstance(key, str) else self.pair_w.get(key)
                if found is not None and found > 0.0:
                    dirty_c.add(key)

    def _chains(
        self,
        view: Run,
        dirty_u: set[str],
        dirty_b: set[tuple[str, str]],
        dirty_c: set[str | tuple[str, str]],
    ) -> Chains:
        """The chains of the dirty keys over the whole view: which of their occurrences are
        not counted (unigram, bigram and class keys), and where they all occur."""
        span = self.span
        toks, n = view.toks, len(view.toks)
        skip_u: set[int] = set()
        skip_b: set[int] = set()
        skip_c: set[tuple[int, int]] = set()
        at_u: list[int] = []
        at_b: list[int] = []
        at_c: list[tuple[int, int]] = []
        if dirty_u or dirty_b:
            wanted = dirty_u | {b for _a, b in dirty_b}
            last_u: dict[str, int] = {}
            last_b: dict[tuple[str, str], int] = {}
            for i in list(itertools.compress(range(n), map(wanted.__contains__, toks))):
                tok = toks[i]
                if tok in dirty_u:
                    at_u.append(i)
                    if i - last_u.get(tok, -span) < span:
                        skip_u.add(i)
                    else:
                        last_u[tok] = i
                if i and dirty_b:
                    pair = (toks[i - 1], tok)
                    if pair in dirty_b:
                        at_b.append(i)
                        if i - last_b.get(pair, -span) < span:
                            skip_b.add(i)
                        else:
                            last_b[pair] = i
        if dirty_c:
            classes = view.classes
            ending = {key if isinstance(key, str) else key[1] for key in dirty_c}
            last_c: dict[str | tuple[str, str], int] = {}
            for i in list(itertools.compress(range(n), map(ending.__contains__, classes))):
                cls = classes[i]
                assert cls is not None
                for slot, key in _class_keys(classes, i, cls):
                    if key not in dirty_c:
                        continue
                    at_c.append((i, slot))
                    if i - last_c.get(key, -span) < span:
                        skip_c.add((i, slot))
                    else:
                        last_c[key] = i
        return skip_u, skip_b, skip_c, set(at_u), set(at_b), set(at_c)

    def _chains_near(
        self,
        view: Run,
        base: Run,
        dirty_u: set[str],
        dirty_b: set[tuple[str, str]],
        dirty_c: set[str | tuple[str, str]],
        touched: list[int],
    ) -> Chains:
        """_chains for a view whose positions are the base's: each dirty key's chain walked
        only from a change until it agrees with the base's again (see _walk)."""
        toks = view.toks
        out: Chains = (set(), set(), set(), set(), set(), set())
        # Each key's positions by list.index, a C-speed search from one to the next.
        at_tok = {tok: positions(toks, tok) for tok in dirty_u | {b for _a, b in dirty_b}}
        for tok in dirty_u:
            self._walk(at_tok[tok], None, base.skipped_u, out[0], out[3], touched)
        for a, b in dirty_b:
            where = [i for i in at_tok[b] if i and toks[i - 1] == a]
            self._walk(where, None, base.skipped_b, out[1], out[4], touched)
        if dirty_c:
            classes = view.classes
            by_key: dict[str | tuple[str, str], tuple[list[int], list[tuple[int, int]]]] = {}
            ending = {key if isinstance(key, str) else key[1] for key in dirty_c}
            at_class = sorted(i for cls in ending for i in positions(classes, cls))
            for i in at_class:
                cls = classes[i]
                assert cls is not None
                for slot, key in _class_keys(classes, i, cls):
                    if key in dirty_c:
                        where_c, idents = by_key.setdefault(key, ([], []))
                        where_c.append(i)
                        idents.append((i, slot))
            for where_c, idents in by_key.values():
                self._walk(where_c, idents, base.skipped_c, out[2], out[5], touched)
        return out

    def _walk(
        self,
        pos: list[int],
        idents: list[Any] | None,
        base_skipped: set[Any],
        skipped: set[Any],
        walked: set[Any],
        touched: list[int],
    ) -> None:
        """One key's chain over its occurrences (positions, and their ids in the skipped
        sets when not the positions) in a view whose positions are the base's, walked from
        the first occurrence at or after a touched position. Before it the view's chain is
        the base's. Past a gap of `window` positions that holds no occurrence and no touched
        position, both chains count the next occurrence, so they agree again up to the next
        touched position, where the walk resumes."""
        span = self.span
        ids = pos if idents is None else idents
        m = len(pos)
        k = bisect.bisect_left(pos, touched[0]) if touched else m
        while k < m:
            start = pos[k]
            last = -span  # the last occurrence counted before `start` (expired if far)
            b = k - 1
            while b >= 0 and start - pos[b] < span:
                ident = ids[b]
                if not (ident in skipped if ident in walked else ident in base_skipped):
                    last = pos[b]
                    break
                b -= 1
            while k < m:
                p, ident = pos[k], ids[k]
                walked.add(ident)
                if p - last >= span:
                    last = p
                else:
                    skipped.add(ident)
                k += 1
                if k < m and pos[k] - p >= span:
                    t = bisect.bisect_right(touched, p)
                    if t == len(touched):
                        return  # no change ahead: the chains agree to the end
                    if touched[t] > pos[k]:
                        k = bisect.bisect_left(pos, touched[t], k)
                        break


def positions(items: list[Any], item: Any) -> list[int]:
    """Where `item` occurs in `items`, in order."""
    out: list[int] = []
    at = -1
    find = items.index
    try:
        while True:
            at = find(item, at + 1)
            out.append(at)
    except ValueError:
        return out


def _class_keys(
    classes: list[str | None], i: int, cls: str
) -> list[tuple[int, str | tuple[str, str]]]:
    keys: list[tuple[int, str | tuple[str, str]]] = [(0, cls)]
    for back in (1, 2):
        prev = classes[i - back] if i >= back else None
        if prev is not None:
            keys.append((back, (prev, cls)))
    return keys


def _pieces(changes: list[TokenRegion], n: int) -> list[tuple[int, int, int | None]]:
    """The view as pieces in order: (start, end, where the copied tokens start in the base,
    or None for new tokens); empty pieces left out."""
    out: list[tuple[int, int, int | None]] = []
    prev_a = prev_b = 0
    for _a0, a1, b0, b1 in changes:
        if b0 > prev_b:
            out.append((prev_b, b0, prev_a))
        if b1 > b0:
            out.append((b0, b1, None))
        prev_a, prev_b = a1, b1
    if n > prev_b:
        out.append((prev_b, n, prev_a))
    return out


def windows(contrib: list[float], span: int) -> Best:
    """The best sum over windows of span // 2 and span positions: (sum, start, length)."""
    if len(contrib) <= span:
        return math.fsum(contrib), 0, len(contrib)
    prefix = [0.0, *itertools.accumulate(contrib)]
    best, at, length = -math.inf, 0, span
    # Shorter windows too: a one-sentence injection inside a listing is not diluted by
    # the fields around it.
    for size in (span // 2, span):
        top = max(map(operator.sub, itertools.islice(prefix, size, None), prefix))
        if top > best:
            sums = map(operator.sub, itertools.islice(prefix, size, None), prefix)
            best, at, length = top, operator.indexOf(sums, top), size
    return best, at, length


class Views:
    """The views of one result being scored: a text seen before is not scored again, one
    close to a text scored in full is derived from it."""

    def __init__(self, scorer: Scorer, derive: bool = True) -> None:
        """`derive=False`: no view will be derived from another (one text to score)."""
        self.scorer = scorer
        self.derive = derive
        self.by_text: dict[str, Run] = {}
        self.bases: list[Run] = []

    def score(self, text: str, deadline: float | None) -> Run | None:
        """The run of `text`; None when the deadline passed after tokenising it."""
        run = self.by_text.get(text)
        if run is None:
            run = self._derived(text)
        if run is None:
            toks = self.scorer.tokenize(text)
            if deadline is not None and time.monotonic() > deadline:
                return None
            # A run is kept as a base only where a view can be derived from it: the model's
            # keys independent, and the text long enough (see _derived: a base is within an
            # eighth of the length of a view of MIN_DERIVED_CHARS or more).
            keep = self.derive and self.scorer.independent and (
                len(text) * _LENGTH_SLACK >= (_LENGTH_SLACK - 1) * MIN_DERIVED_CHARS
            )
            run = self.scorer.full(toks, keep)
            if run.derivable:
                run.text = text
                self.bases.append(run)
        self.by_text[text] = run
        return run

    def _derived(self, text: str) -> Run | None:
        if not self.scorer.independent or len(text) < MIN_DERIVED_CHARS:
            return None
        close = [b for b in self.bases
                 if abs(len(b.text or "") - len(text)) * _LENGTH_SLACK <= len(text)]
        if not close:
            return None
        base = min(close, key=lambda b: abs(len(b.text or "") - len(text)))
        assert base.text is not None
        limit = len(base.toks) // _MAX_CHANGED_SHARE
        regions = char_regions(base.text, text, limit)
        if regions is None:
            return None
        if base.index is None:
            mask = word_mask(base.text)
            if mask is None:
                return None
            base.index = TokenIndex(base.text, mask, self.scorer.tokenize)
        spliced = token_splice(base.text, base.toks, base.index, text, regions,
                               self.scorer.tokenize)
        if spliced is None:
            return None
        toks, changes = spliced
        if sum(a1 - a0 + b1 - b0 for a0, a1, b0, b1 in changes) > limit:
            return None
        return self.scorer.derive(base, toks, changes)
