"""Mail recipients parsed as RFC 5322 address lists (stdlib `email.headerregistry`).

A recipient argument is a header value to the mail server: `a@evil.example, b@corp.example`
is two recipients, `Boss <a@evil.example>` is a@evil.example, and `mailto:b@corp?bcc=a@evil`
is both. Each address is checked on its own; a value that is not a clean address list is
reported as such, with every address-shaped token in it, so it can never be trusted whole.
A local part with `%` or `!` is sender-specified routing: a mail server that honours it
(Postfix rewrites `user%host` and `host!user` by default) relays `a%evil.example@corp.example`
on to a@evil.example, so such an address is never trusted, and the mailbox it routes to is
one of its destinations.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, unquote

from proxy.engine.urls import canonical_host, odd_characters

# One plain address, the common case: no header parser needed.
_SIMPLE = re.compile(r"[A-Za-z0-9._%+'-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?")
# Address-shaped tokens, for the cross-check and for values that do not parse.
_TOKEN = re.compile(r"[^\s,;<>()\"@]+@[^\s,;<>()\"@]+")
_TRAILING_DOT = re.compile(r"(@[^\s,;<>()\"]+?)\.(?=\s*(?:$|[,;>)]))")
RECIPIENT_HEADERS = frozenset(["to", "cc", "bcc", "resent-to", "resent-cc", "resent-bcc"])
# mailto fields that hold no address; any other field's addresses are destinations too.
_TEXT_FIELDS = frozenset(["subject", "body"])
_FIELD_NAME = re.compile(r"[A-Za-z0-9-]+")
_ROUTING = "an address routed on by its local part (% or !)"


@dataclass(frozen=True)
class Mailbox:
    local: str  # case-folded
    domain: str  # IDNA ASCII, lower case, no trailing dot; `[ip]` for an address literal

    @property
    def key(self) -> str:
        return f"{self.local}@{self.domain}"


@dataclass(frozen=True)
class Recipients:
    mailboxes: tuple[Mailbox, ...]
    problem: str | None = None  # why this is not a clean address list
    injection: bool = False  # a line break that would start a new header


def mailbox(local: str, domain: str) -> Mailbox | None:
    local = local.strip()
    dom = domain.strip()
    if dom.startswith("[") and dom.endswith("]"):
        host = canonical_host(dom[1:-1])
        host = f"[{host}]" if host is not None else None
    else:
        host = canonical_host(dom)
        if host is not None and "." not in host and ":" not in host:
            host = None  # a bare label is no mail domain anyone routes to
    if not local or host is None or any(ch in local for ch in '@" \t'):
        return None
    return Mailbox(local.casefold(), host)


def _tokens(text: str) -> list[Mailbox]:
    found: list[Mailbox] = []
    for token in _TOKEN.findall(text):
        local, _, domain = token.strip("'").rpartition("@")
        box = mailbox(local, domain.rstrip("."))
        if box is not None and box not in found:
            found.append(box)
    return found


def _without_odd(text: str) -> str:
    return "".join(" " if unicodedata.category(ch)[0] in "CZ" and ch != " " else ch
                   for ch in text)


def _routed(box: Mailbox) -> Mailbox | None:
    """The mailbox `user%host@relay` or `host!user@relay` is relayed to, or None."""
    if "%" in box.local:
        local, _, host = box.local.rpartition("%")
    elif "!" in box.local:
        host, _, local = box.local.partition("!")
    else:
        return None
    return mailbox(local, host)


def _with_routes(found: Recipients) -> Recipients:
    """`found`, never trusted when a local part routes, with the mailboxes routed to added."""
    if not any(ch in b.local for b in found.mailboxes for ch in "%!"):
        return found
    routed = [r for r in map(_routed, found.mailboxes) if r is not None]
    boxes = found.mailboxes + tuple(r for r in dict.fromkeys(routed) if r not in found.mailboxes)
    return Recipients(boxes, found.problem or _ROUTING, found.injection)


def parse_recipients(value: str) -> Recipients:
    """The mailboxes of one recipient value (an address, a list, `Name <addr>`)."""
    return _with_routes(_parse_recipients(value))


def _parse_recipients(value: str) -> Recipients:
    text = unicodedata.normalize("NFKC", value).strip() if not value.isascii() else value.strip()
    if "\r" in text or "\n" in text:
        return Recipients(tuple(_tokens(_without_odd(text))), "a line break", injection=True)
    if odd_characters(text):
        return Recipients(tuple(_tokens(_without_odd(text))),
                          "control or invisible characters")
    if _SIMPLE.fullmatch(text):
        local, _, domain = text.rpartition("@")
        box = mailbox(local, domain.rstrip("."))
        return Recipients((box,)) if box is not None else Recipients((), "not a mail address")
    return _parse_list(text)


def _parse_list(text: str) -> Recipients:
    from email.policy import default

    try:
        header = default.header_factory("To", _TRAILING_DOT.sub(r"\1", text))
        addresses = header.addresses
    except Exception:  # the stdlib parser raises IndexError on `x@`, and may raise others
        # A value the parser cannot read is no clean list: its address-shaped tokens still
        # count, so taint and the sink gate see them, and none is trusted.
        return Recipients(tuple(_tokens(text)), "not a clean address list")
    parsed: list[Mailbox] = []
    problem = "not a clean address list" if header.defects else None
    for address in addresses:
        box = mailbox(address.username, address.domain)
        if box is None:
            problem = problem or f"{address.addr_spec!r} is not a mail address"
        elif box not in parsed:
            parsed.append(box)
    tokens = _tokens(text)
    if problem is None and set(tokens) != set(parsed):
        problem = "addresses outside the address list (a display name that holds one?)"
    if problem is None and not parsed:
        problem = "no mail address"
    return Recipients(tuple(parsed) + tuple(t for t in tokens if t not in parsed), problem)


def parse_mailto(value: str) -> Recipients:
    """`mailto:a@x,b@y?cc=c@z&bcc=d@w&subject=...`: every recipient, from the path and from
    the to / cc / bcc fields."""
    text = value.strip()[len("mailto:"):]
    path, _, query = text.partition("?")
    parts = [parse_recipients(unquote(path))] if path else []
    injection = False
    odd_field = None
    for name, field in parse_qsl(query, keep_blank_values=True):
        if "\r" in field or "\n" in field or "\r" in name or "\n" in name:
            injection = True
        low = name.strip().casefold()
        if not _FIELD_NAME.fullmatch(low):
            # `to%00=...`: a mailer in C reads the name up to the NUL, as `to`.
            odd_field = odd_field or f"an odd mailto field name {name!r}"
        if low in _TEXT_FIELDS or not field.strip():
            continue
        if low in RECIPIENT_HEADERS:
            parts.append(parse_recipients(field))
        elif "@" in field:  # reply-to, from, ...: where replies or bounces go
            found = parse_recipients(field)
            parts.append(replace(found, problem=found.problem or f"an address in the mailto "
                                 f"{name!r} field"))
    boxes: list[Mailbox] = []
    for part in parts:
        boxes += [b for b in part.mailboxes if b not in boxes]
        injection = injection or part.injection
    problem = next((p.problem for p in parts if p.problem), odd_field)
    if injection:
        problem = "a line break in a mailto header"
    elif not boxes:
        problem = "no mail address"
    return Recipients(tuple(boxes), problem, injection)
