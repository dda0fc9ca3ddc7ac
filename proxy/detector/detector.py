"""The detector: extraction, normalisation, rule matching and policy, behind four calls."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from proxy.detector.config import DetectorConfig
from proxy.detector.extract import Collector, collect_arguments, collect_result
from proxy.detector.inspection import Inspection, combine
from proxy.detector.model import ModelScore, shipped_model
from proxy.detector.normalize import Base, Prepared, base, finish, prepare
from proxy.detector.policy import Policy, Verdict, stricter
from proxy.detector.rules import Rule
from proxy.detector.scanner import CompiledRules, ScanResult, scan

if TYPE_CHECKING:  # the classifier pulls in asyncio and sqlite3; only load it when enabled
    from proxy.detector.classifier import Classifier, ClassifierAnswer

_MAX_REASON_RULES = 3
_ARGUMENT_CLASSES = frozenset({"shell", "path"})


class Detector:
    """Inspects tool results, tool-call arguments and raw text. Never raises on odd input."""

    def __init__(
        self,
        rules: list[Rule],
        policy: Policy,
        config: DetectorConfig | None = None,
        classifier: Classifier | None = None,
    ) -> None:
        config = config or DetectorConfig()
        self.rules = rules
        self.result_rules = [rule for rule in rules if "result" in rule.scope]
        self.argument_rules = [rule for rule in rules if "arguments" in rule.scope]
        self._compiled = {
            "s2c": CompiledRules(self.result_rules),
            "c2s": CompiledRules(self.argument_rules),
        }
        self.policy = policy
        self._layers: dict[str, str] = {}  # policy rule name -> its layer (first of a name)
        for rule in policy.rules:
            self._layers.setdefault(rule.name, rule.layer)
        self.enabled = config.enabled
        self.time_budget_ms = config.time_budget_ms or policy.time_budget_ms
        self.on_timeout: Verdict = config.on_timeout or policy.on_timeout
        self.classifier = classifier
        self.use_model = config.model
        # The last call's argument texts, prepared once: the engine scans each argument string
        # (scan_text) right after its argument rules ran (inspect_arguments) on the same text.
        self._arguments: dict[int, tuple[str, Base]] = {}

    # --- public API ---------------------------------------------------------------------

    def inspect_result(self, method: str, result: dict[str, Any]) -> Inspection:
        """Rules only: the `result` of tools/call, resources/read or prompts/get."""
        return self._guarded(
            lambda: self._rules_pass("s2c", method, collect_result(method, result), markup=True)[0]
        )

    def inspect_arguments(self, tool: str, arguments: dict[str, Any]) -> Inspection:
        """Shell and path payloads in the arguments of a tools/call to `tool`."""

        def run() -> Inspection:
            collected = collect_arguments(arguments)
            # One argument string: the joined text is that very string, which scan_text is
            # given next. Several: scan_text prepares each of them itself.
            keep = len(collected.texts) == 1
            self._arguments = {}
            return self._rules_pass("c2s", "tools/call", collected, markup=False, keep=keep)[0]

        return self._guarded(run)

    def scan_text(self, text: str) -> Inspection:
        """Raw text, scanned like a tool result (CLI, tool-description scanning, and the
        engine's scan of each argument string)."""

        def run() -> Inspection:
            collected = Collector()
            collected.strings(text)
            kept = self._arguments.get(id(text))
            found = kept[1] if kept is not None and kept[0] is text else None
            return self._rules_pass("s2c", None, collected, markup=True, found=found)[0]

        return self._guarded(run)

    async def inspect_result_async(self, method: str, result: dict[str, Any]) -> Inspection:
        """Rules, then the local classifier when it is enabled; same verdict logic."""
        started = time.perf_counter()
        try:
            inspection, prepared = self._rules_pass(
                "s2c", method, collect_result(method, result), markup=True
            )
            if self.classifier is None or prepared is None or inspection.verdict == "block":
                return inspection
            text = "\n".join(s.text for s in prepared.segments if s.kind != "lines" and s.text)
            if not text:
                return inspection
            answer = await self.classifier.classify(text, inspection.notes)
            if answer is not None:
                self._apply_classifier(inspection, answer, method)
            inspection.elapsed_ms = (time.perf_counter() - started) * 1000
            return inspection
        except Exception as exc:  # the proxy must get a verdict whatever happens
            return self._error(exc, started)

    def model_inputs(self, text: str) -> tuple[list[str], list[str]]:
        """What the learned layer reads from `text` (its flat views) and the rule classes
        that fired on it: the training script calls this so it learns from exactly what the
        proxy scores."""
        collected = Collector()
        collected.strings(text)
        # Without the readers of smuggled text: the model was trained before them, and its
        # file is rebuilt from exactly this (bench/train_detector.py --check).
        prepared = prepare("\n".join(collected.texts), markup=True, deadline=None,
                           readers=False)
        found = scan(prepared, self._compiled["s2c"], None)
        return model_views(prepared)[0], [rule.cls for rule in found.hits]

    # --- internals ----------------------------------------------------------------------

    def _guarded(self, run: Callable[[], Inspection]) -> Inspection:
        started = time.perf_counter()
        try:
            return run()
        except Exception as exc:  # the proxy must get a verdict whatever happens
            return self._error(exc, started)

    def _error(self, exc: Exception, started: float) -> Inspection:
        # Fail closed: an input that makes the scan raise is what an attacker would look for,
        # so it is withheld whatever the mode (a timeout, by contrast, follows `on_timeout`).
        return Inspection(
            verdict="block",
            score=0.0,
            reason=f"the detector failed on this text ({type(exc).__name__}); withheld to be safe",
            notes=[f"error:{type(exc).__name__}"],
            policy="detector_error",
            layer="error",
            elapsed_ms=(time.perf_counter() - started) * 1000,
        )

    def _rules_pass(
        self,
        direction: str,
        method: str | None,
        collected: Collector,
        *,
        markup: bool,
        keep: bool = False,
        found: Base | None = None,
    ) -> tuple[Inspection, Prepared | None]:
        """`found`: the text's markup-independent passes, already run for this frame; `keep`:
        keep them for the scan_text calls that follow on the same text."""
        started = time.perf_counter()
        notes = list(collected.notes)
        if not self.enabled:
            return Inspection(
                "pass", 0.0, notes=[*notes, "detector_disabled"], policy="disabled"
            ), None
        deadline = started + self.time_budget_ms / 1000
        text = "\n".join(collected.texts)  # one text: that very string, not a copy
        prepared, found_rules, model, timed_out = self._scan(
            direction, text, markup, keep, found, deadline
        )
        for note in prepared.notes:
            if note not in notes:
                notes.append(note)
        hits = found_rules.hits
        score = combine([rule.score for rule in hits]) if hits else 0.0  # combine([]) is 0.0
        verdict, policy_name = self.policy.decide(
            direction=direction, method=method, score=score, hits=hits,
            model_label=model.label if model is not None else None,
        )
        if timed_out:
            notes.append("timeout")
            if stricter(verdict, self.on_timeout) != verdict:
                verdict, policy_name = self.on_timeout, "time_budget"
        inspection = Inspection(
            verdict=verdict,
            score=score,
            rules=[rule.id for rule in hits] if hits else [],
            classes=list(dict.fromkeys([rule.cls for rule in hits])) if hits else [],
            notes=notes,
            timed_out=timed_out,
            policy=policy_name,
            excerpts=dict(found_rules.excerpts),
            model=model.as_dict() if model is not None else None,
            layer=self._layer(policy_name, verdict, timed_out),
        )
        inspection.reason = self._reason(inspection)
        inspection.elapsed_ms = (time.perf_counter() - started) * 1000
        return inspection, prepared

    def _scan(
        self,
        direction: str,
        text: str,
        markup: bool,
        keep: bool,
        found: Base | None,
        deadline: float,
    ) -> tuple[Prepared, ScanResult, ModelScore | None, bool]:
        """Prepare `text`, match the direction's rules and score it with the learned layer;
        whether the deadline stopped any of it."""
        if found is None:
            found = base(text, deadline=deadline)
            if keep:
                self._arguments = {id(text): (text, found)}
        prepared = finish(found, markup=markup, deadline=deadline)
        found_rules = scan(prepared, self._compiled[direction], deadline)
        timed_out = prepared.timed_out or found_rules.timed_out
        model: ModelScore | None = None
        if self.use_model and direction == "s2c":
            # Past the deadline only the text itself is scored (model.score), as the rules
            # read it whole: the views made from it are what the budget cuts.
            texts, text_view = model_views(prepared)
            model = shipped_model().model.score(
                texts, [rule.cls for rule in found_rules.hits],
                deadline=time.monotonic() + (deadline - time.perf_counter()),
                base=text_view,  # the others are mostly copies of it: scored by their changes
            )
            # Only a scan the deadline cut short is a timeout: one that read everything, late
            # (a loaded machine, a collector's pause), has its whole verdict.
            timed_out = timed_out or not model.complete
        return prepared, found_rules, model, timed_out

    def _apply_classifier(
        self, inspection: Inspection, answer: ClassifierAnswer, method: str | None
    ) -> None:
        inspection.classifier = {
            "label": answer.label,
            "score": answer.score,
            "model": answer.model,
            "cached": answer.cached,
        }
        rule_scores = [rule.score for rule in self.result_rules if rule.id in inspection.rules]
        inspection.score = combine([*rule_scores, answer.score])
        hits = [rule for rule in self.result_rules if rule.id in inspection.rules]
        verdict, policy_name = self.policy.decide(
            direction="s2c",
            method=method,
            score=inspection.score,
            hits=hits,
            classifier_label=answer.label,
            model_label=inspection.model["label"] if inspection.model else None,
        )
        if inspection.timed_out:
            verdict = stricter(verdict, self.on_timeout)
        if verdict != inspection.verdict:
            inspection.verdict, inspection.policy = verdict, policy_name
            inspection.layer = self._layer(policy_name, verdict, inspection.timed_out)
        inspection.reason = self._reason(inspection)

    def _layer(self, policy_name: str, verdict: Verdict, timed_out: bool) -> str:
        """Which layer decided: rules, model, classifier, time_budget, or none (a pass)."""
        if policy_name == "time_budget":
            return "time_budget"
        layer = self._layers.get(policy_name)
        if layer is not None:
            return layer
        return "none" if verdict == "pass" else "rules"

    def _reason(self, inspection: Inspection) -> str:
        parts: list[str] = []
        if inspection.rules:
            shown = ", ".join(inspection.rules[:_MAX_REASON_RULES])
            more = len(inspection.rules) - _MAX_REASON_RULES
            if set(inspection.classes) <= _ARGUMENT_CLASSES:
                label = "dangerous argument"
            elif inspection.verdict != "pass":
                label = "prompt injection"
            else:
                label = "weak signs of injection"
            parts.append(f"{label}: {shown}" + (f" (+{more} more)" if more > 0 else ""))
        if inspection.model is not None and inspection.model["label"] != "benign":
            parts.append(f"model: {inspection.model['label']} ({inspection.model['score']:.2f})")
        if inspection.classifier is not None and inspection.classifier["label"] == "injection":
            parts.append(f"classifier: injection ({inspection.classifier['score']:.2f})")
        if inspection.timed_out:
            parts.append(f"scan stopped at its {self.time_budget_ms:g} ms budget (the text "
                         "itself was read whole, not every view decoded from it)")
        return "; ".join(parts)


def model_views(prepared: Prepared) -> tuple[list[str], int | None]:
    """The flat views the learned layer scores (the text, what was hidden or encoded in it,
    comments and attributes; not the line-preserving copy of the text), and which of them is
    the text itself, the one the others are mostly copies of."""
    flat = [segment for segment in prepared.segments
            if segment.kind != "lines" and segment.scored]
    text_view = next((i for i, segment in enumerate(flat) if segment.kind == "text"), None)
    return [segment.text for segment in flat], text_view
