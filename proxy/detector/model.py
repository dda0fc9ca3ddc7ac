"""The learned layer: a linear model over word n-grams, scored on the best window of a text.

An injection is a few sentences inside a longer document, so a text is not scored as one bag
of words (a long benign page would dilute it): every run of `window` consecutive tokens is
scored and the best one counts. The score of a run is the sum of the weights of its tokens and
of its bigrams (plus the weights of the rule classes that fired on the whole text), so all runs
are scored in one linear pass with prefix sums. No numpy: the scorer and the tokens of ASCII
text run in a small C extension where it is built (proxy/detector/_native.c, exact to the bit),
in Python otherwise.

The model file (packs/models/injection-linear.json) is written by bench/train_detector.py,
shipped in the wheel and read lazily on the first scan; nothing is downloaded.
"""

from __future__ import annotations

import functools
import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proxy.detector import native
from proxy.detector.lexicon import CLASS_OF, MAX_REPAIRED, repair, repair_tables
from proxy.detector.re2spans import compiled, spans
from proxy.detector.re2spans import found as re2_found
from proxy.detector.scoring import Run, Scorer, Views, positions
from proxy.errors import InvalidValue

MODEL_FILE = "injection-linear.json"
FORMAT = 1

_DIGITS = re.compile(r"\d+")
# Words of folded text; digit runs are one token ("0") so counts and ids generalise.
_TOKEN = re.compile(r"[^\W_]{1,40}")
_MAX_TOKEN = 40
# ASCII text: [^\W_] is [A-Za-z0-9] and \d is [0-9]. Every other character becomes a space and
# every digit a "0", so str.split() gives the words and a run of zeros is a run of digits.
_ASCII_WORDS = {c: "0" if chr(c).isdigit() else " " for c in range(128)
                if not chr(c).isalpha()}
_ZERO_RUN = re.compile("00+")
_REPAIR_FROM = 6  # lexicon.repair leaves shorter tokens alone
_CLEAN_CAP = 1 << 15  # some 3 MB at most; the words most texts share are in it early
_FEW_FIXES = 2  # up to this many distinct repaired words, their places are looked up
# Tokens that repair() leaves as they are (a memo of that pure function, like its own
# lru_cache): a text whose tokens are all in it is checked by one C-speed superset test.
_clean: set[str] = set()


@functools.cache
def _long_word() -> Any:
    import re2

    return re2.compile(b"[A-Za-z0-9]{%d,}" % (_MAX_TOKEN + 1))


def ascii_words(folded: str) -> list[str]:
    """The words of ASCII text as the regexes of the other path cut them (before repair), from
    C-speed str methods (the C extension's ascii_tokens does it in one pass)."""
    spaced = folded.translate(_ASCII_WORDS)
    if "00" in spaced:
        spaced = _ZERO_RUN.sub("0", spaced)
    long = list(spans(_long_word(), spaced.encode("ascii"))) if len(spaced) > _MAX_TOKEN else []
    if long:  # words over _MAX_TOKEN characters: their pieces, as the regex cuts them
        pieces: list[str] = []
        at = 0
        for start, end in long:
            pieces.append(spaced[at:start])
            pieces += [spaced[i : min(i + _MAX_TOKEN, end)] + " "
                       for i in range(start, end, _MAX_TOKEN)]
            at = end
        pieces.append(spaced[at:])
        spaced = "".join(pieces)
    return spaced.split()


@functools.cache
def _c_repair(module: Any) -> Any:
    """lexicon.repair as the extension's Repairer (the same function of ASCII words, called
    without running Python code), or repair itself where the tables do not fit it."""
    try:
        return module.Repairer(*repair_tables())
    except (TypeError, ValueError):
        return repair


def tokens(folded: str) -> list[str]:
    """The model's tokens of case-folded, normalised text (the detector's flat view), with
    one-letter misspellings of the class words repaired."""
    if folded.isascii():
        module = native.load()
        if module is not None:  # the words and their repairs in one C pass (same tokens)
            found = module.ascii_tokens(folded, _c_repair(module), _REPAIR_FROM, MAX_REPAIRED)
            if found is not None:  # None only for text that is not ASCII
                return found
        toks = ascii_words(folded)
    else:
        toks = _TOKEN.findall(_DIGITS.sub("0", folded))
    fixes = misspellings(toks)
    if not fixes:
        return toks
    if len(fixes) > _FEW_FIXES:
        return list(map(fixes.get, toks, toks))
    # A word or two to repair ("filter" in minified JavaScript): their places found by
    # list.index (C speed), all before any is changed (a repair may spell another key).
    where = [(i, fixed) for tok, fixed in fixes.items() for i in positions(toks, tok)]
    for i, fixed in where:
        toks[i] = fixed
    return toks


