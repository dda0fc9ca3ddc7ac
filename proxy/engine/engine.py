"""The decision engine: one deterministic verdict per tools/call, contracts in DESIGN.md order.

1 allowlist → 2 pinning → 3 budget (counts attempts) → 4 argument constraints → 5 injection
rules on arguments → 6 sink gate → 7 allow. No LLM, no network: plain Python against the
pinned tools, the layered policy, remembered trust and the taint log. Any internal error is a
deny (fail closed).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proxy.decision import Decision, DestinationCheck, Verdict
from proxy.engine import confine, heuristics
from proxy.engine.destinations import (
    Destination,
    destination_kind,
    extract_destinations,
    grant_key,
    parse,
    trust_key,
    trust_keys,
)
from proxy.engine.hot_values import HotValues
from proxy.engine.leaves import scalar_leaves
from proxy.engine.lookalike import shown
from proxy.engine.packs import choose_pack, load_packs
from proxy.engine.pinning import (
    APPROVED,
    PinStore,
    ToolVersion,
    call_key,
    changed_fields,
    diff,
)
from proxy.engine.policy import Pack, PolicyDoc, PolicyError, load_policy, merge_tool
from proxy.engine.taint import (
    FREE_TEXT,
    LINK_HOST,
    MAIL_HOST,
    PARENT,
    STRUCTURED,
    VALUE,
    Origin,
    TaintLog,
    listed_values,
    sightings,
)
from proxy.engine.trustlist import TrustList
from proxy.store.database import Database

TextScanner = Callable[[str], tuple[bool, list[str], str]]
# (tool, arguments) -> (is an attack, rule ids, why): shell and path payloads in a call.
ArgumentScanner = Callable[[str, dict[str, Any]], tuple[bool, list[str], str]]

_SEVERITY = {"allow": 0, "ask": 1, "deny": 2}
MAX_CONTENT_SCAN = 64 * 1024  # how much of a send's content is searched for planted links
# A link planted in untrusted text (`https://evil.example/collect`) taints its path and below;
# another path on its host is asked, not denied. The AgentDojo replay gives the same figures
# either way (its hosts are fictional); taint is shared and persisted, and pages link to popular
# hosts, so a host-wide deny would block those everywhere (see docs/policy.md).
LINK_TAINTS_HOST = False
_MIN_SCAN = 8  # shorter strings cannot carry an injection worth a scanner call


@dataclass(frozen=True)
class ToolPolicy:
    """Everything the contracts need to know about one tool, all layers merged."""

    exfiltrating: bool
    sink_params: tuple[str, ...]
    trusted: TrustList
    max_calls: int | None
    path_params: tuple[str, ...]
    allowed_paths: tuple[str, ...] | None
    arg_patterns: dict[str, Any]
    arg_allowlists: dict[str, frozenset[str]]
    output_trusted: bool
    layers: tuple[str, ...]


class Engine:
    def __init__(
        self,
        server: str,
        session_id: str,
        db: Database,
        packs: list[Pack],
        docs: list[PolicyDoc],
        text_scanner: TextScanner | None = None,
        policy_paths: tuple[Path, ...] = (),
        argument_scanner: ArgumentScanner | None = None,
    ) -> None:
        self.server = server
        self.session_id = session_id
        self._db = db
        self._scan = text_scanner
        self._scan_args = argument_scanner
        self._policy_paths = policy_paths
        self._packs = packs
        self._docs = docs
        self._pins = PinStore(db.pins, server)
        self._taint = TaintLog(db.taint, server, session_id)
        self._hot = HotValues(db.hot_results, server, session_id)
        self._tofu = not self._pins.pins  # nothing pinned yet: the first listing is approved
        self._listed: dict[str, ToolVersion] | None = None  # this session's latest tools/list
        self._flags: dict[str, tuple[list[str], str]] = {}  # descriptions the scanner flagged
        self._stale = False
        self._attempts: Counter[str] = Counter()
        self._approved: set[tuple[str, str]] = set()
        # Pin approvals a human gave without storing them: tool -> (digest, arguments digest)
        # for one call, tool -> digest for this session.
        self._pin_once: dict[str, tuple[str, str]] = {}
        self._pin_session: dict[str, str] = {}
        self._vouched: dict[str, str] = {}  # contact -> the trusted tool that listed it
        self._cache: dict[str, ToolPolicy] = {}
        # tool -> (the version, its tools/list shape): read on every call, rebuilt only when
        # the version in force is another object (versions are immutable). Callers only read.
        self._definitions: dict[str, tuple[ToolVersion, dict[str, Any]]] = {}
        self._allowed: frozenset[str] | None = self._allowlisted()
        self._pack = self._choose_pack()

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        server: str,
        session_id: str,
        db: Database,
        *,
        policy_path: Path | None = None,
        text_scanner: TextScanner | None = None,
        argument_scanner: ArgumentScanner | None = None,
    ) -> Engine:
        """Load packs, the default user policy (if present) and `policy_path` on top.
        Raises PolicyError(path, line, reason) for a malformed file."""
        packs, docs, paths = _load_layers(policy_path)
        return cls(server, session_id, db, packs, docs, text_scanner, paths, argument_scanner)

    def reload(self) -> None:
        """Re-read packs and policy files (trust is read from the database on every call)."""
        self._packs, self._docs, _ = _load_layers(None, self._policy_paths)
        self._cache.clear()
        self._allowed = self._allowlisted()
        self._pack = self._choose_pack()

    def _choose_pack(self) -> Pack | None:
        wanted = None
        for doc in self._docs:
            for rules in doc.rules_for(self.server):
                wanted = rules.pack or wanted
        known = self._listed.keys() if self._listed is not None else self._pins.pins.keys()
        pack = choose_pack(self._packs, self.server, known, wanted)
        if wanted is not None and pack is None:
            raise PolicyError(self._policy_paths[-1] if self._policy_paths else None, 0,
                              f"server {self.server!r} asks for unknown pack {wanted!r}; "
                              "see `gatewatch packs`")
        return pack

    @property
    def pack(self) -> str | None:
        return self._pack.name if self._pack is not None else None

    @property
    def needs_tools_list(self) -> bool:
        """A list_changed arrived and no fresh tools/list since: the relay should fetch one."""
        return self._stale

    # -- what the relay reports -----------------------------------------------------------

    def tools_listed(self, tools: list[dict[str, Any]]) -> None:
        versions: dict[str, ToolVersion] = {}
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                versions[tool["name"]] = ToolVersion.of(tool)
        self._listed = {**(self._listed or {}), **versions} if not self._stale else versions
        self._stale = False
        index = self._pins.key_index(versions)  # once: a listing can name thousands
        for name, version in versions.items():
            pin = self._pins.pins.get(name)
            if self._pins.is_approved(version):
                continue
            flagged = self._scan_description(version)
            # A look-alike of another tool is never trusted unseen, not even in a first listing.
            if self._tofu and pin is None and not flagged and (
                self._pins.lookalike(version, versions, index) is None
            ):
                self._pins.approve(version)
            else:
                self._pins.propose(version)
        self._cache.clear()
        if self._pack is None:
            self._pack = self._choose_pack()

    def tools_changed(self) -> None:
        self._stale = True
        # Only the very first listing of a server is trusted unseen. Some servers (the reference
        # "everything" server) announce a change before they were ever listed: that one does not
        # end the first listing's trust.
        if self._listed is not None:
            self._tofu = False

    def result_seen(
        self, tool: str, result: dict[str, Any], arguments: dict[str, Any] | None = None
    ) -> None:
        """`arguments` are those of the call this result answers, when the relay knows them."""
        policy = self._policy(tool)
        if policy.output_trusted:
            # The user's own data (an address book, the workspace directory): the contacts it
            # lists are vouched for this session; nothing in it is taint. Prose in it vouches
            # for nothing.
            for value in listed_values(result):
                self._vouched.setdefault(value, tool)
            return
        seen, texts = sightings(result)
        if arguments and policy.exfiltrating:
            # A send that echoes its recipients ("sent to bob@corp.com") is not a source: the
            # call's own destinations were already gated, and tainting them would deny the
            # next send to the same person.
            sent = {dest.key for param, raw in self._sink_values(tool, policy, arguments)[0]
                    for dest in parse(raw, heuristics.expected_kind(_last_key(param)))}
            seen = [s for s in seen if s.value not in sent]
        self._taint.record(tool, seen, texts)

    def result_inspected(self, tool: str, result: dict[str, Any], verdict: str) -> None:
        """The detector's verdict on a tools/call result (after result_seen): what injected
        actions may use (proxy/engine/hot_values.py)."""
        if not self._policy(tool).output_trusted:
            self._hot.record(tool, result, verdict)

    def remember(self, tool: str, destination: str) -> None:
        self._approved.add((tool, grant_key(destination)))

    def approve_tool(
        self,
        tool: str,
        remember: str = "forever",
        digest: str | None = None,
        arguments: dict[str, Any] | None = None,
    ) -> bool:
        """A human vouched for the tool version they were shown (`digest`, from the question's
        detail): for the call with these `arguments` only ("once"), for this session, or for
        good (the pin is stored). Only the pinning contract is settled: the caller decides the
        call again, so budget, constraints, injection rules and the sink gate still run.
        False when the tool changed since the question was asked."""
        version = self._pin_version(tool)
        key = version.digest if version is not None else ""
        if digest is not None and digest != key:
            return False
        if remember == "once":
            self._pin_once[tool] = (key, call_key(arguments or {}))
        elif remember == "session" or version is None:  # nothing to store for an unlisted tool
            self._pin_session[tool] = key
        else:
            self._pins.approve(version)
            self._flags.pop(tool, None)
        self._cache.pop(tool, None)
        return True

    def _pin_version(self, tool: str) -> ToolVersion | None:
        """The version a pin question is about: the listed one, else the pending one."""
        listed = (self._listed or {}).get(tool)
        if listed is not None:
            return listed
        pin = self._pins.pins.get(tool)
        return pin.pending if pin is not None else None

    def _pin_granted(self, tool: str, arguments: dict[str, Any]) -> bool:
        """A once (this very call) or session approval of the version in force now."""
        if tool not in self._pin_once and tool not in self._pin_session:
            return False
        version = self._pin_version(tool)
        key = version.digest if version is not None else ""
        once = self._pin_once.get(tool)
        if once is not None and once == (key, call_key(arguments)):
            del self._pin_once[tool]
            return True
        return self._pin_session.get(tool) == key

    def _scan_description(self, version: ToolVersion) -> bool:
        if self._scan is None or not version.description:
            return False
        is_injection, rules, reason = self._scan(version.description)
        if is_injection:
            self._flags[version.name] = (list(rules), reason)
        return bool(is_injection)

    # -- the decision ---------------------------------------------------------------------

    def decide(self, tool: str, arguments: dict[str, Any]) -> Decision:
        try:
            return self._decide(tool, arguments)
        except Exception as exc:  # fail closed: an engine bug must never let a call through
            return Decision(
                "deny",
                "default",
                f"internal error in the decision engine ({type(exc).__name__}); failing closed",
                detail={"error": repr(exc)[:500]},
            )

    def _decide(self, tool: str, arguments: Any) -> Decision:
        if not isinstance(tool, str) or not tool:
            return Decision("deny", "default", "tools/call without a tool name")
        args: dict[str, Any] = {} if arguments is None else arguments
        if not isinstance(args, dict):
            return Decision("deny", "constraint", "tool arguments must be a JSON object")

        denied = self._allowlist(tool)
        if denied is not None:
            return denied
        pinning = None if self._pin_granted(tool, args) else self._pinning(tool)
        if pinning is not None:
            return pinning
        policy = self._policy(tool)

        self._attempts[tool] += 1  # attempts, not successes: a denied call is not free
        if policy.max_calls is not None and self._attempts[tool] > policy.max_calls:
            return Decision(
                "deny", "budget",
                f"call budget {policy.max_calls} for {self.server}.{tool} exceeded "
                f"(attempt {self._attempts[tool]} this session)",
                detail={"max_calls": policy.max_calls, "attempts": self._attempts[tool]},
            )
        for check in (self._constraints, self._injection):
            found = check(tool, policy, args)
            if found is not None:
                return found
        decision = self._sink_gate(tool, policy, args) if policy.exfiltrating else Decision(
            "allow", "default", "no contract objects", detail={"layers": list(policy.layers)})
        return self._hot.review(
            tool, self._tool_definition(tool), args, decision,
            lambda v: policy.trusted.match(v) is not None or v in self._vouched)

    def _allowlisted(self) -> frozenset[str] | None:
        """The tool names this server's allowlist entries name (None: no allowlist), read
        once per policy load."""
        prefix = f"{self.server}."
        names = frozenset(
            entry[len(prefix):]
            for doc in self._docs
            for entry in doc.allowlist or ()
            if entry.startswith(prefix)
        )
        return names or None

    def _allowlist(self, tool: str) -> Decision | None:
        names = self._allowed
        if names and tool not in names and "*" not in names:
            return Decision("deny", "allowlist",
                            f"{self.server}.{tool} is not in the tool allowlist")
        return None

    def _pinning(self, tool: str) -> Decision | None:
        pin = self._pins.pins.get(tool)
        listed = self._listed.get(tool) if self._listed is not None else None
        if tool in self._flags:
            rules, why = self._flags[tool]
            return Decision(
                "ask", "pinning",
                f"the description of {self.server}.{tool} looks like prompt injection ({why})",
                detail={"pin": "flagged", "rules": rules,
                        "diff": diff(pin.approved if pin else None, listed)
                        if listed is not None else "",
                        "digest": listed.digest if listed is not None else ""},
            )
        if listed is None:
            if self._listed is not None and not self._stale:
                return Decision("ask", "pinning",
                                f"{self.server}.{tool} is not in the server's tools/list",
                                detail={"pin": "unlisted", "digest": ""})
            if pin is not None and pin.status == APPROVED and pin.approved is not None:
                return None
            if pin is not None and pin.pending is not None:
                return self._pin_ask(tool, pin.approved, pin.pending)
            return Decision("ask", "pinning",
                            f"{self.server}.{tool} was never listed or approved",
                            detail={"pin": "unknown", "digest": ""})
        if self._pins.is_approved(listed):
            return None
        return self._pin_ask(tool, pin.approved if pin else None, listed)

    def _pin_ask(self, tool: str, old: ToolVersion | None, new: ToolVersion) -> Decision:
        detail: dict[str, Any] = {"pin": "changed" if old is not None else "new",
                                  "diff": diff(old, new), "digest": new.digest,
                                  "fields": changed_fields(old, new)}
        twin = self._pins.lookalike(new, self._listed) if old is None else None
        if twin is not None:
            other, server = twin
            where = f"{server}.{other}" if server else f"{self.server}.{other}"
            detail.update(pin="impersonation", impersonates=where)
            return Decision(
                "ask", "pinning",
                f"{self.server}.{shown(tool)} looks like the tool {where} (the names or titles "
                "differ only in case, separators or look-alike characters): it may impersonate "
                "it",
                detail=detail,
            )
        what = "changed since it was approved" if old is not None else "new since first approval"
        return Decision("ask", "pinning", f"{self.server}.{tool} is {what}", detail=detail)

    def _constraints(self, tool: str, policy: ToolPolicy, args: dict[str, Any]) -> Decision | None:
        if policy.allowed_paths is not None:
            roots = confine.allowed_roots(policy.allowed_paths)
            for param, value in _path_values(policy.path_params, policy.sink_params, args):
                if not confine.inside(value, roots):
                    return Decision(
                        "deny", "constraint",
                        f"{param}={value!r} is outside the allowed paths "
                        f"{list(policy.allowed_paths)}",
                        detail={"param": param, "resolved": confine.resolve(value)},
                    )
        for param, pattern in policy.arg_patterns.items():
            for value in _scalars(args.get(param)):
                if pattern.fullmatch(value) is None:
                    return Decision(
                        "deny", "constraint",
                        f"{param}={value!r} does not match the pattern {pattern.pattern!r}",
                        detail={"param": param},
                    )
        for param, allowed in policy.arg_allowlists.items():
            for value in _scalars(args.get(param)):
                if value not in allowed:
                    return Decision("deny", "constraint",
                                    f"{param}={value!r} is not an allowed value",
                                    detail={"param": param})
        return None

    def _injection(self, tool: str, policy: ToolPolicy, args: dict[str, Any]) -> Decision | None:
        """Shell and path payloads (the argument scanner) and injected text in any string
        argument (the text scanner); the reasons and rules of both are reported."""
        rules: list[str] = []
        why: list[str] = []
        detail: dict[str, Any] = {}
        if self._scan_args is not None:
            is_attack, found, reason = self._scan_args(tool, args)
            if is_attack:
                rules += found
                why.append(f"arguments: {reason}".strip())
        if self._scan is not None:
            for param, value in _leaves(args, ""):
                if len(value) < _MIN_SCAN:
                    continue
                is_injection, found, reason = self._scan(value)
                if is_injection:
                    rules += [r for r in found if r not in rules]
                    why.append(f"argument {param} {reason}".strip())
                    detail["param"] = param
                    break
        if not rules and not why:
            return None
        return Decision("deny", "injection", "; ".join(why), detail={**detail, "rules": rules})

    # -- the sink gate --------------------------------------------------------------------

    def _sink_values(self, tool: str, policy: ToolPolicy, args: dict[str, Any]) -> tuple[
        list[tuple[str, str]], bool
    ]:
        """(param, value) pairs to gate, and whether the fail-closed sweep was used."""
        declared = [p for p in policy.sink_params if _present(_dig(args, p))]
        if not declared:
            if self._schema_declares(tool, policy.sink_params):
                # The server knows the sink parameter and the call simply left it out (e.g. an
                # update that keeps the recipient): only destination-shaped values count.
                shaped = [(path, leaf) for path, leaf in _sink_leaves(args, "")
                          if destination_kind(leaf) is not None or _names_a_sink(path)]
                return shaped, True
            # Declared sinks unknown to the server's schema: a mismatch, so every argument is
            # a destination (fail closed).
            return list(_sink_leaves(args, "")), True
        out = [pair for p in declared for pair in _leaves(_dig(args, p), p)]
        tops = {p.split(".", 1)[0] for p in declared}
        for param, value in args.items():
            if param in tops:
                continue
            # Undeclared destinations still count: a recipient-shaped name, or a value that is
            # wholly an address/URL (prose that merely mentions one stays content).
            for path, leaf in _sink_leaves(value, param):
                if _names_a_sink(path) or destination_kind(leaf) is not None:
                    out.append((path, leaf))
        return out, False

    def _schema_declares(self, tool: str, params: tuple[str, ...]) -> bool:
        known = self._tool_definition(tool)
        schema = known.get("inputSchema") if known is not None else None
        props = schema.get("properties") if isinstance(schema, dict) else None
        return isinstance(props, dict) and any(p.split(".")[0] in props for p in params)

    def _sink_gate(self, tool: str, policy: ToolPolicy, args: dict[str, Any]) -> Decision:
        values, swept = self._sink_values(tool, policy, args)
        checked: list[DestinationCheck] = []
        worst: tuple[int, str, str, str, dict[str, Any] | None] | None = None
        # With no content argument, the only data a call can carry is in the destination.
        content_free = not any(
            isinstance(v, str) and v for k, v in args.items()
            if k not in {p.split(".")[0] for p in policy.sink_params}
        )
        injected = _header_injection(args)
        if injected is not None:
            return Decision(
                "deny", "sink_gate",
                f"{injected} holds a line break: a mail server would read what follows as "
                "another header (Bcc: ...)", detail={"param": injected, "swept": swept},
            )
        for param, raw in values:
            for dest in parse(raw, heuristics.expected_kind(_last_key(param))):
                verdict, why, origin = self._classify(tool, policy, dest)
                if verdict == "deny" and content_free and _verbatim_url(raw, dest, origin):
                    # Fetching a link exactly as it was written leaks nothing but the visit; a
                    # human decides. Any added path or query (where data would ride) stays
                    # denied.
                    verdict, why = "ask", f"is a link found in untrusted text ({why})"
                shown = trust_key(dest)  # what a human approves: the path's case, https
                checked.append(DestinationCheck(param, shown, verdict, why))
                rank = _SEVERITY[verdict]
                if worst is None or rank > worst[0]:
                    worst = (rank, param, shown, why, origin)
        if not swept and (worst is None or worst[0] < _SEVERITY["deny"]):
            for param, link, origin in self._planted_links(policy, args):
                why = "is a link planted in untrusted text, carried in the content"
                checked.append(DestinationCheck(param, link, "ask", why))
                if worst is None or worst[0] < _SEVERITY["ask"]:
                    worst = (_SEVERITY["ask"], param, link, why, origin)
        detail: dict[str, Any] = {"destinations": [c.as_json() for c in checked], "swept": swept}
        if worst is None:
            return Decision("allow", "sink_gate", "no destination in the call", detail=detail,
                            checked=tuple(checked))
        rank, param, shown, why, origin = worst
        detail["param"] = param
        verdict = ("allow", "ask", "deny")[rank]
        reason = {
            "allow": f"every destination is trusted ({why})",
            "ask": f"destination {param}={shown!r} {why}",
            "deny": f"destination {param}={shown!r} {why}",
        }[verdict]
        return Decision(verdict, "sink_gate", reason, destination=shown, origin=origin,
                        detail=detail, checked=tuple(checked))

    def _planted_links(
        self, policy: ToolPolicy, args: dict[str, Any]
    ) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Links inside the content of a send that were planted in untrusted free text (a
        phishing link an injection asks to pass on): asked, since a human should see them."""
        sinks = {p.split(".")[0] for p in policy.sink_params}
        # (param, value, kind, as written), in the content's order
        links: list[tuple[str, str, str, str]] = []
        for param, text in _leaves({k: v for k, v in args.items() if k not in sinks}, ""):
            content = text[:MAX_CONTENT_SCAN]
            for value, kind, start, end in extract_destinations(content):
                if kind in ("url", "host", "ip"):
                    links.append((param, value, kind, content[start:end]))
        # Each distinct link judged once, all of them looked up in one read of the taint table.
        dests = {(value, kind): Destination(value, kind) for _param, value, kind, _raw in links}
        untrusted = [d for d in dests.values() if policy.trusted.match(d) is None]
        origins = dict(zip(((d.key, d.kind) for d in untrusted),
                           self._taint.lookup_all(untrusted, shaped=False), strict=True))
        for param, value, kind, raw in links:
            origin = origins.get((value, kind))
            if origin is not None and origin.provenance == FREE_TEXT and (
                origin.matched != LINK_HOST
            ):
                # Asked (and so remembered) as a human approves a destination: the path's
                # case and the scheme as written (trust_key), not the taint lookup's folding.
                yield param, grant_key(raw), origin.as_dict()

    def _classify(self, tool: str, policy: ToolPolicy, dest: Destination) -> tuple[
        Verdict, str, dict[str, Any] | None
    ]:
        if dest.injection:
            return "deny", "holds a line break that would start another mail header", None
        key = dest.key
        if not dest.untrusted:
            entry = policy.trusted.match(dest)
            if entry is not None:
                return "allow", f"trusted by policy entry {entry!r}", None
            keys = trust_keys(dest)
            if any((tool, k) in self._approved for k in keys):
                return "allow", "approved by a human this session", None
            if self._db.trust.allows(self.server, tool, keys):
                return "allow", "remembered human approval", None
            listed = next((k for k in keys if k in self._vouched), None)
            if listed is not None:
                vouched = f"{self.server}.{self._vouched[listed]}"
                return "allow", f"listed by {vouched} (trusted output)", None
        origin = self._taint.lookup(dest, dest.kind != "other" or destination_kind(key)
                                    is not None)
        untrusted = f"is never trusted: {dest.untrusted}" if dest.untrusted else None
        if origin is None:
            return "ask", untrusted or "is not a vouched destination (unproven)", None
        where = f"{origin.server}.{origin.tool}" if origin.tool else origin.server
        under = _under(dest, origin)
        if origin.provenance == STRUCTURED:
            why = untrusted or (f"is a contact seen in output of {where}, not yet approved"
                                if under is None else
                                f"{under}, a contact seen in output of {where}, not yet approved")
            return "ask", why, origin.as_dict()
        assert origin.provenance == FREE_TEXT
        if origin.matched == LINK_HOST and not LINK_TAINTS_HOST:
            return "ask", (f"is on the host of a link found in untrusted text in output of "
                           f"{where}"), origin.as_dict()
        if under is not None:
            return "deny", f"{under}, a host seen in untrusted text in output of {where}", (
                origin.as_dict())
        return "deny", f"came from untrusted text in output of {where}", origin.as_dict()

    # -- policy resolution ----------------------------------------------------------------

    def _policy(self, tool: str) -> ToolPolicy:
        cached = self._cache.get(tool)
        if cached is not None:
            return cached
        layers: list[str] = []
        if self._pack is not None and tool in self._pack.tools:
            entry = dict(self._pack.tools[tool])
            layers.append(self._pack.origin)
        else:
            known = self._tool_definition(tool)
            entry = heuristics.tool_entry(known) if known is not None else {}
            layers.append("heuristics")
        trusted: list[str] = list(entry.get("trusted_destinations", ()))
        server_paths: tuple[str, ...] | None = None
        server_output_trusted: bool | None = None
        server_layers = [self._pack] if self._pack is not None else []
        for rules in [*server_layers, *(r for d in self._docs for r in d.rules_for(self.server))]:
            trusted.extend(rules.trusted_destinations)
            server_paths = rules.allowed_paths if rules.allowed_paths is not None else (
                server_paths
            )
            if rules.output_trusted is not None:
                server_output_trusted = rules.output_trusted
            if rules is self._pack:
                continue
            if tool in rules.tools:
                entry = merge_tool(entry, rules.tools[tool])
                trusted.extend(rules.tools[tool].get("trusted_destinations", ()))
            if rules.origin not in layers:
                layers.append(rules.origin)
        for doc in self._docs:
            trusted.extend(doc.trusted_destinations)
        output_trusted = entry.get("output_trusted")
        policy = ToolPolicy(
            exfiltrating=bool(entry.get("exfiltrating", False)),
            sink_params=tuple(entry.get("sink_params", ())),
            trusted=TrustList(trusted),
            max_calls=entry.get("max_calls"),
            path_params=tuple(entry.get("path_params", ())),
            allowed_paths=entry.get("allowed_paths", server_paths),
            arg_patterns=dict(entry.get("arg_patterns", {})),
            arg_allowlists=dict(entry.get("arg_allowlists", {})),
            output_trusted=bool(server_output_trusted if output_trusted is None
                                else output_trusted),
            layers=tuple(layers),
        )
        self._cache[tool] = policy
        return policy

    def _tool_definition(self, tool: str) -> dict[str, Any] | None:
        version = (self._listed or {}).get(tool)
        if version is None:
            pin = self._pins.pins.get(tool)
            version = (pin.approved or pin.pending) if pin is not None else None
        if version is None:
            return None
        cached = self._definitions.get(tool)
        if cached is not None and cached[0] is version:
            return cached[1]
        definition = version.as_tool()
        self._definitions[tool] = (version, definition)
        return definition

    def policy_for(self, tool: str) -> ToolPolicy:
        """The merged policy of one tool (for `gatewatch check` and explanations)."""
        return self._policy(tool)


