"""What a scan found and what it means: the value the proxy audits and acts on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from proxy.detector.policy import Verdict


@dataclass
class Inspection:
    verdict: Verdict
    score: float  # 0..1, combined evidence of every rule hit (and the classifier, if asked)
    rules: list[str] = field(default_factory=list)  # rule ids that fired
    classes: list[str] = field(default_factory=list)  # their classes, de-duplicated
    reason: str = ""  # short, for the user and the blocked result's text
    notes: list[str] = field(default_factory=list)  # skipped:*, hidden:*, decoded:*, timeout
    elapsed_ms: float = 0.0
    timed_out: bool = False
    policy: str = ""  # the policy rule that decided (events.contract)
    excerpts: dict[str, str] = field(default_factory=dict)  # rule id -> matched text (<= 80 chars)
    classifier: dict[str, Any] | None = None  # label, score, model, cached
    model: dict[str, Any] | None = None  # the learned layer: score, label, excerpt
    layer: str = "none"  # which layer decided: rules | model | classifier | time_budget | none

    def detail(self) -> dict[str, Any]:
        """JSON-ready summary for the audit row's `detail` column."""
        out: dict[str, Any] = {
            "verdict": self.verdict,
            "score": round(self.score, 3),
            "rules": self.rules,
            "classes": self.classes,
            "policy": self.policy,
            "notes": self.notes,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "timed_out": self.timed_out,
            "layer": self.layer,
        }
        if self.model is not None:
            out["model"] = self.model
        if self.excerpts:
            out["excerpts"] = self.excerpts
        if self.classifier is not None:
            out["classifier"] = self.classifier
        return out


def combine(scores: list[float]) -> float:
    """Noisy-OR: independent pieces of evidence add up without ever passing 1."""
    remaining = 1.0
    for score in scores:
        remaining *= 1.0 - min(max(score, 0.0), 1.0)
    return 1.0 - remaining
