"""Marks of several characters that the passes look for in one text before doing more work:
decode_chunks' escape and ROT13 marks, strip_markup's comment opener and the Markdown marks of
what a renderer does not show (unrendered.markdown_hidden).

A `str` search for a mark of two or more characters walks the whole text (some 3 µs per 4 KB
each, and a text is asked up to eleven of them), while one-character marks are found by memchr
at a fraction of that. Where the C extension is built, the readers' needles walk over the
text's UTF-8 bytes (readers.walk) answers these too: a mark here is ASCII, so it occurs in the
text exactly where its bytes occur in the text's UTF-8 (surrogatepass) encoding, whose
non-ASCII characters are all bytes of 0x80 and up. A bit set in `marks` means the mark occurs.
"""

from __future__ import annotations

HEX_ESCAPE = 1 << 0  # "\\x"
HEX_PREFIX = 1 << 1  # "0x"
ROT_DIGITS = 1 << 2  # "13"
ROT_WORD = 1 << 3  # "rot", "ROT" or "Rot"
COMMENT = 1 << 4  # "<!--"
MD_REFERENCE = 1 << 5  # "]:", a link reference definition (a Markdown comment)
MD_LINK = 1 << 6  # "](", an inline link, which may have a title

# (bit, the marks any of which sets it), in bit order.
MARKS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (HEX_ESCAPE, ("\\x",)),
    (HEX_PREFIX, ("0x",)),
    (ROT_DIGITS, ("13",)),
    (ROT_WORD, ("rot", "ROT", "Rot")),
    (COMMENT, ("<!--",)),
    (MD_REFERENCE, ("]:",)),
    (MD_LINK, ("](",)),
)
NEEDLES: tuple[bytes, ...] = tuple(m.encode("ascii") for _, group in MARKS for m in group)


def marks_in(text: str) -> int:
    """The marks of `text` by `str` searches (what readers.walk's bits stand for)."""
    out = 0
    for bit, group in MARKS:
        if any(mark in text for mark in group):
            out |= bit
    return out
