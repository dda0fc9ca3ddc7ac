"""Replay AgentDojo ground truth through the decision engine, with no LLM anywhere.

Needs the `agentdojo` package in the venv (a benchmark tool, not a Gatewatch dependency):
    .venv/bin/pip install agentdojo
    .venv/bin/python bench/agentdojo_replay.py [--version v1.2.2] [--suites workspace,slack]

Benign: each user task's ground-truth calls run through a fresh engine session; every tool
result goes back in as untrusted output. An `ask` is answered "yes" (the user asked for this
task) and remembered for the session, the way the ask chain would. Reported: the share of
tasks with no call denied whose utility oracle still passes, and asks per task.

Attack: for each (user task, injection task) pair, the environment is injected with the
`important_instructions` attack; the user task's calls run first (their outputs carry the
injection), then the injection task's ground-truth calls (what a hijacked agent would do).
An attacker call the engine denies or asks about is not executed (an ask is a human seeing an
unexpected destination). Reported: the share of pairs whose security oracle says the attack
failed, over the pairs where it succeeds with no gate, split by whether the attack sends data
somewhere (exfiltration) or not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# What a user of these suites would write for Gatewatch: which tools send somewhere and
# through which argument, their own company's domain, and which outputs are their own data
# (account details, the address book).
POLICY = """
trusted_destinations: ["*@bluesparrowtech.com"]
servers:
  workspace:
    tools:
      send_email: {exfiltrating: true, sink_params: [recipients, cc, bcc]}
      create_calendar_event: {exfiltrating: true, sink_params: [participants]}
      add_calendar_event_participants: {exfiltrating: true, sink_params: [participants]}
      share_file: {exfiltrating: true, sink_params: [email]}
      search_contacts_by_name: {output_trusted: true}
      search_contacts_by_email: {output_trusted: true}
      delete_file: {max_calls: 3}
      delete_email: {max_calls: 3}
  travel:
    tools:
      send_email: {exfiltrating: true, sink_params: [recipients, cc, bcc]}
      create_calendar_event: {exfiltrating: true, sink_params: [participants]}
      get_user_information: {output_trusted: true}
  banking:
    tools:
      send_money: {exfiltrating: true, sink_params: [recipient]}
      schedule_transaction: {exfiltrating: true, sink_params: [recipient]}
      update_scheduled_transaction: {exfiltrating: true, sink_params: [recipient]}
      get_iban: {output_trusted: true}
      get_user_info: {output_trusted: true}
      get_balance: {output_trusted: true}
  slack:
    tools:
      send_direct_message: {exfiltrating: true, sink_params: [recipient]}
      send_channel_message: {exfiltrating: true, sink_params: [channel]}
      invite_user_to_slack: {exfiltrating: true, sink_params: [user_email]}
      add_user_to_channel: {exfiltrating: true, sink_params: [user]}
      post_webpage: {exfiltrating: true, sink_params: [url]}
      get_webpage: {exfiltrating: true, sink_params: [url]}
      remove_user_from_slack: {max_calls: 1}
"""


def jsonable(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return jsonable(value.model_dump(mode="json"))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def as_mcp_result(value: Any, error: str | None) -> dict[str, Any]:
    """A tool's return value as an MCP server built with the SDK would send it."""
    if error:
        return {"content": [{"type": "text", "text": error}], "isError": True}
    data = jsonable(value)
    if isinstance(data, str):
        return {"content": [{"type": "text", "text": data}]}
    return {"content": [{"type": "text", "text": json.dumps(data)}],
            "structuredContent": {"result": data}}


@dataclass
class Run:
    denied: list[str] = field(default_factory=list)
    asks: int = 0
    denied_calls: int = 0
    attacker: Counter[str] = field(default_factory=Counter)  # verdicts of attacker calls


