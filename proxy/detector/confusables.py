"""Cross-script look-alikes and styled letters folded to Latin before matching.

A small hand-kept table of the Cyrillic, Greek and other letters that pass for Latin ones in
ordinary fonts. The full Unicode confusables list is large and would cost import time on the
proxy's hot path; these are the letters attackers use to dodge English-language rules.

Styled letters are what "fancy text" generators write, which NFKC leaves alone: small
capitals, letters in negative (filled) squares and circles, regional indicator symbols and
parenthesised letters (NFKC would make those "(a)"). A model reads them as the letters they
draw; so do the rules, after fold_styled. Middle dots and bullets between letters are read as
full stops the same way.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_PAIRS = (
    # Cyrillic lower case
    "аa вb еe кk мm нh оo рp сc тt уy хx ѕs іi јj ԁd ԛq ԝw һh ӏl ɡg пn гr ьb ѵv"
    # Cyrillic upper case
    " АA ВB ЕE КK МM НH ОO РP СC ТT УY ХX ЅS ІI ЈJ ԀD ԚQ ԜW ҺH ӀI"
    # Greek
    " αa βb εe ιi κk νv οo ρp τt υu χx γy ωw ϲc ϳj"
    " ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX"
    # Latin and Armenian odds and ends
    " ıi ȷj ɑa ɩi ʏy օo սu հh ոn ǀl"
)

FOLD: dict[int, str] = {ord(pair[0]): pair[1] for pair in _PAIRS.split()}

_FOLD_CHARS = frozenset(chr(code) for code in FOLD)

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
STYLED: dict[str, str] = {
    **dict(zip("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnopqrstuvwyz", strict=True)),
    **{chr(first + i): letter
       for first in (0x1F170, 0x1F150, 0x1F1E6, 0x249C)  # negative squared and circled,
       for i, letter in enumerate(_LETTERS)},  # regional indicators, parenthesised
}
# Dots that separate letters as a full stop would ("s·e·n·d t·h·e k·e·y"): read as full stops,
# so the spelled-out words are read as the ones written with "." (respell.py). Middle dots
# (Latin, Greek, word separator, katakana and its half-width form, runic), bullets, the
# operator dots and the hyphenation point; before NFKC, which turns the Greek one into the Latin.
STYLED.update(dict.fromkeys(
    "\u00b7\u0387\u2e31\u30fb\uff65\u16eb\u2022\u2043\u25cf\u25e6\u2981\u2219\u22c5\u2027",
    "."))
STYLED_CHARS = frozenset(STYLED)
_STYLED_TABLE: dict[int, str] = str.maketrans(STYLED)
_FEW = 8  # str.replace per character is C speed; past a few characters one translate() wins
MAX_MIXED_WORDS = 256
_FOLDABLE = re.escape("".join(chr(c) for c in FOLD))
# A foldable letter touching a Latin one: the mark of a word that mixes scripts.
_MIXED_PATTERN = f"[A-Za-z][{_FOLDABLE}]|[{_FOLDABLE}][A-Za-z]"


@functools.cache
def _mixed() -> Any:
    # RE2: one linear pass; Python's engine tries both branches at every character of long
    # non-Latin texts.
    import re2

    return re2.compile(_MIXED_PATTERN)


def fold_confusables(text: str) -> str:
    """Fold look-alikes to Latin inside words that mix Latin with Cyrillic or Greek letters.

    Words written wholly in Cyrillic or Greek stay as they are in text written mostly in those
    scripts, so text (and rules) in those languages is untouched; "іgnоrе" (Latin g, n, r
    among Cyrillic і, о, е) becomes "ignore", and so does a wholly Cyrillic look-alike word in
    text that is mostly ASCII.
    """
    if text.isascii():
        return text
    spans: list[tuple[int, int]] = []
    for count, match in enumerate(_mixed().finditer(text)):
        if count >= MAX_MIXED_WORDS:
            return _fold_all(text)  # a text this mixed is a disguise throughout
        start, end = match.start(), match.end()
        if spans and start < spans[-1][1]:
            continue  # same word as the previous pair
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        while end < len(text) and text[end].isalnum():
            end += 1
        spans.append((start, end))
    if not spans:
        return _fold_all(text) if _mostly_latin(text) else text
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.append(text[pos:start])
        out.append(text[start:end].translate(FOLD))
        pos = end
    out.append(text[pos:])
    folded = "".join(out)
    return _fold_all(folded) if _mostly_latin(folded) else folded


def _mostly_latin(text: str) -> bool:
    """Is most of the text ASCII? Then a word wholly in look-alike letters ("раураl", all
    Cyrillic) is a disguise among Latin words, not a word of another language's text."""
    return len(text.encode("ascii", "ignore")) * 2 >= len(text) and bool(set(text) & _FOLD_CHARS)


def _fold_all(text: str) -> str:
    return _replace(text, set(text) & _FOLD_CHARS, FOLD)


def fold_styled(text: str, chars: set[str]) -> str:
    """Styled letters (STYLED) to the plain letters they draw; `chars`: the text's characters.
    Before NFKC, which would turn a parenthesised letter into three characters."""
    return _replace(text, chars & STYLED_CHARS, _STYLED_TABLE)


def _replace(text: str, present: set[str], table: dict[int, str]) -> str:
    """Each character of `present` replaced by table[ord(char)]: str.replace per character
    (C speed, where translate() on non-ASCII text looks up a dict for every character), or one
    translate() where many are present (a megabyte of all of them: one pass, not 130)."""
    if len(present) > _FEW:
        return text.translate(table)
    for char in present:
        text = text.replace(char, table[ord(char)])
    return text
