"""Detector settings: code defaults, overridden by the user's <config_dir>/detector.yaml.

# detector.yaml (every key optional)
enabled: true
mode: paranoid                 # default | paranoid (sections of the detector policy)
time_budget_ms: 100            # overrides the mode's budget
on_timeout: block              # warn | block
disabled_rules: [exfiltration.markdown_image_query]
model: true                    # the learned layer on tool results (false: rules only)
rule_packs: [~/my-rules/]      # extra pack files or directories, loaded after the built-in
policy:                        # policy rules tried before the mode's own (first match wins)
  - {name: block_my_tool, when: {rules_any: ["my.*"]}, verdict: block}
classifier:
  enabled: true
  url: http://127.0.0.1:11434
  model: qwen2.5:3b
  api: chat                    # chat (/api/chat) | generate (/api/generate)
  timeout_ms: 1000
  breaker_threshold: 3
  breaker_cooldown_s: 60
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from proxy.detector.errors import PackError
from proxy.detector.policy import MODES, PolicyRule, parse_policy_rule
from proxy.yaml_lines import LineDict, read_yaml

Mode = Literal["default", "paranoid"]


@dataclass(frozen=True)
class ClassifierConfig:
    enabled: bool = False
    url: str = "http://127.0.0.1:11434"
    model: str = "qwen2.5:3b"
    api: Literal["chat", "generate"] = "chat"
    timeout_ms: float = 1000.0
    breaker_threshold: int = 3
    breaker_cooldown_s: float = 60.0
    max_chars: int = 8000  # text sent to the model; the rules always see all of it


@dataclass(frozen=True)
class DetectorConfig:
    enabled: bool = True
    mode: Mode = "default"
    time_budget_ms: float | None = None  # None: the policy mode's budget
    on_timeout: Literal["warn", "block"] | None = None  # None: the policy mode's choice
    classifier: ClassifierConfig = field(default_factory=ClassifierConfig)
    db_path: Path | None = None  # classifier cache; None: proxy.paths.db_path()
    rule_paths: tuple[Path, ...] = ()  # empty: the built-in packs/rules/*.yaml
    extra_rule_paths: tuple[Path, ...] = ()
    policy_path: Path | None = None  # None: the built-in packs/detector-policy.yaml
    user_policy: tuple[PolicyRule, ...] = ()
    disabled_rules: frozenset[str] = frozenset()
    model: bool = True  # the learned layer (packs/models/injection-linear.json)

    @classmethod
    def load(cls, path: Path | None = None) -> DetectorConfig:
        """Defaults plus the user's detector.yaml (<config_dir>/detector.yaml if `path` is None)."""
        if path is None:
            from proxy.paths import config_dir

            path = config_dir() / "detector.yaml"
        if not path.exists():
            return cls()
        return cls().merged(path, read_yaml(path, error=PackError))

    def merged(self, path: Path, data: Any) -> DetectorConfig:
        if data is None:
            return self
        if not isinstance(data, LineDict):
            raise PackError(path, 1, "detector settings must be a mapping")
        known = {
            "enabled",
            "mode",
            "time_budget_ms",
            "on_timeout",
            "disabled_rules",
            "rule_packs",
            "policy",
            "classifier",
            "model",
        }
        unknown = set(data) - known
        if unknown:
            key = sorted(unknown)[0]
            raise PackError(
                path,
                data.line_of(key),
                f"unknown setting {key!r}; known: {', '.join(sorted(known))}",
            )
        changes: dict[str, Any] = {}
        if "enabled" in data:
            changes["enabled"] = _bool(path, data, "enabled")
        if "model" in data:
            changes["model"] = _bool(path, data, "model")
        if "mode" in data:
            if data["mode"] not in MODES:
                raise PackError(path, data.line_of("mode"), "`mode` must be default or paranoid")
            changes["mode"] = data["mode"]
        if "time_budget_ms" in data:
            changes["time_budget_ms"] = _positive(path, data, "time_budget_ms")
        if "on_timeout" in data:
            if data["on_timeout"] not in ("warn", "block"):
                raise PackError(
                    path, data.line_of("on_timeout"), "`on_timeout` must be warn or block"
                )
            changes["on_timeout"] = data["on_timeout"]
        if "disabled_rules" in data:
            changes["disabled_rules"] = frozenset(_strings(path, data, "disabled_rules"))
        if "rule_packs" in data:
            changes["extra_rule_paths"] = tuple(
                (path.parent / Path(p).expanduser()).resolve()
                for p in _strings(path, data, "rule_packs")
            )
        if "policy" in data:
            items = data["policy"]
            if not isinstance(items, list):
                raise PackError(path, data.line_of("policy"), "`policy` must be a list of rules")
            changes["user_policy"] = tuple(parse_policy_rule(path, item) for item in items)
        if "classifier" in data:
            changes["classifier"] = _classifier(
                path, data["classifier"], data.line_of("classifier")
            )
        return replace(self, **changes)


def _bool(path: Path, data: LineDict, key: str) -> bool:
    value = data[key]
    if not isinstance(value, bool):
        raise PackError(path, data.line_of(key), f"`{key}` must be true or false")
    return value


def _positive(path: Path, data: LineDict, key: str) -> float:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise PackError(path, data.line_of(key), f"`{key}` must be a positive number")
    return float(value)


def _strings(path: Path, data: LineDict, key: str) -> list[str]:
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PackError(path, data.line_of(key), f"`{key}` must be a list of strings")
    return value


def _classifier(path: Path, data: Any, line: int) -> ClassifierConfig:
    if not isinstance(data, LineDict):
        raise PackError(path, line, "`classifier` must be a mapping")
    allowed = {f.name for f in fields(ClassifierConfig)}
    unknown = set(data) - allowed
    if unknown:
        key = sorted(unknown)[0]
        raise PackError(
            path,
            data.line_of(key),
            f"unknown classifier setting {key!r}; known: {', '.join(sorted(allowed))}",
        )
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key == "enabled":
            if not isinstance(value, bool):
                raise PackError(
                    path, data.line_of(key), "`classifier.enabled` must be true or false"
                )
            changes[key] = value
        elif key in ("url", "model"):
            if not isinstance(value, str) or not value:
                raise PackError(path, data.line_of(key), f"`classifier.{key}` must be a string")
            if key == "url" and not value.startswith(("http://", "https://")):
                raise PackError(path, data.line_of(key), "`classifier.url` must start with http://")
            changes[key] = value
        elif key == "api":
            if value not in ("chat", "generate"):
                raise PackError(
                    path, data.line_of(key), "`classifier.api` must be chat or generate"
                )
            changes[key] = value
        elif key in ("breaker_threshold", "max_chars"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise PackError(
                    path, data.line_of(key), f"`classifier.{key}` must be a positive whole number"
                )
            changes[key] = value
        else:
            changes[key] = _positive(path, data, key)
    return replace(ClassifierConfig(), **changes)
