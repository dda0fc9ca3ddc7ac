"""Destination-shaped values: how to recognise them, find them in text and compare them.

Every comparison the sink gate makes (trust lists, remembered approvals, taint) is between
normalised values, so one spelling of an address cannot slip past another.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from urllib.parse import urlsplit

EMAIL = "email"
URL = "url"
HOST = "host"
PHONE = "phone"
HANDLE = "handle"
CHANNEL = "channel"
ACCOUNT = "account"  # IBAN-like bank account numbers

# The local part starts at a run boundary and is at most 64 chars (RFC 5321), so a long run of
# word characters is scanned once rather than from every position (quadratic on big results).
# The local part may hold an apostrophe (o'brien@...) but never start with one: in 'x@y' the
# quotes are punctuation.
_EMAIL_RE = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9_%+-][A-Za-z0-9._%+'-]{0,63}@[A-Za-z0-9-]+"
    r"(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
_URL_RE = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://[^\s<>\"'`)\]}]+")
# Bare host names: a dotted name whose last label is a TLD-like word and not a file extension.
_HOST_RE = re.compile(
    r"(?<![\w@./-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,126}[A-Za-z]{2,24}"
    r"(?:/[^\s<>\"'`)\]}]*)?"
)
_PHONE_RE = re.compile(r"\+\d[\d \t().-]{6,18}\d|\(\d{3}\) ?\d{3}-\d{4}|\b\d{3}-\d{3}-\d{4}\b")
_HANDLE_RE = re.compile(r"(?<![\w.@/])@[A-Za-z0-9_][A-Za-z0-9_.-]{0,38}[A-Za-z0-9_]")
_CHANNEL_RE = re.compile(r"(?<![\w&#/])#[A-Za-z][\w.-]{0,79}")
_IBAN_RE = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,30}\b")

# Last labels that are file extensions far more often than top-level domains.
_NOT_TLDS = frozenset(
    [
        "txt",
        "md",
        "py",
        "js",
        "ts",
        "json",
        "yaml",
        "yml",
        "toml",
        "csv",
        "pdf",
        "doc",
        "docx",
        "xls",
        "xlsx",
        "ppt",
        "pptx",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "html",
        "htm",
        "css",
        "sh",
        "log",
        "zip",
        "gz",
        "tar",
        "xml",
        "ini",
        "cfg",
        "conf",
        "lock",
        "exe",
        "dll",
        "so",
        "rs",
        "go",
        "java",
        "rb",
        "php",
        "c",
        "h",
        "cpp",
        "mp3",
        "mp4",
        "wav",
        "mov",
        "eml",
        "ics",
        "bak",
        "tmp",
        "db",
        "sqlite",
    ]
)
_WS_RE = re.compile(r"\s+")
_DISPLAY_NAME_RE = re.compile(r"^[^<>\n@]{0,80}<([^<>@\s]+@[^<>\s]+)>$")


def _clean(value: str) -> str:
    if not value.isascii():  # ASCII is already NFKC and has no format characters
        value = unicodedata.normalize("NFKC", value)
        # Zero-width and bidi controls must not make two spellings of one address differ.
        value = "".join(ch for ch in value if unicodedata.category(ch) != "Cf")
    return _WS_RE.sub(" ", value).strip()


def _url_key(value: str) -> str:
    parts = urlsplit(value)
    host = (parts.hostname or "").rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    port = f":{parts.port}" if parts.port and parts.port not in (80, 443) else ""
    path = parts.path.rstrip("/")
    return f"{host}{port}{path}".casefold()


def normalize_destination(value: str) -> str:
    """The comparable form of a destination: case-folded, trimmed, `mailto:` and display names
    dropped, URLs reduced to host[:port]/path (no scheme, `www.`, query or fragment), phone
    numbers to digits. Idempotent; never raises on odd input."""
    text = _clean(str(value))
    if not text:
        return ""
    lowered = text.casefold()
    if lowered.startswith("mailto:"):
        text = text[7:].split("?", 1)[0].strip()
        lowered = text.casefold()
    match = _DISPLAY_NAME_RE.match(text)
    if match:
        return match.group(1).casefold()
    if _EMAIL_RE.fullmatch(text):
        return lowered
    if "://" in text and _URL_RE.fullmatch(text):
        try:
            return _url_key(text) or lowered
        except ValueError:
            return lowered
    if _HOST_RE.fullmatch(text) and _tld_ok(text):
        try:
            return _url_key("http://" + text) or lowered
        except ValueError:
            return lowered
    if _PHONE_RE.fullmatch(text):
        return ("+" if text.startswith("+") else "") + re.sub(r"\D", "", text)
    if _IBAN_RE.fullmatch(text):
        return text.replace(" ", "").casefold()
    return lowered


def _tld_ok(host: str) -> bool:
    name = host.split("/", 1)[0]
    return name.rsplit(".", 1)[-1].casefold() not in _NOT_TLDS


# No address, URL, handle or phone number is longer than this; longer values are content.
MAX_DESTINATION = 2048


def destination_kind(value: str) -> str | None:
    """What kind of destination the whole value is, or None when it is not destination-shaped."""
    if len(value) > MAX_DESTINATION:
        return None
    text = _clean(str(value))
    if text.casefold().startswith("mailto:"):
        text = text[7:]
    if _EMAIL_RE.fullmatch(text) or _DISPLAY_NAME_RE.match(text):
        return EMAIL
    if _URL_RE.fullmatch(text):
        return URL
    if _HOST_RE.fullmatch(text) and _tld_ok(text):
        return HOST
    if _PHONE_RE.fullmatch(text):
        return PHONE
    if _HANDLE_RE.fullmatch(text):
        return HANDLE
    if _CHANNEL_RE.fullmatch(text):
        return CHANNEL
    if _IBAN_RE.fullmatch(text):
        return ACCOUNT
    return None


def host_of(normalized: str) -> str | None:
    """The host part of a normalised URL or host destination (None for anything else)."""
    if "@" in normalized or not normalized:
        return None
    host = normalized.split("/", 1)[0]
    return host if "." in host else None


# Taint extraction reads at most this much of one string. A destination hidden past it is not
# recorded as tainted, so a send to it is asked about (unproven), never silently allowed.
MAX_SCAN = 256 * 1024


def extract_destinations(text: str) -> Iterator[tuple[str, str, int, int]]:
    """(normalised value, kind, start, end) for every destination-shaped value inside text."""
    text = text[:MAX_SCAN]
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for kind, regex in (
        (EMAIL, _EMAIL_RE),
        (URL, _URL_RE),
        (HOST, _HOST_RE),
        (PHONE, _PHONE_RE),
        (ACCOUNT, _IBAN_RE),
        (HANDLE, _HANDLE_RE),
        (CHANNEL, _CHANNEL_RE),
    ):
        for match in regex.finditer(text):
            start, end = match.span()
            raw = match.group(0).rstrip(".,;:!?")
            end = start + len(raw)
            if not free(start, end):
                continue
            if kind == HOST and not _tld_ok(raw):
                continue
            taken.append((start, end))
            yield normalize_destination(raw), kind, start, end