def misspellings(toks: list[str]) -> dict[str, str]:
    """{token: the class word it misspells by one letter} for those of `toks` that do."""
    if _clean.issuperset(toks):
        return {}
    fixes: dict[str, str] = {}
    for tok in set(toks).difference(_clean):
        fixed = repair(tok) if len(tok) >= _REPAIR_FROM else tok
        if fixed != tok:
            fixes[tok] = fixed
        elif len(_clean) < _CLEAN_CAP:
            _clean.add(tok)
    return fixes


# The longest view whose misspellings are read back for the rules (the scanner's window): an
# inbox listing of 35 KB must not hide a misspelt order from them. About 4 ms at 256 KB; a
# megabyte's 12-19 ms per view the 250 ms budget has no room for (the learned layer repairs
# its own features at any length).
REPAIRED_MAX_CHARS = 262_144
# The words of the override phrase ("ignore previous instructions"), the ones the rules read
# repaired: the other classes' neighbours are words of their own ("securely" is one letter
# from "secretly"), and rules on those classes would read documentation as covert orders.
REPAIRED_CLASSES = frozenset({"IGNORE", "PRIOR", "INSTR"})


def repaired(flat: str) -> str | None:
    """`flat` (a folded view) with each one-letter misspelling of a word of REPAIRED_CLASSES
    written as the word ("ignore your previous iunstructions" as "... instructions") and each
    such word glued to another read apart ("zzzignore", "x1ignore your ...", "ignoreyour
    previous ...", "instructions2"), for the rules, which match words as spelled and start and
    end at word boundaries; None when it has none or is longer than REPAIRED_MAX_CHARS."""
    if len(flat) > REPAIRED_MAX_CHARS:
        return None
    toks = ascii_words(flat) if flat.isascii() else _TOKEN.findall(flat)
    fixes = {
        tok: fixed
        for tok, fixed in misspellings(toks).items()
        # a word and its inflection ("command", "commands") are not a misspelling
        if CLASS_OF[fixed] in REPAIRED_CLASSES and not fixed.startswith(tok)
        and not tok.startswith(fixed)
    }
    glued = _glued_words(toks) if re2_found(compiled(_GLUE_GATE), flat.encode()) else set()
    if not fixes and not glued:
        return None
    if len(fixes) > _FEW_ALTERNATIVES:
        # one pattern of thousands of alternatives tries each at every place (a quarter of a
        # megabyte of distinct misspellings took 1.4 s); every word looked up costs 20 ms
        flat = _WORD.sub(lambda m: fixes.get(m.group(), m.group()), flat)
    elif fixes:
        word = re.compile(
            r"(?<![^\W_])(?:" + "|".join(map(re.escape, sorted(fixes))) + r")(?![^\W_])"
        )
        flat = word.sub(lambda m: fixes[m.group()], flat)
    if glued:
        flat = _apart(tuple(sorted(glued))).sub(_read_apart, flat)
    return flat


# Past this many misspelt words in a view, each word of it is looked up instead (see repaired).
_FEW_ALTERNATIVES = 32
_WORD = re.compile(r"[^\W_]+")


# The override words a glued letter hides from a rule's word boundary: the words of the
# override phrase, five letters or more (shorter ones, "skip", "omit", end ordinary words).
_GLUE_WORDS = sorted(
    (w for w in CLASS_OF if CLASS_OF[w] in REPAIRED_CLASSES and len(w) >= 5),
    key=lambda w: (-len(w), w),
)


def _of(cls: str) -> str:
    return "|".join(w for w in _GLUE_WORDS if CLASS_OF[w] == cls)