def _load_layers(
    policy_path: Path | None, paths: tuple[Path, ...] | None = None
) -> tuple[list[Pack], list[PolicyDoc], tuple[Path, ...]]:
    if paths is None:
        from proxy.paths import user_policy_path

        default = user_policy_path()
        found = [default] if default.exists() else []
        if policy_path is not None:
            found.append(Path(policy_path).expanduser())
        paths = tuple(found)
    return load_packs(), [load_policy(p) for p in paths], paths


def _under(dest: Destination, origin: Origin) -> str | None:
    """How a destination stands to the host it matched by name, for the reason: None when it
    matched the sighting itself (or its path, its host, a substring)."""
    if origin.matched == PARENT:
        return f"is under {origin.value}"
    if origin.matched == MAIL_HOST:
        return f"is a mailbox {'at' if dest.host == origin.value else 'under'} {origin.value}"
    return None


def _verbatim_url(raw: str, dest: Destination, origin: dict[str, Any] | None) -> bool:
    """Is the destination exactly a link seen in untrusted text (no added path or query), and
    is its host written plainly? An IP as a number (`http://167837955/`) or an encoded host is
    a disguise, not a visit."""
    if not (origin is not None and origin.get("matched") == VALUE
            and dest.kind in ("url", "host", "ip") and not dest.has_query
            and dest.key == origin.get("value") and dest.site is not None):
        return False
    written = raw.strip().split("://", 1)[-1]
    host = re.split(r"[/?#]", written, maxsplit=1)[0].casefold().rstrip(".")
    return host.removeprefix("www.") == dest.site.removeprefix("www.")


