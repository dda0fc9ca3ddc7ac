"""Keep secrets out of the audit log and out of logs.

Two layers. Values under token-like keys (`password`, `api_key`, `Authorization`, ...) are
masked when a JSON value is walked. Credential-shaped text is masked wherever it appears, by one
pass of `redact_text` over the text as it will be stored: the serialised JSON of a payload
(so secrets inside strings, escaped JSON inside strings and unparseable frames are all caught
by the same patterns), a command-line argument, a reason.

The credential shapes follow the plugins of detect-secrets 1.5.0 (Yelp, Apache-2.0:
aws, stripe, github_token, gitlab_token, slack, npm, jwt, basic_auth, private_key, keyword,
openai, pypi_token, sendgrid, telegram_token, square_oauth), rewritten for one fast pass
(mailchimp's and discord's shapes start with long counted runs that no literal prefix
finds, and are left out); detect-secrets itself is not imported (it pulls in `requests`, about
90 ms, on a path every proxy takes). Additions: Google OAuth and API keys, Anthropic keys,
`Basic`/`Bearer` authorization values, URL userinfo, AWS secret keys after an `aws…key` name.

Cost: RE2 finds where any shape could start in one linear pass (no backtracking); Python's
`re` tries the exact shapes only at those few places. Benign text pays the RE2 scan alone,
about 45 us for a 16 KB audit row.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

import orjson

REDACTED = "[redacted]"

SECRET_KEY = re.compile(
    r"(password|passwd|passphrase|passcode|(?<![a-z])pass(?![a-z])|pwd|secret(?!ary)|token"
    r"|api[-_]?key|apikey|auth(?![a-z])|authorization|auth[-_]?(?:key|header)|cookie"
    r"|credential|private[-_]?key|access[-_]?key|session[-_]?(?:id|key)|\bpat\b)",
    re.IGNORECASE,
)
# Keys that contain a secret word but name a count or a setting, not a credential.
NOT_SECRET_KEY = re.compile(
    r"^(?:max|input|output|total|prompt|completion)[-_]?tokens?$"
    r"|^tokens?[-_]?(?:count|limit|usage|used|budget)$|tokeni[sz]er|^token[-_]?type$",
    re.IGNORECASE,
)

# Key words of `name = value` / `name: value` assignments (detect-secrets' keyword plugin list,
# plus tokens and passphrases); the name is kept, the value masked.
_KEYWORDS = (
    r"api[_-]?key|auth[_-]?key|service[_-]?key|account[_-]?key|db[_-]?key|database[_-]?key"
    r"|priv[_-]?key|private[_-]?key|client[_-]?key|db[_-]?pass|database[_-]?pass|key[_-]?pass"
    r"|password|passwd|passphrase|pwd|secret|contraseña|contrasena"
    r"|(?:access|refresh|auth|api|bot|session|client|id)[_-]?token"
)
# No masked span contains a backslash or a quote, so a replacement never breaks the JSON (or
# the escaped JSON inside a JSON string) it sits in.

_SHAPES: dict[str, str] = {
    # Private key blocks (private_key): the whole block, or up to the end of its JSON string
    # when it was cut.
    "private_key": r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[^\"\\]|\\.)*?(?:-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----|\"|$)",
    # Cloud and SaaS tokens (aws, stripe, github_token, gitlab_token, slack, npm, openai, ...).
    "aws_key_id": r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}",
    "aws_secret": r"(?P<awsname>(?i:aws[\w.\-]{0,20}?(?:key|secret|token)[\w\-]{0,20}?))"
    r"(?P<sep1>\\?[\"']?\s*(?::=|=>|[:=])\s*\\?[\"']?)[A-Za-z0-9/+]{40}",
    "stripe": r"[rs]k_(?:live|test)_[0-9a-zA-Z]{16,}",
    "github": r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{30,}|github_pat_[A-Za-z0-9_]{22,}",
    "gitlab": r"(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[\w\-]{20,}"
    r"|GR1348941[\w\-]{20,}",
    "slack": r"xox[abposre]-[A-Za-z0-9\-]{10,}",
    "slack_webhook": r"(?P<hook>hooks\.slack\.com/services/T[\w]+/B[\w]+/)[\w]+",
    "npm": r"npm_[A-Za-z0-9]{36}|(?P<npmrc>:_authToken=)[^\s\"'\\]+",
    "openai_anthropic": r"sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]*[0-9][A-Za-z0-9_\-]*",
    "google": r"ya29\.[0-9A-Za-z_\-]{20,}|AIza[0-9A-Za-z_\-]{35}|1//0[0-9A-Za-z_\-]{40,}",
    "pypi": r"pypi-AgE[A-Za-z0-9_\-]{50,}",
    "sendgrid": r"SG\.[\w\-]{22}\.[\w\-]{43}",
    "square": r"sq0csp-[0-9A-Za-z_\-]{43}",
    "telegram": r"[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}",
    "jwt": r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
    # Authorization values (basic_auth for URLs; Basic/Bearer schemes added).
    "auth_header": r"(?P<authz>(?i:proxy-)?(?i:authorization)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?)"
    r"[^\"'\\\r\n]{1,512}",
    "auth_scheme": r"(?P<scheme>(?i:basic|bearer)[ \t]+)[A-Za-z0-9._~+/\-]{8,}=*",
    "url_userinfo": r"(?P<user>://[^/\s@:\"'\\]{1,128}:)[^/\s@\"'\\]{1,256}(?P<at>@)",
    "url_token_user": r"(?P<scheme2>://)[A-Za-z0-9_\-]{20,}(?P<at2>@)",
    "url_query": r"(?P<query>[?&](?i:token|access_token|api_?key|apikey|key|sig|signature|secret"
    r"|password|code|x-amz-signature|x-amz-credential|x-goog-signature|x-goog-credential)=)"
    r"[^&\s\"'\\#]{4,}",
    # name = value assignments (keyword): quoted values up to the closing quote, bare ones up
    # to a delimiter. The name, the separator and an opening quote are kept.
    "assignment_quoted": r"(?P<qname>(?i:" + _KEYWORDS + r"))(?P<qsep>[\w.\-]{0,20}\\?[\"'`]?"
    r"[ \t]*(?::=|=>|[:=])[ \t]*\\?[\"'`])[^\"'`\\\r\n]{1,256}",
    "assignment": r"(?P<name>(?i:" + _KEYWORDS + r"))(?P<sep>[\w.\-]{0,20}\\?[\"'`]?"
    r"[ \t]*(?::=|=>|[:=])[ \t]*)[^\s\"'`\\,;&{}\[\]<>]{1,256}",
}

# Where shapes can begin, for RE2, which finds these candidates in one linear pass over the
# text; each names the shapes (exact, Python `re`) to try at a candidate. Every match of a
# shape starts with a match of its start at the same position. Starts are short, mostly
# literal prefixes: a DFA for the full shapes (counted repetitions of overlapping classes)
# outgrows RE2's memory budget and falls back to a far slower engine.
_STARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"-----BEGIN", ("private_key",)),
    (r"A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA", ("aws_key_id",)),
    (r"(?i:aws[\w.\-]{0,20}(?:key|secret|token))", ("aws_secret",)),
    (r"[rs]k_(?:live|test)_", ("stripe",)),
    (r"gh[pousr]_|github_pat_", ("github",)),
    (r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941", ("gitlab",)),
    (r"xox[abposre]-", ("slack",)),
    (r"hooks\.slack\.com/services/", ("slack_webhook",)),
    (r"npm_|:_authToken=", ("npm",)),
    (r"sk-", ("openai_anthropic",)),
    (r"ya29\.|AIza|1//0", ("google",)),
    (r"pypi-AgE", ("pypi",)),
    (r"SG\.", ("sendgrid",)),
    (r"sq0csp-", ("square",)),
    (r"[0-9]{8,10}:AA", ("telegram",)),
    (r"eyJ", ("jwt",)),
    (r"(?i:(?:proxy-)?authorization)", ("auth_header",)),
    (r"(?i:basic|bearer)[ \t]", ("auth_scheme",)),
    (r"://[^/\s@\"'\\]+@", ("url_userinfo", "url_token_user")),
    (r"[?&](?i:token|access_token|api_?key|apikey|key|sig|signature|secret|password|code"
     r"|x-amz-signature|x-amz-credential|x-goog-signature|x-goog-credential)=", ("url_query",)),
    (r"(?i:" + _KEYWORDS + ")", ("assignment_quoted", "assignment")),
)
# Groups whose text is kept in front of the mask (a name, a scheme, a URL's user), and after.
_KEEP = ("awsname", "sep1", "hook", "npmrc", "authz", "scheme", "user", "scheme2", "query",
         "qname", "qsep", "name", "sep")
_KEEP_AFTER = ("at", "at2")
# Shapes whose matches must hold a digit (prose such as "bearer authentication" or
# "sk-learn-style-names" has none).
_NEEDS_DIGIT = frozenset(("auth_scheme", "openai_anthropic"))

MAX_STRING = 4096
# Text is redacted this far past a cut, so a secret straddling the cut is still matched whole
# (an RSA-4096 PEM block is about 3.3 KB) and none of it survives in the part that is kept.
CUT_MARGIN = 4096


@cache
def _shapes(start: int) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The compiled shapes to try at a candidate of start number `start` (compiled when first
    needed: the proxy redacts its command line on the path to its first answer)."""
    return tuple((name, re.compile(_SHAPES[name])) for name in _STARTS[start][1])


