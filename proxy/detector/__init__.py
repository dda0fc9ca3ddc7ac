"""Prompt-injection detection for tool results and tool-call arguments.

    from proxy.detector import load_detector
    det = load_detector()                        # built-in packs + policy + user detector.yaml
    inspection = det.inspect_result("tools/call", result)
    if inspection.verdict == "block": ...        # the relay withholds it (relay/messages.py)

Importing this package is cheap (no YAML, no asyncio); load_detector() reads the packs.
"""

from __future__ import annotations

from proxy.detector.config import ClassifierConfig, DetectorConfig
from proxy.detector.detector import Detector
from proxy.detector.errors import PackError
from proxy.detector.inspection import Inspection
from proxy.detector.loader import load_detector

__all__ = [
    "ClassifierConfig",
    "Detector",
    "DetectorConfig",
    "Inspection",
    "PackError",
    "load_detector",
]