# What an override verb is followed by ("ignoreyour previous instructions"), in the
# lexicon's languages: the PRIOR words, and determiners.
_FOLLOWERS = "|".join(sorted(
    {w for w in CLASS_OF if CLASS_OF[w] == "PRIOR"} | {
        "everything", "every", "your", "all", "any", "the", "my",  # en
        "toutes", "tous", "vos", "tes", "les",  # fr
        "alle", "deine", "ihre", "die",  # de
        "todas", "todos", "tus", "sus", "las", "los",  # es, pt
        "tutte", "tutti", "tue", "le",  # it
        "suas", "tuas", "as", "os",  # pt
    },
    key=lambda w: (-len(w), w),
))
# A token (letters and digits) that glues an override word to something: a verb at its end
# after anything ("zzz", "external", "x0"); any override word before digits alone; a verb
# before a word that follows one; "previous" before "instructions".
_GLUED_TOKEN = re.compile(
    rf"(?:.(?P<end>{_of('IGNORE')})|^(?P<digits>{'|'.join(_GLUE_WORDS)})[0-9]+"
    rf"|^(?P<verb>{_of('IGNORE')})(?:{_FOLLOWERS})|^(?P<prior>{_of('PRIOR')})(?:{_of('INSTR')}))$"
)
# Whether a text can hold any of those tokens at all, in one RE2 pass over its bytes (a
# superset: the tokens are then looked at one by one). Text with many distinct tokens, base64
# or minified code, would otherwise be matched token by token.
_GLUE_GATE = (
    rf"[\pL\pN](?:{_of('IGNORE')})(?:[^\pL\pN]|$)|(?:{'|'.join(_GLUE_WORDS)})[0-9]"
    rf"|(?:{_of('IGNORE')})(?:{_FOLLOWERS})(?:[^\pL\pN]|$)"
    rf"|(?:{_of('PRIOR')})(?:{_of('INSTR')})(?:[^\pL\pN]|$)"
)
# What follows each kind of word, in the text (the `end` kind: the word is what follows).
_AFTER = {"digits": "[0-9]+", "verb": _FOLLOWERS, "prior": _of("INSTR")}
# Tokens with no glued override word (a memo, like `_clean` for misspellings).
_unglued: set[str] = set()


def _glued_words(toks: list[str]) -> set[tuple[str, str]]:
    """The override words `toks` glue to something, as (kind, word) pairs (the groups of
    _GLUED_TOKEN)."""
    if _unglued.issuperset(toks):
        return set()
    found: set[tuple[str, str]] = set()
    for tok in set(toks).difference(_unglued):
        match = _GLUED_TOKEN.search(tok) if len(tok) > 5 else None
        if match is None or match.lastgroup is None:
            if len(_unglued) < _CLEAN_CAP:
                _unglued.add(tok)
            continue
        found.add((match.lastgroup, match.group(match.lastgroup)))
    return found


