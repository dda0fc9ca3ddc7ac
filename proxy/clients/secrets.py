"""Secret env values of wrapped entries, kept in the OS keyring instead of the config file.

A moved value is replaced by `gatewatch-keyring:<username>` (keyring service "gatewatch");
`gatewatch run` calls resolve_env_refs() before it starts the upstream. `keyring` is imported
only when a reference or a move needs it: it is slow to import and the proxy's start is measured.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from proxy.errors import GatewatchError

SERVICE = "gatewatch"
REF_PREFIX = "gatewatch-keyring:"

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|(^|_)KEY($|_)"
    r"|(^|_)PAT($|_)|CREDENTIAL", re.I)
_SECRET_VALUE = re.compile(
    r"(ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{16,}"
    r"|xox[abpors]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20}|AKIA[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.")


class KeyringError(GatewatchError, RuntimeError):
    """The keyring cannot be used, or a reference in it cannot be resolved."""


def looks_secret(name: str, value: str) -> bool:
    """A value worth moving: a secret-sounding name or a known token shape; never a reference,
    a `${VAR}` placeholder, a file path or an empty value."""
    if not value or value.startswith(REF_PREFIX) or re.fullmatch(r"\$\{[^}]+\}", value):
        return False
    if re.match(r"[/~]|[A-Za-z]:\\", value):
        return False
    return bool(_SECRET_NAME.search(name) or _SECRET_VALUE.match(value))


def username_for(client: str, server: str, var: str) -> str:
    return f"{client}/{server}/{var}"


def is_ref(value: str) -> bool:
    return value.startswith(REF_PREFIX)


def ref_for(username: str) -> str:
    return REF_PREFIX + username


def session_bus_fallback() -> None:
    """Point DBUS_SESSION_BUS_ADDRESS at the user's bus at its standard place
    ($XDG_RUNTIME_DIR/bus, else /run/user/UID/bus) when a client started us without it (Codex
    does): the Secret Service keyring is reached over that bus."""
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS") or not hasattr(os, "getuid"):
        return
    bus = _runtime_dir() / "bus"
    if bus.is_socket() and _private(bus):
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={bus}"


def _private(socket: Path) -> bool:
    """The socket is ours, in a directory of ours that no one else can write to: a socket
    someone else planted in a shared directory would be a fake Secret Service."""
    here, folder = socket.stat(), socket.parent.stat()
    uid = os.getuid()
    return here.st_uid == uid and folder.st_uid == uid and not folder.st_mode & 0o022


def _runtime_dir() -> Path:
    return Path(os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}")


@dataclass(frozen=True)
class Backend:
    label: str  # e.g. "SecretService Keyring"
    plaintext: bool  # readable by anyone who can read the file (keyrings.alt's base64 file)
    file: str | None  # where a file-based backend keeps the secrets
    usable: bool


def backend() -> Backend:
    """The keyring backend this process uses (the first of a chain)."""
    session_bus_fallback()
    import keyring
    from keyring.backends import fail

    chosen = keyring.get_keyring()
    inner = getattr(chosen, "backends", [chosen])
    first = inner[0] if inner else chosen
    modules = {type(b).__module__ for b in inner} or {type(chosen).__module__}
    usable = not isinstance(chosen, fail.Keyring) and not modules <= {
        "keyring.backends.fail", "keyring.backends.null"}
    plaintext = any(c.__module__ == "keyrings.alt.file" and c.__name__ == "PlaintextKeyring"
                    for c in type(first).__mro__)
    file = getattr(first, "file_path", None)
    return Backend(getattr(first, "name", type(first).__name__), plaintext,
                   str(file) if file else None, usable)


def keyring_problem(allow_plaintext: bool = False) -> str | None:
    """Why the keyring should not hold secrets here, or None when it can."""
    found = backend()
    if not found.usable:
        return ("no usable keyring backend is installed (on Linux: a Secret Service such as "
                "GNOME Keyring or KWallet must be running); no secrets were moved")
    if found.plaintext and not allow_plaintext:
        return (f"the keyring backend here is {found.label}, which keeps secrets only "
                f"base64-encoded in {found.file}: no safer than the config file, so no secrets "
                "were moved (start a Secret Service such as GNOME Keyring or KWallet; on the "
                "command line, --allow-plaintext-keyring moves them anyway)")
    return None


def store(username: str, value: str) -> None:
    session_bus_fallback()
    import keyring

    try:
        keyring.set_password(SERVICE, username, value)
    except Exception as exc:  # keyring backends raise their own error types
        raise KeyringError(f"could not store {username} in the keyring: {exc}") from exc


def fetch(username: str) -> str:
    session_bus_fallback()
    import keyring

    try:
        value = keyring.get_password(SERVICE, username)
    except Exception as exc:  # keyring backends raise their own error types
        raise KeyringError(
            f"could not read {username} from the keyring: {exc}{_reachability()}") from exc
    if value is None:
        found = backend()
        where = f"{found.label}, {found.file}" if found.file else found.label
        raise KeyringError(
            f"the keyring ({where}) has no secret {SERVICE}/{username}{_reachability(found)}; if "
            f"it really is gone, put it back with `keyring set {SERVICE} {username}` or "
            "unwrap the server and set the value again")
    return value


def _reachability(found: Backend | None = None) -> str:
    """Why this process may be looking at another keyring than the user's, or ""."""
    reasons = []
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS") and hasattr(os, "getuid"):
        bus = _runtime_dir() / "bus"
        state = "is not a private socket of yours" if bus.exists() else "does not exist"
        reasons.append("there is no session bus here (DBUS_SESSION_BUS_ADDRESS is unset and "
                       f"{bus} {state}), so a Secret Service keyring cannot be reached")
    if found is not None and found.file and "XDG_DATA_HOME" not in os.environ:
        reasons.append("this process has no XDG_DATA_HOME, so the keyring file is looked for "
                       "in its default place; if you set XDG_DATA_HOME, the client must pass "
                       "it on (run `gatewatch wrap` again)")
    return "".join(f"; {r}" for r in reasons)


def forget(username: str) -> None:
    session_bus_fallback()
    import keyring
    from keyring.errors import PasswordDeleteError

    with contextlib.suppress(PasswordDeleteError):
        keyring.delete_password(SERVICE, username)


def resolve_env_refs(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of env with every `gatewatch-keyring:` reference replaced by its secret.

    Raises KeyringError naming the variable when one cannot be resolved: the caller must not
    start the upstream (fail closed).
    """
    out = dict(env)
    refs = {name: value[len(REF_PREFIX):] for name, value in env.items() if is_ref(value)}
    for name, username in refs.items():
        try:
            out[name] = fetch(username)
        except KeyringError as exc:
            raise KeyringError(f"env {name}: {exc}") from None
    return out

