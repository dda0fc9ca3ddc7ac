"""Destinations: one canonical model for every place a call can send data.

Policy, packs, remembered trust, taint and the popup all compare `Destination.key`, built by
parsing a value the way the upstream will use it: URLs WHATWG-style (proxy/engine/urls.py),
mail recipients as RFC 5322 address lists (proxy/engine/mail.py), IP literals with
`ipaddress`. A value that parses oddly (user info, backslashes, invisible characters, a
recipient field that is not a clean address list) is still parsed, so taint sees the real
host or mailbox, but it carries `untrusted` and no trust entry may vouch for it.

Finding destinations inside text (`extract_destinations`) is linear: each kind is found from a
literal anchor (`@`, `://`, `.`, `#`, `+`, ...) that a fast substring search locates, so text
without candidates costs one scan per anchor, and results are cached per text so one frame's
text is never scanned twice.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from proxy.engine.urls import (
    canonical_ip,
    no_slashes_after_scheme,
    odd_characters,
    parse_url,
    without_surrogates,
)

if TYPE_CHECKING:
    from proxy.engine.mail import Recipients

EMAIL = "email"
URL = "url"
HOST = "host"
IP = "ip"
PHONE = "phone"
HANDLE = "handle"
CHANNEL = "channel"
ACCOUNT = "account"  # IBAN-like bank account numbers
OTHER = "other"
URL_HOST = "url_host"  # taint only: the host of a URL seen in a result

_EMAIL_RE = re.compile(
    r"[A-Za-z0-9_%+-][A-Za-z0-9._%+'-]{0,63}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\.?"
)
_URL_RE = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]{1,15}://[^\s<>\"'`)\]}]+")
_URL_TAIL = re.compile(r"[^\s<>\"'`)\]}]+")
# Bare host names: a dotted name whose last label is a TLD-like word and not a file extension.
_HOST_RE = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,126}[A-Za-z]{2,24}\.?"
    r"(?:/[^\s<>\"'`)\]}]*)?"
)
# Names with letters beyond ASCII (`bücher.example`, `аpple.com` with a Cyrillic а): the shape
# of _HOST_RE with any letter or digit in a label. Found like the ASCII ones, from the dot after
# the first label on the reversed text; only in text that is not ASCII, and only names that are
# not (the ASCII ones are _find_dotted's).
_IDN_HOST_RE = re.compile(
    r"(?:[^\W_](?:(?:[^\W_]|-){0,61}[^\W_])?\.){1,126}[^\W\d_]{2,24}\.?"
    r"(?:/[^\s<>\"'`)\]}]*)?"
)
_IDN_FIRST_DOT_REVERSED = re.compile(r"\.(?<=[^\W_]\.)(?=((?:[^\W_]|-){1,63})(?![\w@./-]))")
_IPV4_RE = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\d.]*\d)")
_PHONE_RE = re.compile(r"\+\d[\d \t().-]{6,18}\d|\(\d{3}\) ?\d{3}-\d{4}|\d{3}-\d{3}-\d{4}")
_HANDLE_RE = re.compile(r"@[A-Za-z0-9_][A-Za-z0-9_.-]{0,38}[A-Za-z0-9_]")
_CHANNEL_RE = re.compile(r"#[A-Za-z][\w.-]{0,79}")
_IBAN_RE = re.compile(r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,30}")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_LOCAL_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+'-"
)
# Read on the reversed text, so the label before a dot is found by the regex engine, not by a
# walk back in Python: a dot that ends a host's first label (alphanumeric after it; before it
# 1 to 63 label characters, and before those nothing that continues a name: a word character,
# '@', '.', '/', '-'). Its group is that label, reversed. Any other dot cannot start a name.
_FIRST_DOT_REVERSED = re.compile(r"\.(?<=[A-Za-z0-9]\.)(?=([A-Za-z0-9-]{1,63})(?![\w@./-]))")
# An IPv6 candidate is a whole run of hex digits, colons and dots holding a colon, 2 to 45
# characters long (the longest IPv6 text, with an embedded IPv4), with no word character on
# either side: what (?<![\w:.])(?=[0-9A-Fa-f.]*:)[0-9A-Fa-f:.]{2,45}(?![\w:.]) matches. Runs are
# found from their colons, so text without colons costs one search.
_IPV6_CHARS = frozenset("0123456789abcdefABCDEF:.")
_IPV6_TAIL = re.compile(r"[0-9A-Fa-f:.]*")
_IPV6_LONGEST = 45
# Every address holds '::' or seven colons with only hex digits and dots between them: text
# with neither (JSON, logs, most code) has no candidate worth walking its colons for.
_SEVEN_COLONS = re.compile(r":(?:[0-9A-Fa-f.]*:){6}")
_DASH_PHONE = re.compile(r"-\d{3}-\d{4}")

# Last labels that are file extensions far more often than top-level domains.
_NOT_TLDS = frozenset(
    [
        "txt", "md", "py", "js", "ts", "json", "yaml", "yml", "toml", "csv", "pdf", "doc", "docx",
        "xls", "xlsx", "ppt", "pptx", "png", "jpg", "jpeg", "gif", "svg", "html", "htm", "css",
        "sh", "log", "zip", "gz", "tar", "xml", "ini", "cfg", "conf", "lock", "exe", "dll", "so",
        "rs", "go", "java", "rb", "php", "c", "h", "cpp", "mp3", "mp4", "wav", "mov", "eml",
        "ics", "bak", "tmp", "db", "sqlite",
    ]
)

# No address, URL, handle or phone number is longer than this; longer values are content.
MAX_DESTINATION = 2048
# Extraction reads at most this much of one string. A destination hidden past it is not
# recorded as tainted, so a send to it is asked about (unproven), never silently allowed.
MAX_SCAN = 256 * 1024


@dataclass(frozen=True)
class Destination:
    key: str  # the canonical form every comparison uses (and the trust and taint tables store)
    kind: str
    host: str | None = None  # URL/host/IP: canonical host; e-mail: canonical domain
    path: str = ""  # URL: canonical path, no trailing '/'
    local: str | None = None  # e-mail: the local part, case-folded
    has_query: bool = False
    untrusted: str | None = None  # why no trust entry may vouch for it
    injection: bool = False  # a line break where a mail header would be
    # URL: the canonical path with its case, which a web server reads (`path` and `key` fold
    # it, so that taint matches however a path is written; trust compares this one).
    exact_path: str = ""
    # URL: the scheme as written, lower case; '' when none was written (a bare host: the tool
    # picks).
    scheme: str = ""

    @property
    def secure(self) -> bool | None:
        """secure_scheme of the scheme written: None when none was."""
        return secure_scheme(self.scheme)

    @property
    def site(self) -> str | None:
        """For URL-like destinations: the host[:port] part of the key."""
        if self.kind in (URL, HOST, IP):
            return self.key.split("/", 1)[0]
        return None

    def with_problem(self, why: str) -> Destination:
        return replace(self, untrusted=self.untrusted or why)


def _clean(value: str) -> str:
    if not value.isascii():  # ASCII is already NFKC and has no format characters
        value = unicodedata.normalize("NFKC", value)
        # Zero-width and bidi controls must not make two spellings of one address differ.
        value = "".join(ch for ch in value if unicodedata.category(ch) != "Cf")
    # Whitespace runs as one space, trimmed: re.sub(r"\s+", " ", value).strip(), in C.
    return " ".join(value.split())


def _tld_ok(host: str) -> bool:
    name = host.split("/", 1)[0].rstrip(".")
    return name.rsplit(".", 1)[-1].casefold() not in _NOT_TLDS


_SECURE = {"https": True, "wss": True, "http": False, "ws": False}  # secure_scheme, trust_keys


def secure_scheme(scheme: str) -> bool | None:
    """True for https/wss, False for http/ws, None for any other scheme."""
    return _SECURE.get(scheme.casefold())


def _url(text: str, assume_http: bool = False) -> Destination | None:
    parsed = parse_url(text, assume_http)
    if parsed is None:
        return None
    kind = IP if parsed.host_is_ip and not parsed.path else (URL if parsed.path or not
                                                              assume_http else HOST)
    return Destination(parsed.key, kind, parsed.host, parsed.path.casefold(), None,
                       parsed.has_query, parsed.untrusted, exact_path=parsed.path,
                       scheme=parsed.scheme.casefold() if parsed.scheme_written else "")


def _mail(recipients: Recipients) -> list[Destination]:
    out = [Destination(b.key, EMAIL, b.domain, local=b.local, untrusted=recipients.problem,
                       injection=recipients.injection) for b in recipients.mailboxes]
    return out


def _other(text: str, kind: str = OTHER, untrusted: str | None = None) -> Destination:
    return Destination(text.casefold(), kind, untrusted=untrusted)


def _shaped(text: str) -> list[Destination] | None:
    """A whole value that is one kind of destination, canonicalised; None when it is not."""
    if _PHONE_RE.fullmatch(text):
        digits = re.sub(r"\D", "", text)
        return [Destination(("+" if text.startswith("+") else "") + digits, PHONE)]
    if _HANDLE_RE.fullmatch(text):
        return [_other(text, HANDLE)]
    if _CHANNEL_RE.fullmatch(text):
        return [_other(text, CHANNEL)]
    if _IBAN_RE.fullmatch(text):
        return [Destination(text.replace(" ", "").casefold(), ACCOUNT)]
    ip = canonical_ip(text)
    if ip is not None:
        return [Destination(ip, IP, ip)]
    if _HOST_RE.fullmatch(text) and _tld_ok(text):
        dest = _url(text, assume_http=True)
        return [dest] if dest is not None else None
    return None


def parse(value: str, expect: str | None = None) -> list[Destination]:
    """Every destination one argument value names. `expect` is the kind its parameter takes
    (EMAIL, URL, HOST or None to go by shape): a value that does not parse as that kind is
    returned as untrusted, with any destination found inside it."""
    raw = str(value)
    if len(raw) > MAX_DESTINATION:
        return [_other(raw[:MAX_DESTINATION], untrusted="too long to be one destination")]
    return list(_parse(raw, expect))


@lru_cache(maxsize=1024)
def _parse(raw: str, expect: str | None) -> tuple[Destination, ...]:
    """parse, remembered: a send whose content holds a minified file asks the trust list
    about each of its thousands of names, most of them many times."""
    return tuple(_parse_value(raw, expect))


def _parse_value(raw: str, expect: str | None) -> list[Destination]:
    odd = odd_characters(raw.strip())
    text = _clean(raw)
    if not text:
        return []
    low = text.casefold()
    found: list[Destination] | None = None
    if low.startswith("mailto:"):
        from proxy.engine.mail import parse_mailto  # mail parsing only once a value needs it

        found = _mail(parse_mailto(raw.strip()))
    elif "://" in text or expect in (URL, HOST) or no_slashes_after_scheme(text):
        dest = _url(raw.strip(), assume_http=True) if "\n" not in raw else None
        found = [dest] if dest is not None else None
    elif "@" in text[1:]:
        from proxy.engine.mail import parse_recipients

        found = _mail(parse_recipients(raw))
    else:
        found = _shaped(text)
    if not found:
        inner = [d for d in _inner(text) if d.key != low]
        why = f"not a {expect} value" if expect in (EMAIL, URL, HOST) else None
        if expect in (EMAIL, URL, HOST) or inner:
            why = why or "not one destination"
        return [_other(text, untrusted=why), *(d.with_problem(why or "") for d in inner)]
    if odd:
        found = [d.with_problem("control or invisible characters") for d in found]
    if expect == EMAIL and any(d.kind != EMAIL for d in found):
        found = [d if d.kind == EMAIL else d.with_problem("not a mail address") for d in found]
    return found


def _inner(text: str) -> list[Destination]:
    out: list[Destination] = []
    for key, kind, _s, _e in extract_destinations(text):
        out.append(Destination(key, kind))
    return out


def normalize_destination(value: str) -> str:
    """The canonical key of a value that is one clean destination, else its case-folded text.
    Idempotent; never raises on odd input."""
    dest = _one_clean(value)
    return dest.key if dest is not None else _clean(str(value)).casefold()


# -- what a human's approval is remembered under --------------------------------------------


def _exact(dest: Destination) -> str:
    """`key` with a URL's path in its own case: a web server reads the path with its case, so
    an approval of /services/T0CORP is not one of /services/t0corp."""
    if dest.kind not in (URL, HOST, IP) or not dest.exact_path:
        return dest.key
    return dest.key[: len(dest.key) - len(dest.path)] + dest.exact_path


def trust_key(dest: Destination) -> str:
    """The key a human's approval of `dest` is remembered under (grants, the session's
    approvals) and the form a question shows: `key` with a URL's path in its case and the web
    scheme the call wrote (an approval of an encrypted send is not one of the same data in
    clear). Denials stay on `key`: a standing deny covers every spelling."""
    exact = _exact(dest)
    return f"{dest.scheme}://{exact}" if dest.secure is not None else exact


_CLEAR = {"https": "http", "wss": "ws"}


def trust_keys(dest: Destination) -> tuple[str, ...]:
    """The remembered keys that vouch for `dest`, as the policy's trust list matches schemes:
    an approval of https:// (wss://) vouches for that scheme or none written, never for
    clear text written out; one of http:// (ws://) or of no scheme for either."""
    exact = _exact(dest)
    if dest.secure is True:
        return (f"{dest.scheme}://{exact}", f"{_CLEAR[dest.scheme]}://{exact}", exact)
    if dest.secure is False:
        return (f"{dest.scheme}://{exact}", exact)
    if dest.kind in (URL, HOST, IP) and not dest.scheme:
        return (exact, *(f"{scheme}://{exact}" for scheme in _SECURE))
    return (exact,)


