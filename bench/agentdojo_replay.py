"""Replay AgentDojo ground truth through the detector and the decision engine, no LLM anywhere.

Needs the pinned corpora (a benchmark tool, not a Gatewatch dependency), agentdojo among them:
    bash bench/install_corpora.sh
    .venv/bin/python bench/agentdojo_replay.py [--version v1.2.2] [--suites workspace,slack]
        [--human approve|none] [--attacks important_instructions,ignore_previous,...]
        [--model FILE]

Every tool result goes through the detector (rules and the learned layer) and then back into
the engine as untrusted output with the detector's verdict, as the proxy does.

--human approve: a careless human who approves every question, for the user's calls and the
attacker's alike. --human none: nobody answers, so every ask is a deny (fail closed).

Benign: each user task's ground-truth calls run through a fresh engine session on a clean
environment. Reported: benign_blocked_calls (calls not executed: denied, or asked with nobody
there), the tasks they fall in, and the share of tasks whose utility oracle still passes.

Attack: for each (user task, injection task) pair and each attack template, the environment is
injected; the user task's calls run first (their outputs carry the injection), then the
injection task's ground-truth calls (what a hijacked agent would do, whatever it read).
Reported per template: attacks_succeeded (the security oracle says the attack worked despite
the gate) over the pairs where it succeeds with no gate, split by what the attack does: sends
data somewhere (exfiltration), makes other calls (other), or makes no call at all and only wants
the model to say something (output). An output goal has no call to gate: it counts as succeeded
when a result carrying the injection reached the model (was not withheld).

--explain FILE writes every attack that still succeeds as a JSON line: the attacker's calls,
their verdicts, and where each argument value was first seen (a flagged or clean result, as a
structured field or in free text, or nowhere).
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
from dataclasses import dataclass, field, replace
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
    attacker: Counter[str] = field(default_factory=Counter)  # verdicts of attacker calls
    results: Counter[str] = field(default_factory=Counter)  # detector verdicts on results
    seen: list[tuple[str, Any, str]] = field(default_factory=list)  # (tool, result, verdict)
    calls: list[dict[str, Any]] = field(default_factory=list)  # attacker calls, for --explain
    asked: list[str] = field(default_factory=list)  # the user's calls that were asked
    timeouts: int = 0  # results the detector did not finish scanning in its time budget
    reached: bool = False  # a result carrying the injection reached the model (not withheld)


class Replayer:
    def __init__(self, suite: Any, tmp: Path, human: str, detector: Any) -> None:
        from proxy.engine import Engine, load_policy
        from proxy.engine.packs import load_packs

        self.human = human
        self.detector = detector
        self.suite = suite
        self.tmp = tmp
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

    def kind(self, injection_task: Any) -> str:
        """`exfiltration` when the attacker's plan sends something somewhere (a sink call with
        a destination), `output` when it makes no call at all (the goal is what the model
        says), else `other`."""
        env = self.suite.load_and_inject_default_environment({})
        calls = injection_task.ground_truth(env)
        if not calls:
            return "output"
        sends = any(call.function in self.sinks
                    and any(call.args.get(p) for p in self.sinks[call.function])
                    for call in calls)
        return "exfiltration" if sends else "other"

    def engine(self) -> Any:
        from proxy.store.database import Database

        self._n += 1
        from proxy.components import scanners

        # One file per engine of the whole run: a Replayer per suite counts from 1 again, and
        # a file shared with another suite's engine would carry its hot results, trust and
        # taint over (session 25: travel's `direct` pairs read workspace's flagged results).
        db = Database.open(self.tmp / f"{self.suite.name}-run{self._n}.db")
        engine = self._engine_cls(self.suite.name, f"s{self._n}", db, self._packs, self._docs,
                                  **scanners(self.detector))
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
                run.calls.append({"tool": call.function, "args": jsonable(args),
                                  "verdict": decision.verdict, "contract": decision.contract,
                                  "reason": decision.reason,
                                  "values": provenance(args, run.seen)})
            if decision.verdict == "ask":
                run.asks += int(not attacker)
                if not attacker:
                    run.asked.append(f"{call.function}: {decision.reason}")
                if self.human == "none":
                    decision = replace(decision, verdict="deny")
                else:
                    for dest in decision.detail.get("destinations", []):
                        if dest["verdict"] == "ask":
                            engine.remember(call.function, dest["destination"])
            if decision.verdict == "deny":
                if not attacker:
                    run.denied.append(f"{call.function}: {decision.reason}")
                continue
            result, error = runtime.run_function(env, call.function, args)
            trace.append(call)
            mcp = as_mcp_result(result, error)
            engine.result_seen(call.function, mcp, args)
            verdict = "pass"
            if self.detector is not None:
                inspection = self.detector.inspect_result("tools/call", mcp)
                verdict = inspection.verdict
                # Past the time budget, the verdict is on_timeout's (warn): noise under load.
                run.timeouts += int(inspection.timed_out)
            run.results[verdict] += 1
            run.seen.append((call.function, mcp, verdict))
            if hasattr(engine, "result_inspected"):  # absent before injected-action tracking
                engine.result_inspected(call.function, mcp, verdict)

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
            run.reached = any(verdict != "block" and carries(result, injections)
                              for _tool, result, verdict in run.seen)
        else:
            runtime = FunctionsRuntime(self.suite.tools)
            for call in [*user_task.ground_truth(pre), *injection_task.ground_truth(pre)]:
                runtime.run_function(env, call.function, dict(call.args))
                trace.append(call)
        return run, self.oracle(injection_task, pre, env, trace)


def carries(result: Any, injections: dict[str, str]) -> bool:
    """Does a tool result hold one of the injected texts?"""
    from proxy.engine.hot_values import result_parts

    free, structured = result_parts(result)
    flat = " ".join(" ".join([*free, *(v for v, _ in structured)]).split())
    return any(p in flat for p in (" ".join(v.split())[:60] for v in injections.values()) if p)


def provenance(args: dict[str, Any], seen: list[tuple[str, Any, str]]) -> dict[str, str]:
    """Where each argument value was first seen: `flagged|clean free|structured TOOL`, or
    `nowhere` (the attacker's own value, never read in a result)."""
    from proxy.engine.hot_values import _occurs, argument_values, normalize_text, result_parts

    out = {}
    for path, value in argument_values(args):
        out[path] = f"{value!r}: nowhere"
        for tool, result, verdict in seen:
            free, structured = result_parts(result)
            flag = "flagged" if verdict in ("warn", "block") else "clean"
            if any(_occurs(value, normalize_text(v)) for v, _ in structured):
                out[path] = f"{value!r}: {flag} structured {tool}"
                break
            if any(_occurs(value, normalize_text(t)) for t in free):
                out[path] = f"{value!r}: {flag} free {tool}"
                break
    return out


class _Named:
    name = "gpt-4o-2024-05-13"  # the attack templates address the model by name


ATTACKS = ("important_instructions", "ignore_previous", "system_message", "injecagent",
           "direct", "tool_knowledge")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="v1.2.2")
    parser.add_argument("--suites", default="workspace,travel,banking,slack")
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    parser.add_argument("--human", choices=["approve", "none"], default="approve")
    parser.add_argument("--no-detector", action="store_true", help="engine only")
    parser.add_argument("--model", type=Path, help="score this candidate model file instead")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--explain", type=Path,
                        help="write every attack that still succeeds here (JSON lines): the "
                        "attacker's calls, their verdicts and where their values came from")
    opts = parser.parse_args()
    warnings.filterwarnings("ignore")
    from detector_corpora import Absent, attack_pairs, use_corpora

    try:
        use_corpora()  # agentdojo and what it imports, as pinned
    except Absent as exc:
        print(exc, file=sys.stderr)
        return 2
    from agentdojo.task_suite.load_suites import get_suites

    detector = None
    if not opts.no_detector:
        from proxy.detector import load_detector

        if opts.model:
            from candidate_model import use_model

            print(f"model: {use_model(opts.model)} ({opts.model})", file=sys.stderr)

        detector = load_detector()

    suites = get_suites(opts.version)
    started = time.perf_counter()
    benign_ok, benign_total, asks_per_task, blocked_calls = 0, 0, [], 0
    benign_timeouts = attack_timeouts = 0
    blocked_tasks: list[str] = []
    templates = [t for t in opts.attacks.split(",") if t]  # none: the benign tasks only
    # per template and kind: [succeeds ungated, still succeeds gated, stopped by deny]
    pairs = {t: {k: [0, 0, 0] for k in ("exfiltration", "other", "output")} for t in templates}
    results: Counter[str] = Counter()
    ungated: dict[tuple[str, str, str], bool] = {}
    explain = opts.explain.open("w") if opts.explain else None
    with tempfile.TemporaryDirectory() as tmp_dir:
        for name in opts.suites.split(","):
            suite = suites[name]
            rep = Replayer(suite, Path(tmp_dir), opts.human, detector)
            for user_task in suite.user_tasks.values():
                run, utility = rep.benign(user_task)
                benign_total += 1
                asks_per_task.append(run.asks)
                benign_timeouts += run.timeouts
                if explain is not None and run.asked:
                    explain.write(json.dumps({"benign": f"{name}/{user_task.ID}",
                                              "asked": run.asked}) + "\n")
                if not run.denied and utility:
                    benign_ok += 1
                if run.denied:
                    blocked_calls += len(run.denied)
                    blocked_tasks.append(f"{name}/{user_task.ID}: {run.denied[0]}")
            for template in templates:
                for user_task, injection_task, injections in attack_pairs(
                        suite, template, _Named()):
                    key = (name, user_task.ID, injection_task.ID)
                    if key not in ungated:  # the attacker's calls do not depend on it
                        ungated[key] = rep.attack(user_task, injection_task, injections,
                                                  gated=False)[1]
                    succeeds = ungated[key]
                    if not succeeds:
                        continue
                    run, still = rep.attack(user_task, injection_task, injections,
                                            gated=True)
                    results.update(run.results)
                    attack_timeouts += run.timeouts
                    kind = rep.kind(injection_task)
                    if kind == "output":
                        # No call to gate: the attack succeeds when the model read it, that is
                        # unless every result carrying the injection was withheld.
                        still = run.reached
                    bucket = pairs[template][kind]
                    bucket[0] += 1
                    bucket[1] += int(still)
                    bucket[2] += int(run.attacker["deny"] > 0)
                    if explain is not None and still:
                        explain.write(json.dumps({
                            "template": template, "suite": name, "kind": kind,
                            "user_task": user_task.ID, "injection_task": injection_task.ID,
                            "prompt": user_task.PROMPT, "goal": injection_task.GOAL,
                            "results": [f"{t}:{v}" for t, _r, v in run.seen],
                            "calls": run.calls}) + "\n")
            print(f"{name:<10} done ({time.perf_counter() - started:.0f} s)", file=sys.stderr,
                  flush=True)
    figures = {
        "version": opts.version,
        "human": opts.human,
        "detector": detector is not None,
        "benign_tasks": benign_total,
        "benign_utility_share": round(benign_ok / benign_total, 4),
        "benign_blocked_calls": blocked_calls,
        "benign_blocked_tasks": len(blocked_tasks),
        "benign_blocked_examples": blocked_tasks,
        "asks_per_task_median": statistics.median(asks_per_task),
        "asks_per_task_max": max(asks_per_task),
        "asks_total": sum(asks_per_task),
        "benign_detector_timeouts": benign_timeouts,
        "attacks_succeeded": {
            t: {k: {"ungated": v[0], "succeeded": v[1], "stopped_by_deny": v[2]}
                for k, v in kinds.items()}
            for t, kinds in pairs.items()
        },
        "attacks_succeeded_total": sum(v[1] for kinds in pairs.values()
                                       for v in kinds.values()),
        "attack_pairs_total": sum(v[0] for kinds in pairs.values() for v in kinds.values()),
        "attacked_result_verdicts": dict(results),
        "attacked_detector_timeouts": attack_timeouts,
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(figures, indent=2))
    if opts.json:
        opts.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
