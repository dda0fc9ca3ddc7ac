"""Checks that go through other parts of Gatewatch: packs and policy, classifier, client configs.

Each part is imported when its check runs, so a part that fails to import is reported by the
runner as that check's failure instead of stopping doctor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from proxy import paths
from proxy.doctor.report import CheckResult, Status

if TYPE_CHECKING:
    from proxy.clients.entries import ServerEntry

CLASSIFIER_TIMEOUT_S = 3.0


def check_rule_packs() -> list[CheckResult]:
    from proxy.detector import DetectorConfig, PackError, load_detector

    try:
        config = DetectorConfig.load()
        loaded = load_detector(config)
    except PackError as exc:
        return [CheckResult("rule-packs", Status.FAIL, str(exc), "fix the line named above")]
    summary = f"{len(loaded.rules)} injection rules valid, detector mode {config.mode}"
    if not config.enabled:
        return [CheckResult("rule-packs", Status.WARN, f"{summary}, but the detector is off",
                            "tool results are not scanned: set `enabled: true` in detector.yaml")]
    return [CheckResult("rule-packs", Status.OK, summary)]


def check_policy() -> list[CheckResult]:
    from proxy.engine import PolicyError, load_policy
    from proxy.engine.packs import load_packs

    results = []
    names: set[str] | None = None
    try:
        names = {p.name for p in load_packs()}
        results.append(CheckResult("server-packs", Status.OK, f"{len(names)} server packs valid"))
    except PolicyError as exc:
        results.append(
            CheckResult("server-packs", Status.FAIL, str(exc), "fix the pack line named above")
        )
    user = paths.user_policy_path()
    if not user.exists():
        results.append(CheckResult("policy", Status.OK, f"no user policy ({user})"))
        return results
    try:
        doc = load_policy(user)
    except PolicyError as exc:
        results.append(CheckResult("policy", Status.FAIL, str(exc), "fix the line named above"))
        return results
    # A proxy for that server would refuse to start: say so now, not at the next client start.
    unknown = sorted(
        f"{server} -> {rules.pack}" for server, rules in doc.servers.items()
        if names is not None and rules.pack is not None and rules.pack not in names
    )
    if unknown:
        results.append(
            CheckResult("policy", Status.FAIL, f"{user}: unknown packs: {', '.join(unknown)}",
                        "name a pack that `gatewatch packs` lists, or remove `pack:`")
        )
    else:
        results.append(CheckResult("policy", Status.OK, f"user policy {user} valid"))
    return results


def check_settings() -> list[CheckResult]:
    from proxy.settings import SettingsError, load_settings

    try:
        load_settings()
    except SettingsError as exc:
        return [CheckResult("settings", Status.FAIL, str(exc), "fix the line named above")]
    path = paths.settings_path()
    where = f"{path} valid" if path.exists() else "defaults (no settings.yaml)"
    return [CheckResult("settings", Status.OK, where)]


def check_native() -> list[CheckResult]:
    from proxy.detector import native

    if native.wanted() and native.load() is None:
        return [CheckResult("native", Status.WARN, native.status(),
                            "install a C compiler and the Python headers, then reinstall")]
    return [CheckResult("native", Status.OK, native.status())]


def check_classifier() -> list[CheckResult]:
    from proxy.detector import DetectorConfig, PackError

    try:
        classifier = DetectorConfig.load().classifier
    except PackError:
        return []  # reported by the rule-packs check
    if not classifier.enabled:
        return [CheckResult("classifier", Status.OK, "local classifier disabled (rules only)")]
    url = str(classifier.url).rstrip("/")
    problem = probe_url(f"{url}/api/tags")
    if problem:
        return [
            CheckResult(
                "classifier", Status.WARN, f"local classifier at {url} unreachable: {problem}",
                "start it (e.g. `ollama serve`) or disable it in detector.yaml; "
                "until then results are scanned by the rules only",
            )
        ]
    models = _model_names(f"{url}/api/tags")
    if models is not None and classifier.model not in models:
        return [
            CheckResult(
                "classifier", Status.WARN,
                f"local classifier at {url} has no model {classifier.model!r}",
                f"ollama pull {classifier.model}",
            )
        ]
    return [CheckResult("classifier", Status.OK,
                        f"local classifier at {url} reachable, model {classifier.model}")]


def _model_names(url: str) -> set[str] | None:
    """Model names an Ollama-style /api/tags lists, or None when the answer is not that."""
    import json
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=CLASSIFIER_TIMEOUT_S) as answer:
            data = json.loads(answer.read(1_000_000))
        return {str(m.get("name")) for m in data["models"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def probe_url(url: str, timeout_s: float = CLASSIFIER_TIMEOUT_S) -> str | None:
    """None when something answers HTTP at url (any status), else why not."""
    import urllib.error
    import urllib.request

    if not url.startswith(("http://", "https://")):
        return f"not an http(s) URL: {url!r}"
    try:
        with urllib.request.urlopen(url, timeout=timeout_s):
            return None
    except urllib.error.HTTPError:
        return None  # it answered: reachable, even if this path is not the API's root
    except (urllib.error.URLError, OSError) as exc:
        return str(getattr(exc, "reason", exc))


def check_clients() -> list[CheckResult]:
    """One line per client config with servers; a FAIL for each wrapped server that cannot start."""
    from proxy.clients import discovery, health

    results = []
    for config in discovery.discover():
        label = f"{config.client.label} {config.path}"
        loaded = discovery.load(config)
        if loaded.error:
            results.append(
                CheckResult("clients", Status.WARN, f"{label}: unreadable: {loaded.error}",
                            "fix the file; Gatewatch cannot wrap or unwrap it until then")
            )
            continue
        stdio = [e for e in loaded.entries if e.command is not None and not e.skip_reason]
        if not stdio:
            continue
        wrapped = [e for e in stdio if e.wrapped]
        results.append(
            CheckResult("clients", Status.OK,
                        f"{label}: {len(wrapped)} of {len(stdio)} servers wrapped")
        )
        for entry in wrapped:
            problem = health.check_entry(config, entry).problem or _upstream_problem(entry)
            if problem:
                results.append(
                    CheckResult("clients", Status.FAIL, f"{label}: {entry.name}: {problem}",
                                "run `gatewatch wrap --all` again, or fix the command")
                )
            elif not health.passes_gatewatch_env(loaded, entry):
                results.append(
                    CheckResult("clients", Status.WARN,
                                f"{label}: {entry.name}: wrapped without passing GATEWATCH_HOME "
                                "and XDG_* through, so the client's minimal environment may "
                                "lead it to another data directory or keyring",
                                f"run `gatewatch wrap {config.client.id}` again")
                )
    if not results:
        results.append(CheckResult("clients", Status.OK, "no MCP client configs with servers"))
    return results


def _upstream_problem(entry: ServerEntry) -> str | None:
    """Why the server inside a wrapped entry cannot be launched, or None."""
    import shutil
    from pathlib import Path

    if entry.original is None:
        return None
    command, _ = entry.original
    if Path(command).is_absolute():
        return None if Path(command).is_file() else f"server command {command} does not exist"
    if shutil.which(command) is None:
        return f"server command {command!r} is not on PATH"
    return None
