"""The deterministic decision engine: allow / deny / ask for every tools/call.

    engine = Engine.create(server, session_id, db, policy_path=..., write=..., text_scanner=...)
    engine.tools_listed(tools); engine.decide(tool, arguments); engine.result_seen(tool, result)

See docs/policy.md for the policy format and proxy/engine/engine.py for the contract order.
"""

from proxy.decision import Decision
from proxy.engine.destinations import normalize_destination
from proxy.engine.engine import Engine, ToolPolicy
from proxy.engine.policy import PolicyDoc, PolicyError, load_policy

__all__ = [
    "Decision",
    "Engine",
    "PolicyDoc",
    "PolicyError",
    "ToolPolicy",
    "load_policy",
    "normalize_destination",
]