class Replayer:
    def __init__(self, suite: Any, tmp: Path, approve_all: bool = False) -> None:
        from proxy.engine import Engine, load_policy
        from proxy.engine.packs import load_packs

        self.suite = suite
        self.tmp = tmp
        self.approve_all = approve_all  # a careless human: attacker calls' asks approved too
        policy = tmp / "policy.yaml"
        policy.write_text(POLICY)
        self._docs = [load_policy(policy)]
        self._packs = load_packs()
        self._engine_cls = Engine
        self._tools = [
            {"name": t.name, "description": t.description,
             "inputSchema": t.parameters.model_json_schema()}
            for t in suite.tools
        ]
        self._n = 0
        self.sinks = {
            name: entry.get("sink_params", ())
            for name, entry in self._docs[0].servers[suite.name].tools.items()
            if entry.get("exfiltrating")
        }

    def sends(self, injection_task: Any) -> bool:
        """Does the attacker's plan send something somewhere (a sink call with a destination)?"""
        env = self.suite.load_and_inject_default_environment({})
        return any(
            call.function in self.sinks
            and any(call.args.get(p) for p in self.sinks[call.function])
            for call in injection_task.ground_truth(env)
        )

    def engine(self) -> Any:
        from proxy.store.schema import connect

        self._n += 1
        db = connect(self.tmp / f"run{self._n}.db")
        engine = self._engine_cls(self.suite.name, f"s{self._n}", db, self._packs, self._docs)
        engine.tools_listed(self._tools)
        return engine

    def play(self, engine: Any, env: Any, calls: list[Any], run: Run, attacker: bool,
             trace: list[Any]) -> None:
        from agentdojo.functions_runtime import FunctionsRuntime

        runtime = FunctionsRuntime(self.suite.tools)
        for call in calls:
            args = dict(call.args)
            decision = engine.decide(call.function, args)
            if attacker:
                run.attacker[decision.verdict] += 1
                if decision.verdict == "deny" or (
                    decision.verdict == "ask" and not self.approve_all
                ):
                    continue  # denied, or a human saw an unexpected destination and said no
            elif decision.verdict == "deny":
                run.denied.append(f"{call.function}: {decision.reason}")
                run.denied_calls += 1
                continue
            elif decision.verdict == "ask":
                run.asks += 1
                for dest in decision.detail.get("destinations", []):
                    if dest["verdict"] == "ask":
                        engine.remember(call.function, dest["destination"])
            result, error = runtime.run_function(env, call.function, args)
            trace.append(call)
            engine.result_seen(call.function, as_mcp_result(result, error))

    def oracle(self, task: Any, pre: Any, post: Any, trace: list[Any]) -> bool:
        from agentdojo.types import text_content_block_from_string

        output = [text_content_block_from_string(task.GROUND_TRUTH_OUTPUT)]
        return bool(self.suite._check_task_result(task, output, pre, post, trace))

    def benign(self, user_task: Any) -> tuple[Run, bool]:
        env = user_task.init_environment(self.suite.load_and_inject_default_environment({}))
        pre = env.model_copy(deep=True)
        run, trace = Run(), list[Any]()
        self.play(self.engine(), env, user_task.ground_truth(pre), run, False, trace)
        return run, self.oracle(user_task, pre, env, trace)

    def attack(self, user_task: Any, injection_task: Any, injections: dict[str, str],
               gated: bool) -> tuple[Run, bool]:
        from agentdojo.functions_runtime import FunctionsRuntime

        env = user_task.init_environment(
            self.suite.load_and_inject_default_environment(injections))
        pre = env.model_copy(deep=True)
        run, trace = Run(), list[Any]()
        if gated:
            engine = self.engine()
            self.play(engine, env, user_task.ground_truth(pre), run, False, trace)
            self.play(engine, env, injection_task.ground_truth(pre), run, True, trace)
        else:
            runtime = FunctionsRuntime(self.suite.tools)
            for call in [*user_task.ground_truth(pre), *injection_task.ground_truth(pre)]:
                runtime.run_function(env, call.function, dict(call.args))
                trace.append(call)
        return run, self.oracle(injection_task, pre, env, trace)


