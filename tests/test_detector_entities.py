"""The detector's entity decoding is html.unescape's, piece for piece."""

from __future__ import annotations

import html

from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.detector.entities import unescape

FRAGMENTS = ["&", "&amp;", "&amp", "&lt", "&LT", "&#", "&#x", "&#X4", "&#12", "&#1114112;",
             "&#0;", "&#xD800;", "&#128;", "&notit;", "&notin", "&AElig", "&ac;", "&&", "#",
             "x", "1", "A", ";", " ", "\n", "\t", "amp", "é", "ampx", "&copy2024"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=14).map("".join))
def test_it_decodes_exactly_as_html_unescape(text: str) -> None:
    assert unescape(text) == html.unescape(text)


def test_minified_javascript_keeps_its_operators_and_decodes_its_entities() -> None:
    code = "if(a&&b){x=c&d;y='&amp;&lt;b&gt;'}" * 200
    assert unescape(code) == html.unescape(code)
    assert "a&&b" in unescape(code) and "'&<b>'" in unescape(code)