def _keys(path: str) -> list[str]:
    """The argument names along a leaf's path: 'headers.Bcc' -> ['headers', 'Bcc']."""
    return [k for k in re.split(r"\.|\[\d+\]", path) if k]


def _last_key(path: str) -> str:
    keys = _keys(path)
    return keys[-1] if keys else path


def _names_a_sink(path: str) -> bool:
    return any(heuristics.is_sink_name(k) for k in _keys(path))


def _header_injection(args: dict[str, Any]) -> str | None:
    """The first header-like argument (a recipient, the subject, any entry of a header map)
    that holds CR or LF, or None."""
    for path, leaf in _sink_leaves(args, ""):
        if "\r" not in leaf and "\n" not in leaf:
            continue
        keys = _keys(path)
        if any(heuristics.is_header_name(k) or heuristics.is_sink_name(k) for k in keys) or any(
            k.casefold() in ("headers", "header") for k in keys[:-1]
        ):
            return path
    for key in _header_keys(args):
        if "\r" in key or "\n" in key or ":" in key:
            return key
    return None


def _header_keys(value: Any) -> Iterator[str]:
    """Keys of header maps (`headers: {...}`) anywhere in the arguments."""
    if isinstance(value, dict):
        for key, item in value.items():
            if str(key).casefold() in ("headers", "header") and isinstance(item, dict):
                yield from (str(k) for k in item)
            yield from _header_keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _header_keys(item)


