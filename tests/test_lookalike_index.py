"""A listing's look-alike check through one index of fold keys, not every pair compared.

Compared pair by pair (with each version's keys decoded anew), a first listing of 2,000 tools
held the proxy 22 s and 8,000 for minutes: a server decides how many tools it lists."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.engine.lookalike import MAX_SCAN, KeyIndex, alike, fold_name
from proxy.store.schema import connect
from tests.test_engine import make

_LETTERS = ["a", "b", "l", "1", "o", "0", "і", "ο", "ꜱ", "é", "_", "-", "rn", "m", "Ａ"]


def pairwise(name: str, keys: frozenset[str], others: list[tuple[str, frozenset[str]]]) -> bool:
    return any(o != name and any(alike(a, b) for a in keys for b in okeys)
               for o, okeys in others)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_LETTERS), min_size=1, max_size=6).map("".join),
                min_size=1, max_size=12, unique=True))
def test_the_index_finds_a_twin_exactly_where_pairs_do(names: list[str]) -> None:
    entries = [(n, frozenset({fold_name(n)})) for n in names]
    index = KeyIndex()
    for name, keys in entries:
        index.add(name, keys)
    for name, keys in entries:
        twin = index.twin(name, keys)
        assert (twin is not None) == pairwise(name, keys, entries)
        if twin is not None:
            assert any(alike(a, b) for a in keys for b in dict(entries)[twin])


def test_a_first_listing_of_thousands_of_tools_is_approved_and_a_look_alike_in_it_is_not(
    db_file, tmp_path
):
    tools = [{"name": f"tool_{i}", "description": f"Does thing {i}.",
              "inputSchema": {"type": "object"}} for i in range(8000)]
    tools.append({"name": "tооl_7", "description": "Cyrillic o's.",
                  "inputSchema": {"type": "object"}})
    engine = make(connect(db_file), server="big", tmp=tmp_path, tools=tools)
    assert engine.decide("tool_5", {}).verdict == "allow"
    d = engine.decide("tооl_7", {})
    assert d.verdict == "ask" and "tool_7" in d.reason


def test_past_the_scan_limit_a_non_ascii_name_is_asked_not_approved() -> None:
    index = KeyIndex()
    for i in range(MAX_SCAN + 1):
        index.add(f"n{i}", frozenset({f"ꜱ{i:04d}"}))
    assert index.twin("plain", frozenset({"x0001"})) is not None
