"""Secret env values of wrapped entries, kept in the OS keyring instead of the config file.

A moved value is replaced by `gatewatch-keyring:<username>` (keyring service "gatewatch");
`gatewatch run` calls resolve_env_refs() before it starts the upstream. `keyring` is imported
only when a reference or a move needs it: it is slow to import and the proxy's start is measured.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping

SERVICE = "gatewatch"
REF_PREFIX = "gatewatch-keyring:"

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|(^|_)KEY($|_)"
    r"|(^|_)PAT($|_)|CREDENTIAL", re.I)
_SECRET_VALUE = re.compile(
    r"(ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{16,}"
    r"|xox[abpors]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20}|AKIA[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.")


class KeyringError(RuntimeError):
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


def keyring_problem() -> str | None:
    """Why the keyring cannot hold secrets here, or None when it can."""
    import keyring
    from keyring.backends import fail

    backend = keyring.get_keyring()
    names = {type(b).__module__ for b in getattr(backend, "backends", [backend])}
    if isinstance(backend, fail.Keyring) or names <= {"keyring.backends.fail",
                                                      "keyring.backends.null"}:
        return ("no usable keyring backend is installed (on Linux: a Secret Service such as "
                "GNOME Keyring or KWallet must be running); no secrets were moved")
    return None


def store(username: str, value: str) -> None:
    import keyring

    try:
        keyring.set_password(SERVICE, username, value)
    except Exception as exc:  # keyring backends raise their own error types
        raise KeyringError(f"could not store {username} in the keyring: {exc}") from exc


def fetch(username: str) -> str:
    import keyring

    try:
        value = keyring.get_password(SERVICE, username)
    except Exception as exc:  # keyring backends raise their own error types
        raise KeyringError(f"could not read {username} from the keyring: {exc}") from exc
    if value is None:
        raise KeyringError(
            f"the keyring has no secret {SERVICE}/{username}; put it back with "
            f"`keyring set {SERVICE} {username}` or unwrap the server and set the value again")
    return value


def forget(username: str) -> None:
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