def _path_values(
    declared: tuple[str, ...], sinks: tuple[str, ...], args: dict[str, Any]
) -> Iterator[tuple[str, str]]:
    """Every path-like argument: the declared path parameters, any other argument whose name
    says path/file/dir, and any string that is a file: URI or starts like a path (sinks
    excepted: their values are destinations)."""
    for param in declared:
        for path, leaf in _leaves(_dig(args, param), param):
            yield path, leaf
    skip = {p.split(".", 1)[0] for p in (*declared, *sinks)}
    for path, leaf in _leaves({k: v for k, v in args.items() if k not in skip}, ""):
        if "://" in leaf and not leaf.casefold().startswith("file:"):
            continue  # a URL, not a path
        keys = _keys(path)
        if any(heuristics.is_path_name(k, leaf) for k in keys) or (
            # By shape only where nothing says which arguments are paths, and never inside
            # content (a file's text may quote any path).
            not declared and confine.looks_like_path(leaf)
            and not any(heuristics.is_content_name(k) for k in keys)
        ):
            yield path, leaf


def _dig(args: dict[str, Any], dotted: str) -> Any:
    """args['a']['b'] for 'a.b' (a sink can sit inside an object argument)."""
    value: Any = args
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _present(value: Any) -> bool:
    return value not in (None, "", [], {})


