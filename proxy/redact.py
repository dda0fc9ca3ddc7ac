"""Keep secrets out of the audit log and out of logs.

Two layers. Values under token-like keys (`password`, `api_key`, `Authorization`, ...) are
masked when a JSON value is walked. Credential-shaped text is masked wherever it appears, by one
pass of `redact_text` over the text as it will be stored: the serialised JSON of a payload
(so secrets inside strings, escaped JSON inside strings and unparseable frames are all caught
by the same patterns), a command-line argument, a reason.

The credential shapes follow the plugins of detect-secrets 1.5.0 (Yelp, Apache-2.0:
aws, stripe, github_token, gitlab_token, slack, npm, jwt, basic_auth, private_key, keyword,
openai, pypi_token, sendgrid, telegram_token, mailchimp, square_oauth, discord), rewritten
for one combined pass; detect-secrets itself is not imported (it pulls in `requests`, about
90 ms, on a path every proxy takes). Additions: Google OAuth and API keys, Anthropic keys,
`Basic`/`Bearer` authorization values, URL userinfo, AWS secret keys after an `aws…key` name.

Cost: RE2 finds the combined shapes in one linear pass (no backtracking); Python's `re` only
re-reads the few spans RE2 found. Benign text pays the RE2 scan alone.
"""

from __future__ import annotations

import base64
import binascii
import re
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
    "mailchimp": r"[0-9a-f]{32}-us[0-9]{1,2}",
    "telegram": r"[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}",
    "discord": r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}",
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

_PATTERN = "|".join(f"(?P<{name}>{shape})" for name, shape in _SHAPES.items())
# Groups whose text is kept in front of the mask (a name, a scheme, a URL's user).
_KEEP = ("awsname", "sep1", "hook", "npmrc", "authz", "scheme", "user", "scheme2", "query",
         "qname", "qsep", "name", "sep")
_KEEP_AFTER = ("at", "at2")
# Shapes whose matches must hold a digit (prose such as "bearer authentication" or
# "sk-learn-style-names" has none); shorter than _MIN_DIGITS_LEN they are left alone.
_NEEDS_DIGIT = frozenset(("auth_scheme", "openai_anthropic"))

MAX_STRING = 4096
# Text is redacted this far past a cut, so a secret straddling the cut is still matched whole
# (an RSA-4096 PEM block is about 3.3 KB) and none of it survives in the part that is kept.
CUT_MARGIN = 4096


@cache
def _python_regex() -> re.Pattern[str]:
    return re.compile(_PATTERN)


@cache
def _re2_regex() -> Any:
    import re2

    options = re2.Options()
    options.max_mem = 64 << 20  # the combined DFA is large; the default 8 MB falls back to NFA
    return re2.compile(_PATTERN, options)


@lru_cache(maxsize=4096)  # the same few keys come back in every message
def is_secret_key(name: str) -> bool:
    return bool(SECRET_KEY.search(name)) and not NOT_SECRET_KEY.search(name)


def _replace(match: re.Match[str]) -> str:
    kind = match.lastgroup
    text = match.group(0)
    if kind in _NEEDS_DIGIT and not _looks_like_credential(match):
        return text
    keep = "".join(match.group(g) or "" for g in _KEEP)
    if kind == "private_key" and text.endswith('"'):
        return REDACTED + '"'  # a cut block ends with its JSON string; the quote stays
    return keep + REDACTED + "".join(match.group(g) or "" for g in _KEEP_AFTER)


def _looks_like_credential(match: re.Match[str]) -> bool:
    """`Basic <base64 of user:pass>`, or a Bearer/token value with a digit in it (prose such as
    "bearer authentication" has none)."""
    if match.lastgroup == "openai_anthropic":
        return len(text := match.group(0)) >= 19 and any(c.isdigit() for c in text)
    scheme = match.group("scheme").strip().lower()
    value = match.group(0)[len(match.group("scheme")) :]
    if scheme == "basic":
        try:
            return b":" in base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        except (binascii.Error, ValueError):
            return False
    return any(c.isdigit() for c in value)


def redact_text(text: str) -> str:
    """Mask every credential-shaped span of `text` (plain, JSON-escaped or a raw frame).

    RE2 finds the spans in linear time; Python's `re` re-reads each one at its start for the
    groups (what to keep) and the checks RE2 cannot express. Running `re` over the whole
    text instead costs about 15 ms per 16 KB, RE2 about 0.05 ms.
    """
    if len(text) < 12:
        return text
    parts: list[str] = []
    done = 0
    python = _python_regex()
    for found in _re2_regex().finditer(text):
        start = found.start()
        if start < done:
            continue
        match = python.match(text, start)
        parts.append(text[done:start])
        if match is None:  # the engines disagree on this span: mask what RE2 found
            parts.append(REDACTED)
            done = found.end()
        else:
            parts.append(_replace(match))
            done = match.end()
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


def shape(obj: Any, max_string: int = MAX_STRING) -> Any:
    """A copy of a JSON value with values under token-like keys masked and long strings cut
    (`CUT_MARGIN` past `max_string`, so the text pass sees a secret at the cut whole)."""
    if isinstance(obj, str):
        if len(obj) > max_string + CUT_MARGIN:
            return f"{obj[: max_string + CUT_MARGIN]}…[{len(obj) - max_string} more chars]"
        return obj
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if is_secret_key(str(key)) and isinstance(value, (str, int, float, list)):
                out[key] = _mask(value)
            else:
                out[key] = shape(value, max_string)
        return out
    if isinstance(obj, list):
        return [shape(item, max_string) for item in obj]
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
    if isinstance(obj, str):
        if len(obj) > max_string:
            head = redact_text(obj[: max_string + CUT_MARGIN])[:max_string]
            return f"{head}…[{len(obj) - max_string} more chars]"
        return redact_text(obj)
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if is_secret_key(str(key)) and isinstance(value, (str, int, float, list)):
                out[key] = _mask(value)
            else:
                out[key] = redact(value, max_string=max_string)
        return out
    if isinstance(obj, list):
        return [redact(item, max_string=max_string) for item in obj]
    return obj


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
        out.append(redact_text(arg))
    return out