def _one_clean(value: str) -> Destination | None:
    found = parse(value)
    return found[0] if len(found) == 1 and not found[0].untrusted else None


def grant_key(value: str) -> str:
    """trust_key of a value that is one clean destination, else normalize_destination's
    key. Idempotent (a question's destinations are already trust keys)."""
    dest = _one_clean(value)
    return trust_key(dest) if dest is not None else normalize_destination(value)


def grant_lookup_keys(value: str) -> tuple[str, ...]:
    """trust_keys of a value, as grant_key reads it."""
    dest = _one_clean(value)
    return trust_keys(dest) if dest is not None else (normalize_destination(value),)


def destination_kind(value: str) -> str | None:
    """What kind of destination the whole value is, or None when it is not destination-shaped."""
    if len(value) > MAX_DESTINATION:
        return None
    text = _clean(str(value))
    if text.casefold().startswith("mailto:"):
        text = text[7:].split("?", 1)[0]
    if "@" in text[1:] and " " not in text.strip():
        return EMAIL if _EMAIL_RE.fullmatch(text) else None
    if text.endswith(">") and "<" in text and _EMAIL_RE.fullmatch(text.rsplit("<", 1)[1][:-1]):
        return EMAIL
    if _URL_RE.fullmatch(text):
        return URL
    shaped = _shaped(text)
    return shaped[0].kind if shaped else None


