"""URLs and host names read the way clients and servers read them (WHATWG, via ada).

ada is the URL parser inside Node.js, so the host and path found here are the ones a Node or
browser-like upstream connects to: backslashes are slashes in special schemes, dot segments
(`..`, `%2e%2e`) are resolved, hosts are IDNA-mapped and lower-cased, and IPv4 in decimal,
octal or hex (`http://167837955/`, `http://0x7f.1/`) is canonical dotted-quad. What other
parsers may read differently (userinfo, backslashes, control characters, encoded slashes)
is parsed too, but marked so that no trust entry ever vouches for it. So is a path segment a
server may read as `..` though WHATWG does not (`..;x` to Tomcat, `%252e%252e` decoded twice,
`%EF%BC%8E%EF%BC%8E` to Windows' best-fit mapping, `x//../` to a server that merges slashes),
and `https:evil.example` (no `//`), which WHATWG reads as https://evil.example/.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

# Schemes whose URLs go to the host over the network the way http does.
WEB_SCHEMES = frozenset(["http", "https", "ws", "wss"])
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{0,30}:")
_UNRESERVED_ESCAPE = re.compile(r"%(2[DdEe]|3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]|5[Ff]|7[Ee])")
_AMBIGUOUS_ESCAPE = re.compile(r"%(2[Ff]|5[Cc]|00)")  # / \ NUL, still encoded
# A special scheme WHATWG reads the same with or without `//` (`https:/x`, `https:x`).
_SPECIAL_NO_SLASHES = re.compile(r"(?:[Hh][Tt][Tt][Pp][Ss]?|[Ww][Ss][Ss]?|[Ff][Tt][Pp]):(?!//)")
# Segments that may be a dot segment in disguise: they start with '.' or '%' or are not ASCII.
_MAYBE_DOTS = re.compile(r"(?:^|/)(?:[.%]|[^\x00-\x7f])")
_OVERLONG_DOT = re.compile(r"%[Cc]0%[Aa][Ee]")  # '.' as an overlong UTF-8 sequence (old IIS)
# A plain DNS name that every parser reads alike: lower-case ASCII labels, an alphabetic last
# label (so never an IPv4 number), no punycode to validate. Parsed without ada.
_PLAIN_HOST = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")
# A URL of that kind with a plain path and no dot segments, escapes, port or user info.
_PLAIN_URL = re.compile(
    r"([Hh][Tt][Tt][Pp][Ss]?)://((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,63})"
    r"((?:/(?!\.\.?(?:/|$|[?#]))[A-Za-z0-9._~!$&'()*+,;=:@-]*)*)([?#][^\s]*)?"
)


@dataclass(frozen=True)
class ParsedUrl:
    scheme: str
    host: str  # canonical: IDNA ASCII, lower case, no trailing dot; IPs in canonical form
    port: str  # '' for the scheme's default
    path: str  # dot segments resolved, unreserved escapes decoded, no trailing '/'
    has_query: bool
    host_is_ip: bool
    untrusted: str | None  # why no trust entry may vouch for this URL
    scheme_written: bool = True  # False for a bare `host/path`, read as http

    @property
    def site(self) -> str:
        """host[:port] with a leading `www.` dropped: the unit taint and trust compare. An
        IPv6 host with a port is bracketed: `::1:8080` is another address than [::1]:8080."""
        host = self.host[4:] if self.host.startswith("www.") and self.host.count(".") > 1 else (
            self.host
        )
        if not self.port:
            return host
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    @property
    def key(self) -> str:
        key = f"{self.site}{self.path}".casefold()
        return key if self.scheme in WEB_SCHEMES else f"{self.scheme}://{key}"


@lru_cache(maxsize=1)
def _ada() -> Any:
    import ada_url  # ~30 ms to import: only once a URL is actually parsed

    return ada_url


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate read as U+FFFD (the same object when it has none).
    JSON's "\\ud800" decodes to one, which no UTF-8 consumer (re2, ada) can encode; one
    character for one, so every offset stays where it was."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


# The path as written: after the scheme and the authority, up to the query or fragment.
_WRITTEN_PATH = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[/\\]*[^/\\?#]*([^?#]*)")
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_IP_CHARS = re.compile(r"\[?[0-9A-Fa-f.:]+\]?")


def odd_characters(text: str) -> bool:
    """Control, format (zero-width, bidi) or line-break characters: parsers disagree on them."""
    if text.isascii():
        return _ASCII_CONTROL.search(text) is not None
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text)


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_PLAIN_IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")


def canonical_ip(text: str) -> str | None:
    """The canonical form of an IP literal (IPv4-mapped IPv6 as the IPv4), or None."""
    if _PLAIN_IPV4.fullmatch(text):
        return text  # already canonical: four decimal octets without leading zeros
    if not _IP_CHARS.fullmatch(text):
        return None
    import ipaddress  # only for the rare literal that is not plain dotted-quad

    try:
        ip = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def no_slashes_after_scheme(text: str) -> bool:
    """`https:evil.example`, `https:/evil.example/x`: a URL to WHATWG (no `//` needed)."""
    return _SPECIAL_NO_SLASHES.match(text) is not None


def parse_url(text: str, assume_http: bool = False) -> ParsedUrl | None:
    """Parse an absolute URL (or, with `assume_http`, a bare `host/path`). None when it does
    not parse or has no host."""
    raw = text.strip()
    if not raw:
        return None
    no_slashes = no_slashes_after_scheme(raw)
    written = True
    if not _SCHEME.match(raw) or (assume_http and "://" not in raw and not no_slashes):
        if not assume_http:
            return None
        raw = "http://" + raw
        written = False
    plain = _PLAIN_URL.fullmatch(raw) if raw.isascii() else None
    if plain is not None:
        host = plain.group(2).lower()
        if "xn--" not in host and not _disguised_dots(plain.group(3)):
            tail = plain.group(4) or ""
            return ParsedUrl(plain.group(1).lower(), host, "", plain.group(3).rstrip("/"),
                             tail.startswith("?") and len(tail.split("#", 1)[0]) > 1, False,
                             None, written)
    untrusted: list[str] = []
    if odd_characters(raw):
        untrusted.append("control or invisible characters")
    readable = without_surrogates(raw)
    if readable is not raw:  # the host is still found: a link planted with one is still taint
        raw = readable
        untrusted.append("a lone surrogate")
    if "\\" in raw:
        untrusted.append("a backslash (parsers disagree on where the host ends)")
    if no_slashes:
        untrusted.append("no '//' after the scheme (parsers disagree on where the host is)")
    try:
        url = _ada().URL(raw)
    except ValueError:
        return None
    scheme = url.protocol.rstrip(":").casefold()
    hostname = url.hostname
    if not hostname:
        return None
    if url.username or url.password:
        untrusted.append("user info before the host")
    ip = canonical_ip(hostname) if url.host_type != 0 else None  # HostType.DEFAULT is 0
    host = ip if ip is not None else hostname.rstrip(".").casefold()
    if not host:
        return None
    path = _UNRESERVED_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), url.pathname)
    if _AMBIGUOUS_ESCAPE.search(path):
        untrusted.append("an encoded slash or dot in the path")
    elif _disguised_dots(path) or _merged_slashes_differ(raw, path):
        untrusted.append("a path segment some servers read as '..'")
    if scheme not in WEB_SCHEMES:
        untrusted.append(f"the {scheme}: scheme")
    return ParsedUrl(
        scheme=scheme,
        host=host,
        port=url.port,
        path=path.rstrip("/"),
        has_query=bool(url.search),
        host_is_ip=ip is not None,
        untrusted="; ".join(untrusted) or None,
        scheme_written=written,
    )


def _disguised_dots(path: str) -> bool:
    """Does a segment WHATWG left alone read as `.` or `..` once path parameters are cut
    (`..;x`), escapes decoded again and again (`%252e`), or dots mapped (`．．`, `%c0%ae`),
    or is it only dots and spaces (`...`, `.. `: Windows trims them)?"""
    if not _MAYBE_DOTS.search(path):
        return False
    for segment in path.split("/"):
        if not _MAYBE_DOTS.match(segment):
            continue
        text = _OVERLONG_DOT.sub(".", segment.split(";", 1)[0])
        while "%" in text and unquote(text) != text:  # each round is shorter: it ends
            text = _OVERLONG_DOT.sub(".", unquote(text))
        text = unicodedata.normalize("NFKC", text).split(";", 1)[0]
        if "." in text and not text.strip(". "):
            return True
    return False


def _merged_slashes_differ(raw: str, path: str) -> bool:
    """Does a server that merges slashes before resolving dot segments (nginx) reach another
    path than WHATWG does? `/a/b//../../c` is /a/c to WHATWG, /c to such a server (sent as
    written by a client that leaves dot segments alone, like urllib)."""
    written = _WRITTEN_PATH.match(raw)
    if written is None or "//" not in written.group(1) or "." not in written.group(1):
        return False
    try:
        resolved = _ada().URL("http://h" + re.sub(r"/{2,}", "/", written.group(1))).pathname
    except ValueError:
        return True
    resolved = _UNRESERVED_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), resolved)
    return bool(resolved.rstrip("/") != re.sub(r"/{2,}", "/", path).rstrip("/"))


@lru_cache(maxsize=4096)
def canonical_host(text: str) -> str | None:
    """A domain name or IP literal as a URL parser would connect to it, or None."""
    value = text.strip().rstrip(".")
    if _PLAIN_HOST.fullmatch(value) and "xn--" not in value:
        return value
    ip = canonical_ip(value)
    if ip is not None:
        return ip
    if not value or any(ch in value for ch in "/\\@:?#[] ") or odd_characters(value):
        return None
    parsed = parse_url(f"http://{value}/")
    return parsed.host if parsed is not None else None
