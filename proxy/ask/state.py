"""The `requestState` Gatewatch hands a 2026-07-28 client, sealed so it cannot be forged.

The state comes back through the client, so it is attacker-controlled. It is an HMAC-SHA256
over a small JSON payload, with a secret that lives only in this proxy's memory, bound to the
tool name, a hash of the arguments, a nonce and an expiry. Each nonce opens once. It also says
which question the answer is for, and which tool changes the human approved "once" in earlier
rounds of the same call (a pin approval, then a destination question: two round trips).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Any

import orjson

from proxy.errors import GatewatchError

PREFIX = "gw1."  # tells Gatewatch's state apart from one the upstream may have issued


class InvalidState(GatewatchError):
    """Forged, tampered, replayed, expired, or for another call."""


class StateExpired(InvalidState):
    """Genuine, but the human took longer than ask_timeout."""


def arguments_digest(arguments: dict[str, Any]) -> str:
    canonical = orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(canonical).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Sealed:
    """What an opened state vouches for besides the call itself."""

    question: str  # question_key() of what was asked; "" in states sealed without one
    approved_pins: tuple[str, ...]  # pin digests approved once in earlier rounds of this call


class StateSealer:
    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)
        self._open: dict[str, float] = {}  # nonce -> expiry, for single use

    def seal(
        self,
        tool: str,
        arguments: dict[str, Any],
        ttl: float,
        *,
        now: float | None = None,
        question: str = "",
        approved_pins: tuple[str, ...] = (),
    ) -> str:
        now = time.time() if now is None else now
        self._forget_expired(now)
        nonce = secrets.token_hex(16)
        expires_at = now + ttl
        payload = orjson.dumps(
            {"t": tool, "a": arguments_digest(arguments), "n": nonce, "e": expires_at,
             "q": question, "p": list(approved_pins)}
        )
        token = f"{PREFIX}{_b64(payload)}.{_b64(self._mac(payload))}"
        self._open[nonce] = expires_at
        return token

    def open(
        self, token: Any, tool: str, arguments: dict[str, Any], *, now: float | None = None
    ) -> Sealed:
        """Check a returned state and use it up, whatever the verdict. Raises InvalidState."""
        now = time.time() if now is None else now
        if not isinstance(token, str) or not token.startswith(PREFIX):
            raise InvalidState("not a Gatewatch requestState")
        try:
            body, mac = token[len(PREFIX) :].split(".")
            payload = _unb64(body)
            given = _unb64(mac)
        except ValueError:
            raise InvalidState("malformed requestState") from None
        if not hmac.compare_digest(given, self._mac(payload)):
            raise InvalidState(
                "requestState signature does not match (forged or from an "
                "earlier run of this proxy)"
            )
        claims = orjson.loads(payload)
        if self._open.pop(claims["n"], None) is None:
            raise InvalidState("requestState was already used or has expired")
        if claims["e"] <= now:
            raise StateExpired("requestState expired: the answer came after ask_timeout")
        if claims["t"] != tool:
            raise InvalidState(f"requestState was issued for tool {claims['t']!r}, not {tool!r}")
        if not hmac.compare_digest(claims["a"], arguments_digest(arguments)):
            raise InvalidState("the retried call's arguments differ from the ones asked about")
        return Sealed(str(claims.get("q", "")), tuple(str(p) for p in claims.get("p", ())))

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()

    def _forget_expired(self, now: float) -> None:
        for nonce in [n for n, expiry in self._open.items() if expiry <= now]:
            del self._open[nonce]
