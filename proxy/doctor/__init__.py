"""`gatewatch doctor`: one line per check of the environment, worst status as exit code."""

from proxy.doctor.report import CheckResult, Status, render_json, render_text, worst
from proxy.doctor.runner import CHECKS, run_all

__all__ = ["CHECKS", "CheckResult", "Status", "render_json", "render_text", "run_all", "worst"]