@cache
def _starts() -> tuple[Any, Any]:
    """RE2, for str and for bytes, without groups: where anything starts. (On str, the
    binding converts offsets per match in time linear in the text; ASCII text is searched as
    bytes, where offsets are the same.)"""
    import re2

    pattern = "|".join(f"(?:{start})" for start, _names in _STARTS)
    return re2.compile(pattern), re2.compile(pattern.encode())


@cache
def _which_start() -> re.Pattern[str]:
    """Python `re`, matched at a candidate only: which start it is (the group's number)."""
    return re.compile("|".join(f"({start})" for start, _names in _STARTS))


@lru_cache(maxsize=4096)  # the same few keys come back in every message
def is_secret_key(name: str) -> bool:
    return bool(SECRET_KEY.search(name)) and not NOT_SECRET_KEY.search(name)


def _replace(kind: str, match: re.Match[str]) -> str:
    text = match.group(0)
    if kind in _NEEDS_DIGIT and not _looks_like_credential(kind, match):
        return text
    groups = match.groupdict()
    if kind == "private_key" and text.endswith('"'):
        return REDACTED + '"'  # a cut block ends with its JSON string; the quote stays
    keep = "".join(groups.get(g) or "" for g in _KEEP)
    return keep + REDACTED + "".join(groups.get(g) or "" for g in _KEEP_AFTER)