@functools.lru_cache(maxsize=256)
def _apart(glued: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    """Where a space reads `glued`'s words apart in a text: an empty match before a word glued
    at its front, or the word (a named group) a space goes after."""
    places = []
    for kind in ("end", "digits", "verb", "prior"):
        words = "|".join(word for where, word in glued if where == kind)
        if not words:
            continue
        if kind == "end":
            places.append(rf"(?<=[^\W_])(?=(?:{words})(?![^\W_]))")
        else:
            places.append(rf"(?<![^\W_])(?P<{kind}>{words})(?=(?:{_AFTER[kind]})(?![^\W_]))")
    return re.compile("|".join(places))


def _read_apart(match: re.Match[str]) -> str:
    return " " if match.lastgroup is None else match.group(match.lastgroup) + " "


def position_features(toks: list[str], i: int) -> list[str]:
    """Feature keys the token at `i` contributes: itself, the bigram it ends, its word class
    and the class pairs it ends (with the word before and the one before that)."""
    out = ["u:" + toks[i]]
    if i > 0:
        out.append("b:" + toks[i - 1] + " " + toks[i])
    cls = CLASS_OF.get(toks[i])
    if cls is not None:
        out.append("c:" + cls)
        for back in (1, 2):
            prev = CLASS_OF.get(toks[i - back]) if i >= back else None
            if prev is not None:
                out.append(f"k:{prev}>{cls}")
    return out


def window_features(toks: list[str], start: int, end: int) -> list[str]:
    """Feature keys of tokens[start:end], each once, as the scorer counts them."""
    return list(dict.fromkeys(f for i in range(start, end) for f in position_features(toks, i)))


@dataclass(frozen=True)
class ModelScore:
    probability: float
    label: str  # injection | suspicious | benign
    excerpt: str  # the best window, for the audit
    complete: bool = True  # False: the deadline stopped it before every text was scored

    def as_dict(self) -> dict[str, Any]:
        return {"score": round(self.probability, 4), "label": self.label,
                "excerpt": self.excerpt}


class LinearModel:
    def __init__(self, data: dict[str, Any]) -> None:
        if data.get("format") != FORMAT:
            raise InvalidValue(f"unknown model format {data.get('format')!r}")
        self.version: str = data["version"]
        self.window: int = int(data["window"])
        self.bias: float = float(data["bias"])
        self.block_threshold: float = float(data["block_threshold"])
        self.warn_threshold: float = float(data["warn_threshold"])
        self.weights: dict[str, float] = data["weights"]
        self.unigrams = {k[2:]: v for k, v in self.weights.items() if k.startswith("u:")}
        self.bigrams = {
            tuple(k[2:].split(" ", 1)): v for k, v in self.weights.items() if k.startswith("b:")
        }
        self.classes = {k[2:]: v for k, v in self.weights.items() if k.startswith("c:")}
        self.class_pairs = {
            tuple(k[2:].split(">", 1)): v for k, v in self.weights.items() if k.startswith("k:")
        }
        self._scorer = Scorer(self, tokens)

    def best_window(self, toks: list[str]) -> tuple[float, int, int]:
        """(highest window sum, index where that window starts, its length in tokens): windows
        of half and the whole `window` tokens are tried.

        A feature counts once per window: a key seen again within `window` tokens adds
        nothing, so a page that repeats one strong word ("forward", "send") is not scored as
        if it said many things.
        """
        return self._scorer.full(toks).best

    def score(
        self,
        texts: list[str],
        rule_classes: list[str],
        *,
        deadline: float | None = None,
        base: int | None = None,
    ) -> ModelScore:
        """Score folded texts (the flat views of a result); the best window of any counts.
        Past `deadline` (a time.monotonic() instant) the texts left are not scored, except
        `base`, the text itself, which is scored whatever the time (padding a result past the
        budget must not hide an order only the learned layer reads).

        `base` (an index into `texts`) is scored first and in full; every other text is
        scored as what it changes in a text scored before it when it is close to one (a
        respelled copy, the same comment found in two views), with the same result to the
        last bit as scoring it alone. The best window of the first text in order wins ties.
        """
        best, excerpt, complete = -math.inf, "", False
        if len(texts) == 1:  # what Views does with one text: its tokens, scored whole
            if base == 0:
                deadline = None
            if deadline is None or time.monotonic() <= deadline:
                toks = self._scorer.tokenize(texts[0])
                if deadline is None or time.monotonic() <= deadline:
                    value, at, length = self._scorer.best(toks)
                    complete = True
                    if value > best:
                        best, excerpt = value, " ".join(toks[at : at + length])
        else:
            best, excerpt, complete = self._views_best(texts, deadline, base)
        if best == -math.inf:
            best = 0.0
        logit = self.bias + best + sum(self.weights.get("r:" + c, 0.0) for c in set(rule_classes))
        probability = 1.0 / (1.0 + math.exp(-max(min(logit, 60.0), -60.0)))
        label = (
            "injection" if probability >= self.block_threshold
            else "suspicious" if probability >= self.warn_threshold
            else "benign"
        )
        return ModelScore(probability, label, excerpt[:200], complete)

    def _views_best(
        self, texts: list[str], deadline: float | None, base: int | None
    ) -> tuple[float, str, bool]:
        """The best window of any of several texts and its words (-inf where none was
        scored), each text's run from the Views of this result; whether every text was."""
        order = list(range(len(texts)))
        if base is not None and 0 < base < len(texts):
            order.insert(0, order.pop(base))
        found: dict[int, Run] = {}
        views = Views(self._scorer, derive=len(texts) > 1)
        for index in order:
            until = None if index == base else deadline  # the text itself: whatever the time
            if until is not None and time.monotonic() > until:
                break
            run = views.score(texts[index], until)
            if run is None:
                break  # tokenising a megabyte can use up the budget: not the window sums too
            found[index] = run
        best, excerpt = -math.inf, ""
        for index in range(len(texts)):
            run = found.get(index)
            if run is None:
                continue
            value, at, length = run.best
            if value > best:
                best, excerpt = value, " ".join(run.toks[at : at + length])
        return best, excerpt, len(found) == len(texts)


def model_path() -> Path:
    from proxy.paths import packs_dir

    return packs_dir() / "models" / MODEL_FILE


@dataclass(frozen=True)
class Loaded:
    model: LinearModel
    load_ms: float


@functools.cache
def shipped_model() -> Loaded:
    """The shipped model, read once per process on first use (its load time is kept)."""
    started = time.perf_counter()
    model = read_model(model_path())
    return Loaded(model, (time.perf_counter() - started) * 1000)


def read_model(path: Path) -> LinearModel:
    return LinearModel(json.loads(path.read_text(encoding="utf-8")))
