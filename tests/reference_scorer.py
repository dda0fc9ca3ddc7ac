"""The learned layer's scorer as it was before views were derived (main at c47672b), kept
verbatim as the reference the differential tests and bench/detector_bench.py compare against:
every text scored whole, one after the other."""

from __future__ import annotations

import itertools
import math
import operator
import re
import time
from typing import Any

from proxy.detector.lexicon import CLASS_OF, repair
from proxy.detector.model import LinearModel, ModelScore

_ZEROS = itertools.repeat(0.0)
_DIGITS = re.compile(r"\d+")
_TOKEN = re.compile(r"[^\W_]{1,40}")


def tokens(folded: str) -> list[str]:
    """model.tokens as it was (main at a374a24): two regex passes over every text."""
    toks = _TOKEN.findall(_DIGITS.sub("0", folded))
    fixes = {t: r for t in set(toks) if len(t) >= 6 and (r := repair(t)) != t}
    return list(map(fixes.get, toks, toks)) if fixes else toks


class ReferenceModel:
    """best_window and score of the old LinearModel, over a model's weights."""

    def __init__(self, model: LinearModel) -> None:
        self.window = model.window
        self.bias = model.bias
        self.block_threshold = model.block_threshold
        self.warn_threshold = model.warn_threshold
        self.weights = model.weights
        self.unigrams = model.unigrams
        self.bigrams = model.bigrams
        self.classes = model.classes
        self.class_pairs = model.class_pairs

    def contributions(self, toks: list[str]) -> list[float]:
        """best_window's per-position contributions (its code up to the window sums)."""
        if not toks:
            return []
        span = self.window
        uni, bi, cls_w, pair_w = self.unigrams, self.bigrams, self.classes, self.class_pairs
        last: dict[Any, int] = {}
        seen = last.get
        # map() over dict.get runs at C speed; only the hits are walked in Python.
        contrib = list(map(uni.get, toks, itertools.repeat(0.0)))
        n = len(toks)
        # Positive evidence counts once per window; negative evidence is kept as is. The
        # positions to walk are picked by compress() over C-speed maps, not a Python loop.
        for i in list(itertools.compress(range(n), map(operator.gt, contrib, _ZEROS))):
            tok = toks[i]
            if i - seen(tok, -span) < span:
                contrib[i] = 0.0
            else:
                last[tok] = i
        pairs: list[float] = list(map(bi.get, itertools.pairwise(toks), itertools.repeat(0.0)))
        for i in list(itertools.compress(range(n - 1), pairs)):
            weight = pairs[i]
            pair = (toks[i], toks[i + 1])
            if weight < 0.0 or i + 1 - seen(pair, -span) >= span:
                contrib[i + 1] += weight
                if weight > 0.0:
                    last[pair] = i + 1
        classes = list(map(CLASS_OF.get, toks))
        for i in list(itertools.compress(range(n), classes)):
            cls = classes[i]
            assert cls is not None
            keys: list[str | tuple[str, str]] = [cls]
            for back in (1, 2):
                prev = classes[i - back] if i >= back else None
                if prev is not None:
                    keys.append((prev, cls))
            for key in keys:
                found = cls_w.get(key) if isinstance(key, str) else pair_w.get(key)
                if found is not None and (found < 0.0 or i - seen(key, -span) >= span):
                    contrib[i] += found
                    if found > 0.0:
                        last[key] = i
        return contrib

    def best_window(self, toks: list[str]) -> tuple[float, int, int]:
        """(highest window sum, index where that window starts, its length in tokens): windows
        of half and the whole `window` tokens are tried.

        A feature counts once per window: a key seen again within `window` tokens adds
        nothing, so a page that repeats one strong word ("forward", "send") is not scored as
        if it said many things.
        """
        if not toks:
            return 0.0, 0, 0
        span = self.window
        contrib = self.contributions(toks)
        if len(contrib) <= span:
            return math.fsum(contrib), 0, len(contrib)
        prefix = [0.0, *itertools.accumulate(contrib)]
        best, at, length = -math.inf, 0, span
        # Shorter windows too: a one-sentence injection inside a listing is not diluted by
        # the fields around it.
        for size in (span // 2, span):
            sums = list(map(operator.sub, prefix[size:], prefix))
            top = max(sums)
            if top > best:
                best, at, length = top, sums.index(top), size
        return best, at, length

    def score(
        self, texts: list[str], rule_classes: list[str], *, deadline: float | None = None
    ) -> ModelScore:
        """Score folded texts (the flat views of a result); the best window of any counts.
        Past `deadline` (a time.monotonic() instant) the texts left are not scored."""
        best, excerpt, scored = -math.inf, "", 0
        for text in texts:
            if deadline is not None and time.monotonic() > deadline:
                break
            toks = tokens(text)
            if deadline is not None and time.monotonic() > deadline:
                break  # tokenising a megabyte can use up the budget: not the window sums too
            value, at, length = self.best_window(toks)
            scored += 1
            if value > best:
                best, excerpt = value, " ".join(toks[at : at + length])
        if best == -math.inf:
            best = 0.0
        logit = self.bias + best + sum(self.weights.get("r:" + c, 0.0) for c in set(rule_classes))
        probability = 1.0 / (1.0 + math.exp(-max(min(logit, 60.0), -60.0)))
        label = (
            "injection" if probability >= self.block_threshold
            else "suspicious" if probability >= self.warn_threshold
            else "benign"
        )
        return ModelScore(probability, label, excerpt[:200], scored == len(texts))