def _looks_like_credential(kind: str, match: re.Match[str]) -> bool:
    """`Basic <base64 of user:pass>`, or a Bearer/token value with a digit in it (prose such as
    "bearer authentication" has none)."""
    if kind == "openai_anthropic":
        return len(text := match.group(0)) >= 19 and any(c.isdigit() for c in text)
    scheme = match.group("scheme").strip().lower()
    value = match.group(0)[len(match.group("scheme")) :]
    if scheme == "basic":
        try:
            return b":" in base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        except (binascii.Error, ValueError):
            return False
    return any(c.isdigit() for c in value)


MEMO_LONGEST = 128  # short texts come back in every row: a reason, a detail's JSON


def redact_text(text: str, *, rare: bool = False) -> str:
    """Mask every credential-shaped span of `text` (plain, JSON-escaped or a raw frame).

    RE2 finds where a shape could start in one linear pass; Python's `re` tries the exact
    shapes only there. Running `re` over the whole text instead costs about 15 ms per 16 KB.
    `rare`: a short text redacted once (a command line, on the proxy's start-up path), searched
    with `re` alone, which is slower per character but needs no RE2 import. A text of up to
    `MEMO_LONGEST` characters is answered from a memo of the last 1,024 (the answer depends on
    the text alone).
    """
    if len(text) < 12:
        return text
    if len(text) <= MEMO_LONGEST and not rare:
        return _redact_short(text)
    return _redact(text, rare)


@lru_cache(maxsize=1024)
def _redact_short(text: str) -> str:
    return _redact(text, False)