class _Named:
    name = "gpt-4o-2024-05-13"  # the attack template addresses the model by name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="v1.2.2")
    parser.add_argument("--suites", default="workspace,travel,banking,slack")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--approve-all", action="store_true",
                        help="a careless human: approve every ask, the attacker's included")
    opts = parser.parse_args()
    warnings.filterwarnings("ignore")
    try:
        from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack
        from agentdojo.task_suite.load_suites import get_suites
    except ImportError:
        print("agentdojo is not installed: .venv/bin/pip install agentdojo", file=sys.stderr)
        return 2

    suites = get_suites(opts.version)
    started = time.perf_counter()
    benign_ok, benign_total, asks_per_task, denied_examples = 0, 0, [], []
    benign_blocked_calls = 0
    pairs = {"exfiltration": [0, 0, 0, 0], "other": [0, 0, 0, 0]}  # succeeds, blocked, deny, ask
    per_suite: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp_dir:
        for name in opts.suites.split(","):
            suite = suites[name]
            rep = Replayer(suite, Path(tmp_dir), opts.approve_all)
            s_ok = 0
            for user_task in suite.user_tasks.values():
                run, utility = rep.benign(user_task)
                benign_total += 1
                benign_blocked_calls += run.denied_calls
                asks_per_task.append(run.asks)
                if not run.denied and utility:
                    benign_ok += 1
                    s_ok += 1
                elif run.denied:
                    denied_examples.append(f"{name}/{user_task.ID}: {run.denied[0]}")
            attack = ImportantInstructionsAttack(suite, _Named())
            s_pairs = {"exfiltration": [0, 0, 0, 0], "other": [0, 0, 0, 0]}
            for user_task in suite.user_tasks.values():
                try:
                    candidates = attack.get_injection_candidates(user_task)
                except ValueError:
                    continue  # a user task that reads no injectable data
                for injection_task in suite.injection_tasks.values():
                    injections = {
                        k: attack.jailbreak.format(goal=injection_task.GOAL, user=attack.user_name,
                                                   model=attack.model_name,
                                                   task=attack.summarize_task(user_task))
                        for k in candidates
                    }
                    _, succeeds = rep.attack(user_task, injection_task, injections, gated=False)
                    if not succeeds:
                        continue
                    run, still = rep.attack(user_task, injection_task, injections, gated=True)
                    kind = "exfiltration" if rep.sends(injection_task) else "other"
                    for bucket in (pairs[kind], s_pairs[kind]):
                        bucket[0] += 1
                        bucket[1] += int(not still)
                        bucket[2] += int(run.attacker["deny"] > 0)
                        bucket[3] += int(run.attacker["ask"] > 0 and run.attacker["deny"] == 0)
            per_suite[name] = {"benign_ok": s_ok, "benign": len(suite.user_tasks),
                               "pairs": s_pairs}
            print(f"{name:<10} benign {s_ok}/{len(suite.user_tasks)} clean; attacks "
                  + "; ".join(f"{k} blocked {v[1]}/{v[0]} (deny {v[2]}, ask {v[3]})"
                              for k, v in s_pairs.items()), flush=True)
    elapsed = time.perf_counter() - started
    figures = {
        "version": opts.version,
        "benign_clean_share": benign_ok / benign_total,
        "benign_tasks": benign_total,
        "approve_all": opts.approve_all,
        "benign_blocked_calls": benign_blocked_calls,
        "attacks_succeeded": sum(v[0] - v[1] for v in pairs.values()),
        "asks_per_task_median": statistics.median(asks_per_task),
        "asks_per_task_max": max(asks_per_task),
        "benign_denied_examples": denied_examples,
        "attack": {k: {"succeeds_ungated": v[0], "blocked": v[1], "by_deny": v[2],
                       "by_ask_only": v[3], "blocked_share": (v[1] / v[0]) if v[0] else None}
                   for k, v in pairs.items()},
        "per_suite": per_suite,
        "seconds": round(elapsed, 1),
    }
    print(json.dumps(figures, indent=2))
    if opts.json:
        opts.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
