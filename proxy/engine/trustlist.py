"""Trusted-destination lists from packs and user policy.

Entries are exact values (`alice@corp.com`), globs, hosts (`corp.com`: any URL on that host)
or URL prefixes (`https://hooks.corp.com/services/`). Every entry and every destination is
parsed into the canonical model first (proxy/engine/destinations.py), so:
- a glob with `@` (`*@corp.com`) matches the local part and the parsed domain of a mail
  address, never a URL or a string that merely ends that way;
- a glob without `@` (`*.corp.com`) matches a parsed host name (of a URL, a bare host or a
  mail domain), never a path;
- a prefix matches whole path segments after dot segments are resolved;
- a URL's host is compared without case, its path with case: most web servers tell
  `/services/T0CORP/` from `/services/t0corp/`, which someone else may own;
- an entry written with `https://` or `wss://` does not vouch for `http://` or `ws://` written
  out (the data would cross the network in clear); a bare host vouches for any scheme;
- a destination marked untrusted (user info, backslash, invisible characters, a recipient
  field that is not a clean list) matches nothing.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

from proxy.engine.destinations import EMAIL, HOST, IP, URL, Destination, parse, secure_scheme
from proxy.engine.urls import canonical_host

_WEB = (URL, HOST, IP)
# `http://[::1]:8080/` names an address: its brackets are no glob character class.
_IPV6_LITERAL = re.compile(r"\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\]")


class TrustList:
    def __init__(self, entries: Iterable[str]) -> None:
        # key -> (entry, exact path, needs TLS)
        self._exact: dict[str, tuple[str, str | None, bool]] = {}
        self._prefixes: list[tuple[str, str, str, bool]] = []  # (site, exact path, entry, TLS)
        self._mail_globs: list[tuple[str, str, str]] = []  # (local glob, domain glob, entry)
        # (host glob, path glob, entry, needs TLS)
        self._host_globs: list[tuple[str, str | None, str, bool]] = []
        self._globs: list[tuple[str, str]] = []  # other kinds: the whole key
        for entry in entries:
            text = entry.strip()
            if any(ch in _IPV6_LITERAL.sub("", text) for ch in "*?["):
                self._add_glob(text, entry)
                continue
            for dest in parse(text):
                if dest.untrusted:
                    continue  # an entry that does not parse cleanly vouches for nothing
                site = dest.site if dest.kind in _WEB else None
                tls = dest.secure is True
                self._exact[dest.key] = (entry, None if site is None else dest.exact_path, tls)
                if site is not None:
                    self._prefixes.append((site, dest.exact_path, entry, tls))

    def _add_glob(self, text: str, entry: str) -> None:
        low = text.casefold().removeprefix("mailto:")
        text = text[len(text) - len(low):]  # without the "mailto:", in its own case
        if "://" in low:
            # The host without case, the path as written (see the module's docstring).
            scheme, _, rest = text.partition("://")
            host, _, path = rest.partition("/")
            self._host_globs.append((_glob_host(host), "/" + path if path else None, entry,
                                     secure_scheme(scheme) is True))
        elif "@" in low:
            local, _, domain = low.rpartition("@")
            self._mail_globs.append((local, _glob_host(domain), entry))
        elif "." in low and not low.startswith(("#", "@")):
            host, _, path = text.partition("/")
            self._host_globs.append((_glob_host(host), "/" + path if path else None, entry,
                                     False))
        else:
            self._globs.append((low, entry))

    def match(self, dest: Destination | str) -> str | None:
        """The entry that vouches for a destination, or None."""
        if isinstance(dest, str):
            found = parse(dest)
            if len(found) != 1:
                return None
            dest = found[0]
        if dest.untrusted or dest.injection:
            return None
        clear = dest.secure is False  # http:// or ws:// written out
        exact = self._exact.get(dest.key)
        if exact is not None and (exact[1] is None or exact[1] == dest.exact_path) and not (
            exact[2] and clear
        ):
            return exact[0]
        if dest.kind in _WEB:
            site = dest.site or ""
            path = dest.exact_path
            for p_site, p_path, entry, tls in self._prefixes:
                if site == p_site and not (tls and clear) and (
                    not p_path or path == p_path or path.startswith(p_path + "/")
                ):
                    return entry
            for host_glob, path_glob, entry, tls in self._host_globs:
                if dest.host is not None and fnmatch.fnmatchcase(dest.host, host_glob) and (
                    path_glob is None or fnmatch.fnmatchcase(dest.exact_path or "/", path_glob)
                ) and not (tls and clear):
                    return entry
            return None
        if dest.kind == EMAIL and dest.local is not None and dest.host is not None:
            for local_glob, domain_glob, entry in self._mail_globs:
                if fnmatch.fnmatchcase(dest.local, local_glob) and fnmatch.fnmatchcase(
                    dest.host, domain_glob
                ):
                    return entry
            for host_glob, path_glob, entry, _tls in self._host_globs:
                if path_glob is None and fnmatch.fnmatchcase(dest.host, host_glob):
                    return entry
            return None
        for pattern, entry in self._globs:
            if fnmatch.fnmatchcase(dest.key, pattern):
                return entry
        return None

    def __bool__(self) -> bool:
        return bool(self._exact or self._globs or self._mail_globs or self._host_globs)


def _glob_host(pattern: str) -> str:
    """The literal labels of a host glob in canonical (IDNA) form: `*.Bücher.de.` matches
    `shop.xn--bcher-kva.de`."""
    labels = pattern.rstrip(".").split(".")
    out = []
    for label in labels:
        if any(ch in label for ch in "*?[") or label.isascii():
            out.append(label.casefold())
        else:
            out.append(canonical_host(label) or label)
    return ".".join(out)