def _scalars(value: Any) -> Iterator[str]:
    """The string forms of a value or of each element of a list-valued argument."""
    for _path, leaf in _leaves(value, ""):
        yield leaf


_HEADER_LINE = re.compile(r"\s*([A-Za-z0-9-]+)\s*:(.*)", re.DOTALL)
MAX_NESTED_JSON = 64 * 1024  # a longer string argument is content, not encoded fields


def _sink_leaves(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """_leaves, and the fields an upstream may read inside a string outside the content: a
    JSON object or array sent as text (`options: '{"bcc": "x@y"}'`) and a raw header line
    where a header map goes (`headers: "Bcc: x@y"`), each under its own path."""
    for leaf_path, leaf in _leaves(value, path):
        yield leaf_path, leaf
        keys = _keys(leaf_path)
        if any(heuristics.is_content_name(k) for k in keys):
            continue
        decoded = _json_container(leaf)
        if decoded is not None:
            yield from _sink_leaves(decoded, leaf_path)
        elif any(k.casefold() in ("headers", "header") for k in keys):
            line = _HEADER_LINE.fullmatch(leaf)
            if line is not None:
                yield f"{leaf_path}.{line.group(1)}", line.group(2).strip()


def _json_container(text: str) -> Any:
    """The object or array a string holds as JSON, or None. A key given twice keeps every
    value (parsers disagree on which one wins)."""
    stripped = text.strip()
    if len(stripped) > MAX_NESTED_JSON or not (
        (stripped.startswith("{") and stripped.endswith("}"))
        or (stripped.startswith("[") and stripped.endswith("]"))
    ):
        return None
    try:
        return json.loads(stripped, object_pairs_hook=_all_values)
    except (ValueError, RecursionError):
        return None


def _all_values(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    counts = Counter(key for key, _value in pairs)
    out: dict[str, Any] = {}
    for key, value in pairs:
        if counts[key] > 1:
            out.setdefault(key, []).append(value)
        else:
            out[key] = value
    return out


def _leaves(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every scalar of `value` as text (numbers too: an account number may be sent as one)."""
    for leaf_path, leaf in scalar_leaves(value, path):
        yield leaf_path, leaf if isinstance(leaf, str) else str(leaf)