# -- finding destinations inside text -----------------------------------------------------

Found = tuple[str, str, int, int]  # (key, kind, start, end)
_Add = Callable[[int, int, "str | None", str], None]
_Taken = Callable[[int, int], bool]


@lru_cache(maxsize=64)
def _email_key(local: str, domain: str) -> str | None:
    from proxy.engine.mail import mailbox

    box = mailbox(local, domain.rstrip("."))
    return box.key if box is not None else None


@lru_cache(maxsize=1024)
def _url_key(text: str, assume_http: bool) -> tuple[str, str] | None:
    dest = _url(text, assume_http)
    return (dest.key, dest.kind) if dest is not None else None


def extract_destinations(text: str) -> tuple[Found, ...]:
    """Every destination-shaped value inside text, left to right, none overlapping."""
    return _extract(text[:MAX_SCAN])


class _Spans:
    """The spans found so far, sorted and never overlapping: a span is kept only when it has a
    key and overlaps none (the first finder to claim characters keeps them). The C extension's
    Spans is this, in C."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int, str, str]] = []  # (start, end, key, kind)
        self._starts: list[int] = []

    def taken(self, start: int, end: int) -> bool:
        spans = self._spans
        i = bisect.bisect_right(self._starts, start) - 1
        if i >= 0 and spans[i][1] > start:
            return True
        return i + 1 < len(spans) and spans[i + 1][0] < end

    def add(self, start: int, end: int, key: str | None, kind: str) -> None:
        if key and not self.taken(start, end):
            i = bisect.bisect_right(self._starts, start)
            self._starts.insert(i, start)
            self._spans.insert(i, (start, end, key, kind))

    def found(self) -> tuple[Found, ...]:
        return tuple((key, kind, s, e) for s, e, key, kind in self._spans)


@lru_cache(maxsize=32)
def _extract(text: str) -> tuple[Found, ...]:
    module = native_finders()
    # The C extension's Spans also walks the dots and the '#'s itself (add_dotted, add_channels).
    spans: Any = _Spans() if module is None else module.Spans()
    add, taken = spans.add, spans.taken
    if "://" in text:
        _find_urls(text, add)
    if "@" in text:
        _find_at(text, add, taken)
    if module is not None:
        for start, end in module.ipv6_runs(text):
            add(start, end, canonical_ip(text[start:end]), IP)
    elif "::" in text or (text.count(":") >= 7 and _SEVEN_COLONS.search(text)):
        _find_ipv6(text, add)
    if "." in text:
        if module is not None:
            spans.add_dotted(text, _NOT_TLDS, _url_key, canonical_ip, IP, HOST)
        else:
            _find_dotted(text, add, taken)
    if "+" in text or "(" in text or "-" in text:
        _find_phones(text, add)
    if "#" in text:
        if module is not None:
            spans.add_channels(text, CHANNEL)
        else:
            for at, end in _channels(text):
                add(at, end, text[at:end].casefold(), CHANNEL)
    _find_ibans(text, add)
    if not text.isascii():  # last: a name found here never hides one found before
        _find_idn_hosts(text, add, taken)
    found: tuple[Found, ...] = spans.found()
    return found


def _channels(text: str) -> list[tuple[int, int]]:
    """(start, end) of each channel name not glued to what is before it. The pattern cannot
    hold a second '#', so every '#' that starts a channel is visited."""
    out = []
    for match in _CHANNEL_RE.finditer(text):
        at = match.start()
        if at and (text[at - 1].isalnum() or text[at - 1] in "_&#/"):
            continue
        out.append((at, at + len(match.group(0).rstrip(".,;:!?"))))
    return out


def _find_urls(text: str, add: _Add) -> None:
    module = native_finders()
    for start, end in _url_spans(text) if module is None else module.url_spans(text):
        found = _url_key(text[start:end], False)
        if found is not None:
            add(start, end, found[0], URL)


def _url_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each `scheme://...` candidate, trailing punctuation stripped."""
    out = []
    for m in re.finditer("://", text):
        at = m.start()
        start = at
        while start > 0 and at - start < 16 and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        while start < at and not text[start].isalpha():
            start += 1
        if at - start < 2:
            continue
        tail = _URL_TAIL.match(text, at + 3)
        if tail is None:
            continue
        raw = text[start:tail.end()].rstrip(".,;:!?")
        out.append((start, start + len(raw)))
    return out


