"""The verdict a tools/call would get, without running anything: the one service behind
`gatewatch check` and the MCP tool `check_verdict` (they only format what it returns).

The engine runs as a proxy would run it (packs, the user's policy, a draft on top, the
detector's argument scans when it is on, remembered approvals) against a scratch database, so
nothing is pinned, counted or tainted for real. The tool is listed as a server would list it;
the first listing is approved on first use, so pinning does not mask the contracts asked about.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proxy.decision import Decision
from proxy.errors import GatewatchError

if TYPE_CHECKING:
    from proxy.engine.policy import Pack
    from proxy.store.database import Database

SESSION = "gatewatch-check"
UNTRUSTED_TOOL = "untrusted_context"  # the tool name the supplied untrusted texts are filed under


class CheckError(GatewatchError, ValueError):
    """The check could not be made: a malformed policy, pack or setting, or remembered
    approvals that cannot be read. The message names the file (and line) and the reason."""


@dataclass(frozen=True)
class CheckResult:
    decision: Decision
    pack: str | None  # the server pack the engine chose
    layers: tuple[str, ...]  # where the tool's policy came from, lowest first

    def as_dict(self) -> dict[str, Any]:
        d = self.decision
        return {
            "verdict": d.verdict,
            "contract": d.contract,
            "reason": d.reason,
            "destination": d.destination,
            "origin": d.origin,
            "detail": d.detail,
            "pack": self.pack,
            "layers": list(self.layers),
        }


def check_call(
    server: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    untrusted: Iterable[str] = (),
    policy_path: Path | None = None,
    policy_yaml: str | None = None,
    packs: Callable[[], list[Pack]] | None = None,
    detector: Callable[[], Any] | None = None,
) -> CheckResult:
    """Decide `tool(arguments)` on `server` after the agent read the `untrusted` texts.

    `policy_path` (a file) and then `policy_yaml` (a draft's text) go on top of the installed
    policy, as `gatewatch run --policy` does. `packs` and `detector` build the server packs and
    the detector (None from the detector: turned off); by default they are read from disk, a
    long-running caller passes cached ones. Raises CheckError for anything that stops a check.
    """
    from proxy.detector import PackError
    from proxy.engine import Engine, PolicyError, load_policy
    from proxy.settings import SettingsError

    if not isinstance(arguments, dict):
        raise CheckError("the arguments must be a JSON object")
    with tempfile.TemporaryDirectory(prefix="gatewatch-check-") as tmp:
        draft = Path(tmp) / "policy.yaml"
        try:
            files = _policy_files(policy_path)
            if policy_yaml is not None:
                draft.write_text(policy_yaml, encoding="utf-8")
                files.append(draft)
            docs = [load_policy(f) for f in files]
            engine_packs = packs() if packs is not None else _load_packs()
            hooks = _scanners(detector)
            db = _scratch(server, tool)
            try:
                engine = Engine(server, SESSION, db, engine_packs, docs,
                                policy_paths=tuple(files), **hooks)
                engine.tools_listed([{
                    "name": tool,
                    "inputSchema": {"type": "object", "properties": {k: {} for k in arguments}},
                }])
                for text in untrusted:
                    engine.result_seen(UNTRUSTED_TOOL,
                                       {"content": [{"type": "text", "text": text}]})
                return CheckResult(engine.decide(tool, arguments), engine.pack,
                                   tuple(engine.policy_for(tool).layers))
            finally:
                db.close()
        except PolicyError as exc:
            if exc.path == draft:
                raise CheckError(f"policy_yaml line {exc.line}: {exc.reason}") from exc
            raise CheckError(str(exc)) from exc  # an installed file: its message names it
        except PackError as exc:
            raise CheckError(f"the detector's packs are broken: {exc}") from exc
        except SettingsError as exc:
            raise CheckError(str(exc)) from exc


def _policy_files(policy_path: Path | None) -> list[Path]:
    from proxy import paths

    user = paths.user_policy_path()
    files = [user] if user.exists() else []
    if policy_path is not None:
        files.append(Path(policy_path).expanduser())
    return files


def _load_packs() -> list[Pack]:
    from proxy.engine.packs import load_packs

    return load_packs()


def _scanners(detector: Callable[[], Any] | None) -> dict[str, Any]:
    """The detector's hooks for the engine, as the proxy builds them (proxy.components):
    none when the detector is turned off in settings or in detector.yaml."""
    from proxy.components import scanners, user_detector
    from proxy.settings import load_settings

    if not load_settings().detector:
        return {}
    return scanners(detector() if detector is not None else user_detector())


def _scratch(server: str, tool: str) -> Database:
    from proxy import paths
    from proxy.store.scratch import scratch_with_trust

    db = paths.db_path()
    try:
        return scratch_with_trust(server, tool, db)
    except sqlite3.Error as exc:
        raise CheckError(f"{db}: cannot read remembered approvals: {exc}") from exc
