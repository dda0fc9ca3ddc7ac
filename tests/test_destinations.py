"""The canonical destination model, unit by unit: URLs, mail recipients, IPs, trust lists,
taint candidates, extraction from text, path confinement and the sink heuristics."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proxy.engine import confine, destinations, heuristics
from proxy.engine.destinations import (
    EMAIL,
    HOST,
    IP,
    URL,
    extract_destinations,
    normalize_destination,
    parse,
)
from proxy.engine.mail import parse_mailto, parse_recipients
from proxy.engine.taint import aliases, candidates
from proxy.engine.trustlist import TrustList
from proxy.engine.urls import canonical_host, parse_url
from tests.hostile_inputs import hostile_inputs

# -- URLs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "key"), [
    ("http://167837955/", "10.1.1.3"),
    ("http://0xa.1.1.3/x", "10.1.1.3/x"),
    ("http://012.1.1.3/", "10.1.1.3"),
    ("http://10.1.259/", "10.1.1.3"),
    ("http://[::ffff:10.1.1.3]/", "10.1.1.3"),
    ("http://[0:0::1]:8080/a", "[::1]:8080/a"),  # not ::1:8080, another address
    ("https://EVIL.com./a/../b/", "evil.com/b"),
    ("https://www.Bücher.de/%7Euser", "xn--bcher-kva.de/~user"),
    ("https://evil\u3002com/", "evil.com"),
    ("https://x.example/a/%2e%2e/b", "x.example/b"),
    ("https://x.example/a/.%2E/b", "x.example/b"),
    ("https://x.example:443/a?q=1#f", "x.example/a"),
    ("http://x.example:8080/", "x.example:8080"),
])
def test_urls_get_the_host_and_path_the_upstream_uses(url, key):
    parsed = parse_url(url)
    assert parsed is not None and parsed.key == key and parsed.untrusted is None


@pytest.mark.parametrize(("url", "host", "why"), [
    ("https://evil.com\\@api.corp.com/", "evil.com", "backslash"),
    ("https://api.corp.com@evil.com/", "evil.com", "user info"),
    ("https://u:p@evil.com/", "evil.com", "user info"),
    ("https://api.corp.com\t.evil.com/", "api.corp.com.evil.com", "control"),
    ("https://x.example/a%2fb", "x.example", "encoded slash"),
    ("ftp://x.example/a", "x.example", "scheme"),
    ("https:/evil.com/x", "evil.com", "no '//'"),
    ("HTTPS:evil.com", "evil.com", "no '//'"),
    ("https://x.example/a/..;/b", "x.example", "read as '..'"),
    ("https://x.example/a/%25252e%252E/b", "x.example", "read as '..'"),
    ("https://x.example/a/\u2025/b", "x.example", "read as '..'"),
    ("https://x.example/a/b//../../c", "x.example", "read as '..'"),
])
def test_odd_urls_are_parsed_but_marked_untrusted(url, host, why):
    parsed = parse_url(url)
    assert parsed is not None and parsed.host == host
    assert parsed.untrusted is not None and why in parsed.untrusted


@pytest.mark.parametrize("url", [
    "https://x.example/.well-known/a", "https://x.example/a;v=2/b", "https://x.example/%20/b",
    "https://x.example/a//b.txt", "https://x.example/a//b/./c", "https://x.example/caf\u00e9/",
    "https://x.example/v1.2/../v2",
])
def test_dots_and_slashes_every_server_reads_alike_stay_clean(url):
    parsed = parse_url(url)
    assert parsed is not None and parsed.untrusted is None


def test_bare_hosts_and_non_urls():
    bare = parse_url("evil.com/SECRET", assume_http=True)
    assert bare is not None and bare.key == "evil.com/secret"
    assert parse_url("evil.com/SECRET") is None
    assert parse_url("not a url") is None
    assert canonical_host("Bücher.DE.") == "xn--bcher-kva.de"
    assert canonical_host("0x7f.1") == "127.0.0.1"
    assert canonical_host("a/b") is None


# -- mail ---------------------------------------------------------------------------------------


def keys(recipients):
    return [b.key for b in recipients.mailboxes]


def test_recipient_values_are_address_lists():
    assert keys(parse_recipients("a@evil.example, Bob <B@Corp.Example>")) == [
        "a@evil.example", "b@corp.example"]
    group = parse_recipients("team: a@x.example, b@y.example;")
    assert keys(group) == ["a@x.example", "b@y.example"] and group.problem is None
    dotted = parse_recipients("attacker+1@Evil.com.")
    assert keys(dotted) == ["attacker+1@evil.com"] and dotted.problem is None
    # the taint lookup folds the sub-address: attacker+1@x and attacker@x are one
    assert candidates(parse("attacker+1@Evil.com.")[0])[1] == ("attacker@evil.com", "value")
    assert keys(parse_recipients("bob@bücher.de")) == ["bob@xn--bcher-kva.de"]
    assert keys(parse_recipients("x@[10.1.1.3]")) == ["x@[10.1.1.3]"]


@pytest.mark.parametrize("value", [
    "a@evil.example bob@corp.example",
    "a@evil.example; bob@corp.example",
    '"bob@corp.example" <a@evil.example>',
    "a@evil.example (bob@corp.example)",
    "x@evil.com\u200b@corp.example",
    "bob@corp.example@evil.example",
    "bob",
    "bob@localhost",
])
def test_values_that_are_not_clean_address_lists_say_so(value):
    parsed = parse_recipients(value)
    assert parsed.problem is not None
    assert all(not b.key.endswith("@corp.example") or "evil" in value for b in parsed.mailboxes)


@pytest.mark.parametrize(("value", "routed"), [
    ("a%evil.example@corp.example", "a@evil.example"),
    ("evil.example!a@corp.example", "a@evil.example"),
    ("Bob <a%b%evil.example@corp.example>", "a%b@evil.example"),
])
def test_a_local_part_that_routes_is_never_clean(value, routed):
    parsed = parse_recipients(value)
    assert parsed.problem is not None and "routed" in parsed.problem
    assert routed in keys(parsed)


def test_mailto_fields_beyond_to_cc_bcc():
    for field in ["to%00", "resent-bcc", "reply-to", "Resent-To"]:
        parsed = parse_mailto(f"mailto:b@corp.example?{field}=x@evil.example")
        assert "x@evil.example" in keys(parsed), field
        if not field.casefold().startswith("resent-"):
            assert parsed.problem is not None, field
    clean = parse_mailto("mailto:b@corp.example?subject=a%40b.example&body=c@d.example")
    assert keys(clean) == ["b@corp.example"] and clean.problem is None


def test_line_breaks_in_a_recipient_are_header_injection():
    parsed = parse_recipients("bob@corp.example\r\nBcc: x@evil.example")
    assert parsed.injection and "x@evil.example" in keys(parsed)


def test_mailto_recipients_come_from_the_path_and_the_to_cc_bcc_fields():
    parsed = parse_mailto("mailto:bob@corp.example,c@corp.example?CC=d%40x.example&bcc=e@y.example"
                          "&subject=hi&body=there")
    assert keys(parsed) == ["bob@corp.example", "c@corp.example", "d@x.example", "e@y.example"]
    assert parse_mailto("mailto:bob@corp.example?subject=a%0D%0ABcc:x@y.example").injection


# -- the model ----------------------------------------------------------------------------------


def test_parse_by_shape_and_by_what_the_parameter_expects():
    assert [(d.key, d.kind) for d in parse("https://X.example/a")] == [("x.example/a", URL)]
    assert [(d.key, d.kind) for d in parse("x.example")] == [("x.example", HOST)]
    assert [(d.key, d.kind) for d in parse("10.1.1.3")] == [("10.1.1.3", IP)]
    assert [(d.key, d.kind) for d in parse("Bob <BOB@x.example>")] == [("bob@x.example", EMAIL)]
    as_host = parse("167837955", expect="host")
    assert [d.key for d in as_host] == ["10.1.1.3"]
    not_url = parse("see attacker@evil.example", expect="url")
    assert not_url[0].untrusted and [d.key for d in not_url] == ["evil.example"]
    (host_in_to,) = parse("corp.example", expect="email")
    assert host_in_to.kind == HOST and host_in_to.untrusted == "not a mail address"
    prose = parse("please send it to attacker@evil.example today")
    assert all(d.untrusted for d in prose)
    assert normalize_destination("Alice") == "alice"
    assert normalize_destination(normalize_destination("https://WWW.X.example/a/")) == "x.example/a"


def test_trust_globs_match_parsed_parts_only():
    trust = TrustList(["*@corp.example", "*.corp.org", "https://hooks.example/services/T0/",
                       "docs.example", "#team-*"])

    def ok(value: str, expect: str | None = None) -> bool:
        found = parse(value, expect)
        return bool(found) and all(trust.match(d) is not None for d in found)

    assert ok("bob@corp.example") and ok("Bob <bob@corp.example>") and ok("x@mail.corp.org")
    assert ok("https://a.corp.org/x") and ok("https://hooks.example/services/T0/B/x")
    assert ok("https://docs.example/any/path") and ok("#team-eng")
    for attack in ["attacker@evil.example, bob@corp.example", "x@evil.com\u200b@corp.example",
                   "https://evil.com/SECRET/bob@corp.example", "https://evil.com/leak/x.corp.org",
                   "https://hooks.example/services/T0/../T1/x", "https://hooks.example/services/T0X",
                   "https://evil.com\\@docs.example/", "https://docs.example@evil.com/",
                   "bob@corp.example.evil.com", "#team"]:
        assert not ok(attack, "url" if "://" in attack else None), attack


def test_ipv6_literals_in_trust_entries_are_addresses_not_globs():
    trust = TrustList(["http://[::1]:8080/", "https://[2001:db8::1]:8443/api/"])
    assert trust.match("http://[::1]:8080/x") and trust.match("https://[2001:DB8::1]:8443/api/v")
    for other in ["http://[::8080]/", "http://[::1:8080]/", "http://[::1]/",
                  "https://[2001:db8::1:8443]/api/v", "https://[2001:db8::1]:8443/apix"]:
        assert trust.match(other) is None, other


def test_trust_compares_a_host_without_case_and_a_path_with_it():
    trust = TrustList(["https://hooks.example/services/T0/", "https://api.example/v1/Upload",
                       "https://*.corp.example/Team/*", "MAILTO:*@Corp.NET"])
    for ok in ["https://HOOKS.Example/services/T0/B/x", "https://api.example/v1/Upload",
               "https://API.EXAMPLE/v1/Upload", "https://x.CORP.example/Team/a",
               "Bob@corp.net"]:
        assert trust.match(ok) is not None, ok
    for other in ["https://hooks.example/services/t0/B/x", "https://hooks.example/Services/T0/",
                  "https://api.example/v1/upload", "https://x.corp.example/team/a"]:
        assert trust.match(other) is None, other
    # https:// in an entry is part of what it vouches for; a bare host vouches for any scheme.
    trust = TrustList(["https://api.example/", "corp.example", "http://old.example/"])
    assert trust.match("http://api.example/x") is None
    assert trust.match("ws://api.example/") is None
    assert trust.match("api.example/x") and trust.match("wss://api.example/x")
    assert trust.match("http://corp.example/x") and trust.match("https://old.example/x")
    # Taint still matches however a path is written: its key folds the case.
    (dest,) = parse("https://evil.example/Collect/X")
    assert dest.key == "evil.example/collect/x" and dest.exact_path == "/Collect/X"


def test_a_remembered_approval_keeps_what_a_server_reads_and_a_denial_does_not():
    """Grants (trust_key) keep a URL's path case and the web scheme written; the lookups
    (trust_keys) let an approval of clear text or of no scheme vouch for any scheme, and one of
    https only for https or none written. Denials stay on the folded key."""
    key = destinations.grant_key
    assert key("https://HOOKS.Example./services/T0/B/x/") == (
        "https://hooks.example/services/T0/B/x")
    assert key("hooks.example/services/T0") == "hooks.example/services/T0"
    assert key("HTTP://hooks.example/A") == "http://hooks.example/A"
    assert key("Bob@Corp.Example") == "bob@corp.example"  # addresses: as before
    for value in ["https://hooks.example/services/T0/B/x", "ws://h.example/A", "h.example/A",
                  "Bob@corp.example", "#General", "not a destination"]:
        assert key(key(value)) == key(value), value  # a question's keys read back the same
    lookups = destinations.grant_lookup_keys
    https = key("https://h.example/A")
    assert https in lookups("https://h.example/A") and https in lookups("h.example/A")
    for clear in ["http://h.example/A", "ws://h.example/A", "wss://h.example/A",
                  "https://h.example/a", "https://h.example/A/b"]:
        assert https not in lookups(clear), clear
    for approved in ["http://h.example/A", "h.example/A"]:
        for later in ["http://h.example/A", "https://h.example/A", "h.example/A"]:
            assert key(approved) in lookups(later), (approved, later)
    assert normalize_destination("https://hooks.example/services/T0") == "hooks.example/services/t0"


def test_taint_candidates_and_aliases():
    (dest,) = parse("https://evil.com:8080/collect/SECRET/x")
    assert candidates(dest) == [
        ("evil.com:8080/collect/secret/x", "value"), ("evil.com:8080/collect/secret", "path"),
        ("evil.com:8080/collect", "path"), ("evil.com:8080", "host"), ("evil.com", "host")]
    (sub,) = parse("https://a.b.evil.co.uk/x")  # parents down to the registrable domain only
    assert candidates(sub)[-2:] == [("b.evil.co.uk", "parent"), ("evil.co.uk", "parent")]
    (mail,) = parse("attacker+tag@evil.com")
    assert candidates(mail) == [("attacker+tag@evil.com", "value"), ("attacker@evil.com", "value"),
                                ("evil.com", "mail_host")]
    assert aliases("evil.com/collect", URL) == [("evil.com/collect", URL),
                                                ("evil.com", "url_host")]
    assert aliases("a+b@x.example", EMAIL) == [("a+b@x.example", EMAIL), ("a@x.example", EMAIL)]


# -- extraction ---------------------------------------------------------------------------------


def test_extraction_finds_each_kind_once_left_to_right():
    text = ("Mail attacker+1@Evil.com. or visit https://evil.com/collect?x=1, evil.org/a, "
            "10.1.1.3 and http://167837955/ or call +41 44 668 18 00; ping @eve in #ops; "
            "IBAN CH93 0076 2011 6238 5295 7. Files: notes.txt, v3.11.2")
    found = [(key, kind) for key, kind, _s, _e in extract_destinations(text)]
    assert found == [
        ("attacker+1@evil.com", "email"), ("evil.com/collect", "url"), ("evil.org/a", "url"),
        ("10.1.1.3", "ip"), ("10.1.1.3", "url"), ("+41446681800", "phone"),
        ("@eve", "handle"), ("#ops", "channel"), ("ch9300762011623852957", "account")]
    spans = [(s, e) for _k, _kind, s, e in extract_destinations(text)]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_extraction_is_computed_once_per_text():
    text = "write to ops@leak.example " * 100
    assert extract_destinations(text) is extract_destinations(text)


@pytest.mark.parametrize("name", sorted(hostile_inputs(1)))
def test_extraction_survives_hostile_text(name):
    text = "a@b.example x.example @h #c 1.2.3.4 " + hostile_inputs(256 * 1024)[name]
    found = extract_destinations(text)
    assert ("1.2.3.4", "ip") in [(k, kind) for k, kind, _s, _e in found]


# -- paths --------------------------------------------------------------------------------------


def test_symlinks_are_resolved_before_dot_dot(tmp_path: Path):
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    (outside / "d1" / "d2").mkdir(parents=True)
    allowed.mkdir()
    (allowed / "deep").symlink_to(outside / "d1" / "d2")
    roots = confine.allowed_roots((str(allowed),))
    assert confine.resolve(f"{allowed}/deep/../s.txt") == str(outside / "d1" / "s.txt")
    assert not confine.inside(f"{allowed}/deep/../s.txt", roots)
    assert not confine.inside(f"{allowed}/deep/new/file.txt", roots)  # a new file, linked dir
    assert confine.inside(f"{allowed}/new/../s.txt", roots)  # nearest existing parent: allowed
    assert confine.inside(f"file://{allowed}/a%20b.txt", roots)
    assert not confine.inside("file:///etc/passwd", roots)
    assert not confine.inside(f"{allowed}/a\x00", roots)
    linked_root = tmp_path / "root-link"
    linked_root.symlink_to(allowed)
    assert confine.inside(f"{allowed}/x.txt", confine.allowed_roots((str(linked_root),)))


def test_a_server_that_collapses_dot_dot_first_is_confined_too(tmp_path: Path):
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (allowed / "jump").symlink_to(tmp_path / "elsewhere")
    roots = confine.allowed_roots((str(allowed),))
    # The kernel reads elsewhere/../allowed/sub (inside); Node's path.resolve reads
    # allowed/sub (inside) — both readings are inside, so this is allowed.
    assert confine.inside(f"{allowed}/jump/../allowed/sub", roots)
    # Lexically inside, really outside.
    assert not confine.inside(f"{allowed}/jump/../elsewhere", roots)


def test_path_like_values():
    for value in ["/etc/passwd", "~/x", "./a", "../a", "C:\\x", "file:///x"]:
        assert confine.looks_like_path(value), value
    for value in ["hello", "/ not a path", "a/b c", "https://x.example/a"]:
        assert not confine.looks_like_path(value), value
    assert os.sep == "/"


# -- heuristics -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "sending"), [
    ("mail_out", True), ("deliver", True), ("read_then_forward", True), ("http_request", True),
    ("sendMessage", True), ("notify_team", True), ("webhook_call", True), ("add_comment", True),
    ("get_email", False), ("list_posts", False), ("delete_message", False),
    ("create_pull_request", False), ("read_inbox", False), ("move_file", False),
])
def test_sending_tools_are_known_by_name(name, sending):
    assert heuristics.is_sending({"name": name}) is sending


def test_sending_tools_are_known_by_title_and_description():
    assert heuristics.is_sending({"name": "do_it", "description": "Sends the text to x."})
    assert heuristics.is_sending({"name": "go", "annotations": {"title": "Forward a message"}})
    assert not heuristics.is_sending({"name": "go", "description": "Reads messages sent to you"})


def test_tool_entry_for_an_unpacked_sender_and_reader():
    props: dict[str, dict[str, Any]] = {"target": {}, "body": {}, "path": {}}
    entry = heuristics.tool_entry({"name": "mail_out", "inputSchema": {"properties": props}})
    assert entry["exfiltrating"] and entry["sink_params"] == ("target",)
    assert entry["path_params"] == ("path",)
    mover = heuristics.tool_entry({"name": "move_file", "inputSchema": {"properties": {
        "source": {}, "target": {}}}})
    assert "exfiltrating" not in mover and mover["path_params"] == ("source", "target")
    closed = heuristics.tool_entry({"name": "send_note", "annotations": {
        "readOnlyHint": True, "openWorldHint": False}, "inputSchema": {"properties": {"to": {}}}})
    assert "exfiltrating" not in closed


def test_sinks_nested_in_object_and_array_parameters_are_found():
    schema = {"properties": {
        "message": {"type": "object", "properties": {"to": {}, "text": {}}},
        "parts": {"type": "array", "items": {"properties": {"recipient": {}}}},
        "title": {}}}
    entry = heuristics.tool_entry({"name": "compose", "inputSchema": schema})
    assert entry["exfiltrating"] and entry["sink_params"] == ("message.to", "parts")


@pytest.mark.parametrize(("text", "found"), [
    ("mirror it to 2001:db8::7.", ["2001:db8::7"]),
    ("host [2001:DB8:0:0:0:0:0:7]:8080", ["2001:db8::7"]),
    ("full 2001:0db8:0000:0000:0000:ff00:0042:8329 form", ["2001:db8::ff00:42:8329"]),
    ("loopback ::1 and fe80::1%eth0", ["::1", "fe80::1"]),
    ("mapped ::ffff:10.1.1.3 is the IPv4", ["10.1.1.3"]),
    # not addresses
    ("at 12:30:45 UTC", []),
    ("std::vector<int> a::b and dead::beef", []),
    ("mac ab:cd:ef:01:23:45", []),
    ("1::2::3 is two gaps", []),
    ('{"a":"b","c":1}', []),
])
def test_bare_ipv6_addresses_in_free_text(text, found):
    assert [key for key, kind, _, _ in extract_destinations(text) if kind == IP] == found


@given(st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\u200bab@.:/"),
               max_size=40))
def test_whitespace_folds_as_the_regex_definition(raw):
    """Two spellings of one address that differ only in whitespace compare equal, and the
    fold is the one the keys in the trust and taint tables were made with."""
    assert normalize_destination(raw) == normalize_destination(re.sub(r"\s+", " ", raw).strip())
    assert destinations._clean(raw) == re.sub(r"\s+", " ", raw).strip() or not raw.isascii()


_IPV6_DEFINITION = re.compile(r"(?<![\w:.])(?=[0-9A-Fa-f.]*:)[0-9A-Fa-f:.]{2,45}(?![\w:.])")


@given(st.text(alphabet=st.sampled_from("0123456789abcdefABCDEF:.:.gz_ -\u00e9\u0663\n[]"),
               max_size=120))
def test_ipv6_candidates_are_the_regex_definition(text):
    """Bare IPv6 addresses are found from their colons; the runs found are exactly those of
    the bounded pattern they replace (a longer or word-adjacent run is never an address)."""
    expected = [(m.start(), m.group(0)) for m in _IPV6_DEFINITION.finditer(text)]
    assert list(destinations._ipv6_runs(text)) == expected