def _find_at(text: str, add: _Add, taken: _Taken) -> None:
    for m in re.finditer("@", text):
        at = m.start()
        start = at
        while start > 0 and at - start < 64 and text[start - 1] in _LOCAL_CHARS:
            start -= 1
        while start < at and text[start] in ".'":
            start += 1
        if start < at:
            if start > 0 and at - start >= 64 and text[start - 1] in _LOCAL_CHARS:
                continue
            match = _EMAIL_RE.match(text, start)
            if match is None or match.start() != start:
                continue
            raw = match.group(0).rstrip(".")
            local, _, domain = raw.rpartition("@")
            add(start, start + len(raw), _email_key(local, domain), EMAIL)
        elif at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_./@"):
            match = _HANDLE_RE.match(text, at)
            if match is not None:
                add(at, match.end(), match.group(0).casefold(), HANDLE)


def native_finders() -> Any:
    """The C extension's finders (proxy/detector/_native.c), or None: the Python path."""
    from proxy.detector import native

    return native.load()


def _find_dotted(text: str, add: _Add, taken: _Taken) -> None:
    """Bare host names (with an optional path) and IPv4 addresses, found from their dots (on
    the C path, Spans.add_dotted: this walk with its adds in C)."""
    done = 0
    for start, dot in _first_labels(text, _FIRST_DOT_REVERSED):
        if dot < done:
            continue
        if text[dot - 1].isdigit() and text[dot + 1].isdigit():
            ip_match = _IPV4_RE.match(text, start)
            if ip_match is not None:
                done = ip_match.end()
                ip = canonical_ip(ip_match.group(0))
                add(start, done, ip, IP)
                continue
        end = _add_host(text, start, _HOST_RE, add, taken, ascii_ok=True)
        if end is not None:
            done = end


