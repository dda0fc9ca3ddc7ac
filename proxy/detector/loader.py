"""Build a Detector from the packs, the policy and the settings."""

from __future__ import annotations

from dataclasses import replace

from proxy.detector.config import DetectorConfig
from proxy.detector.detector import Detector
from proxy.detector.policy import builtin_policy_path, load_policy
from proxy.detector.rules import builtin_pack_paths, load_packs


def load_detector(config: DetectorConfig | None = None) -> Detector:
    """The detector for `config`; with None, defaults plus <config_dir>/detector.yaml.

    Raises PackError(path, line, reason) when a pack, the policy or the settings are malformed.
    """
    if config is None:
        config = DetectorConfig.load()
    paths = list(config.rule_paths) or builtin_pack_paths()
    rules = load_packs(paths + list(config.extra_rule_paths))
    if config.disabled_rules:
        rules = [rule for rule in rules if rule.id not in config.disabled_rules]
    policy = load_policy(config.policy_path or builtin_policy_path(), config.mode)
    if config.user_policy:
        policy = replace(policy, rules=config.user_policy + policy.rules)
    classifier = None
    if config.classifier.enabled:
        from proxy.detector.classifier import Classifier, ClassifierCache

        if config.db_path is not None:
            db_path = config.db_path
        else:
            from proxy.paths import db_path as default_db_path

            db_path = default_db_path()
        classifier = Classifier(config.classifier, ClassifierCache(db_path))
    return Detector(rules, policy, config, classifier)