# Shapes whose failure at a candidate rules out every later candidate inside the same run of
# these characters: each needs something past its run (a digit in it, a dot after it) that a
# later start in the run only sees less of. Without this, "sk-sk-sk-…" tried the shape from
# every third character to the run's end: 64 KB took 5.9 s, a blocked 4 MB result for ever.
_FAILS_ACROSS_RUN = frozenset(("openai_anthropic", "jwt"))
_KEY_RUN = re.compile(r"[A-Za-z0-9_\-]*")


def _redact(text: str, rare: bool) -> str:
    parts: list[str] = []
    done = 0
    dead: dict[str, int] = {}  # shape -> the end of the run where it last failed
    which = _which_start()
    if rare:
        found = which.finditer(text)
    else:
        on_str, on_bytes = _starts()
        found = on_bytes.finditer(text.encode()) if text.isascii() else on_str.finditer(text)
    for candidate in found:
        start = candidate.start()
        if start < done:
            continue
        kinds = which.match(text, start)
        if kinds is None or kinds.lastindex is None:
            continue
        for kind, shape in _shapes(kinds.lastindex - 1):
            if dead.get(kind, -1) > start:
                continue
            match = shape.match(text, start)
            if match is not None:
                parts.append(text[done:start])
                parts.append(_replace(kind, match))
                done = match.end()
                break
            if kind in _FAILS_ACROSS_RUN:
                dead[kind] = _KEY_RUN.match(text, start).end()  # type: ignore[union-attr]
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


def shape(obj: Any, max_string: int = MAX_STRING) -> Any:
    """A copy of a JSON value with values under token-like keys masked and long strings cut
    (`CUT_MARGIN` past `max_string`, so the text pass sees a secret at the cut whole)."""

    def cut(text: str) -> str:
        if len(text) > max_string + CUT_MARGIN:
            return f"{text[: max_string + CUT_MARGIN]}…[{len(text) - max_string} more chars]"
        return text

    return _by_key(obj, cut)


def _by_key(obj: Any, on_string: Callable[[str], str]) -> Any:
    """A copy of a JSON value: values under token-like keys masked, every other string
    through `on_string`."""
    if isinstance(obj, str):
        return on_string(obj)
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if is_secret_key(str(key)) and isinstance(value, (str, int, float, list)):
                out[key] = _mask(value)
            else:
                out[key] = _by_key(value, on_string)
        return out
    if isinstance(obj, list):
        return [_by_key(item, on_string) for item in obj]
    return obj


def redact_json(obj: Any, limit: int) -> tuple[str, bool]:
    """The stored text of a JSON value: masked by key, serialised, then one redaction pass.
    Returns the text (at most `limit` characters) and whether it was cut."""
    text = orjson.dumps(shape(obj, limit), default=str).decode()
    if len(text) > limit + CUT_MARGIN:
        text = text[: limit + CUT_MARGIN]
    text = redact_text(text)
    if len(text) > limit:
        return text[:limit], True
    return text, False


def redact(obj: Any, *, max_string: int = MAX_STRING) -> Any:
    """A copy of a JSON value with secrets masked and long strings shortened (for display)."""

    def clean(text: str) -> str:
        if len(text) > max_string:
            head = redact_text(text[: max_string + CUT_MARGIN])[:max_string]
            return f"{head}…[{len(text) - max_string} more chars]"
        return redact_text(text)

    return _by_key(obj, clean)


def _mask(value: Any) -> Any:
    """Every scalar under a token-like key, lists included (`"tokens": ["a", "b"]`)."""
    if isinstance(value, list):
        return [_mask(item) for item in value]
    if isinstance(value, dict):
        return {key: _mask(item) for key, item in value.items()}
    return REDACTED if isinstance(value, (str, int, float)) else value


def redact_argv(argv: list[str]) -> list[str]:
    """Command lines may carry tokens (`--token X`, `--api-key=X`, `KEY=X`, a URL's password)."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        name, eq, _value = arg.partition("=")
        if arg.startswith("-") and is_secret_key(name.lstrip("-")):
            if eq:
                out.append(name + "=" + REDACTED)
            else:
                out.append(arg)
                hide_next = True
            continue
        if eq and is_secret_key(name):
            out.append(name + "=" + REDACTED)
            continue
        out.append(redact_text(arg, rare=True))
    return out