def _find_idn_hosts(text: str, add: _Add, taken: _Taken) -> None:
    """Bare host names with a label beyond ASCII, canonicalised to their `xn--` form: a name
    an injection writes in Unicode taints what a call writes either way."""
    done = 0
    for start, dot in _first_labels(text, _IDN_FIRST_DOT_REVERSED):
        if dot < done:
            continue
        end = _add_host(text, start, _IDN_HOST_RE, add, taken, ascii_ok=False)
        if end is not None:
            done = end


def _first_labels(text: str, reversed_dots: Any) -> list[tuple[int, int]]:
    """(where the label starts, its dot) for each dot that can end a host's first label, left
    to right: `reversed_dots` reads the reversed text, so the regex engine finds the label."""
    last = len(text) - 1
    found = [(last - m.start() - (m.end(1) - m.start(1)), last - m.start())
             for m in reversed_dots.finditer(text[::-1])]
    found.reverse()
    return found


def _add_host(text: str, start: int, host_re: Any, add: _Add, taken: _Taken, *,
              ascii_ok: bool) -> int | None:
    """The host name `host_re` reads at `start`, added when it is one; where it ends (None
    when nothing matched there). `ascii_ok=False` keeps only names beyond ASCII."""
    match = host_re.match(text, start)
    if match is None:
        return None
    raw = match.group(0).rstrip(".,;:!?")
    done = start + len(raw)
    if (not ascii_ok and raw.split("/", 1)[0].isascii()) or not _tld_ok(raw) or taken(start, done):
        return done
    after = text[done:done + 1]
    if after and (after.isalnum() or after in "_@"):
        return done
    found = _url_key(raw, True)
    if found is not None:
        add(start, done, found[0], found[1])
    return done


def _find_ipv6(text: str, add: _Add) -> None:
    """Bare IPv6 addresses ("2001:db8::7", "[::1]", "::ffff:10.1.1.3"): a run of hex digits,
    colons and dots of at most 45 characters that ipaddress reads as one."""
    for start, run in _ipv6_runs(text):
        raw = run.rstrip(".")
        if ("::" not in raw and raw.count(":") != 7) or not any(c.isdigit() for c in raw):
            continue  # a time (12:30:45), C++'s a::b, dead::beef: not an address
        ip = canonical_ip(raw)
        if ip is not None:
            add(start, start + len(raw), ip, IP)


def _ipv6_runs(text: str) -> Iterator[tuple[int, str]]:
    """(start, run) of each IPv6 candidate (see _IPV6_CHARS), left to right."""
    colon = text.find(":")
    while colon >= 0:
        start = colon
        while start > 0 and colon - start <= _IPV6_LONGEST and text[start - 1] in _IPV6_CHARS:
            start -= 1
        tail = _IPV6_TAIL.match(text, colon)
        assert tail is not None  # a starred pattern always matches
        end = tail.end()
        if 2 <= end - start <= _IPV6_LONGEST and not (start and _word(text[start - 1])) and not (
            end < len(text) and _word(text[end])
        ):
            yield start, text[start:end]
        colon = text.find(":", end)


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _find_phones(text: str, add: _Add) -> None:
    module = native_finders()
    for start, end in _phone_spans(text) if module is None else module.phone_spans(text):
        raw = text[start:end]
        add(start, end, ("+" if raw.startswith("+") else "") + re.sub(r"\D", "", raw), PHONE)


def _phone_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each phone number no letter or digit follows."""
    anchors = []
    if "+" in text:
        anchors += [m.start() for m in re.finditer(r"\+(?=\d)", text)]
    if "(" in text:
        anchors += [m.start() for m in re.finditer(r"\((?=\d{3}\))", text)]
    if "-" in text:
        for m in _DASH_PHONE.finditer(text):
            start = m.start() - 3
            if start >= 0 and text[start:m.start()].isdigit() and (
                start == 0 or not text[start - 1].isalnum()
            ):
                anchors.append(start)
    out = []
    for start in sorted(anchors):
        match = _PHONE_RE.match(text, start)
        if match is None:
            continue
        end = match.end()
        if end < len(text) and text[end].isalnum():
            continue
        out.append((start, end))
    return out


@lru_cache(maxsize=1)
def _iban_scanner() -> Any:
    import re2  # linear and fast on text without candidates (no literal anchor to search)

    return re2.compile(r"[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){10,30}")


def _find_ibans(text: str, add: _Add) -> None:
    module = native_finders()
    for start, end in _ibans_py(text) if module is None else module.ibans(text):
        add(start, end, text[start:end].replace(" ", "").casefold(), ACCOUNT)


def _ibans_py(text: str) -> list[tuple[int, int]]:
    """(start, end) of each account number no letter or digit touches."""
    matches = _iban_scanner().finditer(without_surrogates(text))  # re2 reads UTF-8
    out = []
    for match in matches:
        start, end = match.start(), match.end()
        if (start and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum()):
            continue
        out.append((start, end))
    return out
