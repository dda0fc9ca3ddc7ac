"""Readers for the other ways text is smuggled past a pattern: base32 (padded), Ascii85 (`<~ ~>`),
uuencode, quoted-printable, MIME encoded-words, Morse code, Braille, NATO spelling, character
codes (decimal, octal and `\\u` escapes, `U+` code points, 8-bit binary), text reversed,
letters buried under combining marks, text turned upside down, text split into quoted
pieces to be joined again, and words cut with a hyphen at a line's end.

Each reader has a gate (_GATES) and an RE2 pattern searched only where the gate opens; a reader
runs only where its pattern matched, finds its spans with RE2 (linear: no input makes it
backtrack) and returns what they read as, when that looks like text. What a reader returns is
scanned like the rest and noted `decoded:<name>`.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import quopri
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from proxy.detector import marks, native
from proxy.detector.decode import MIN_DECODED_CHARS, looks_like_text
from proxy.detector.decode import _utf8 as _text
from proxy.detector.re2spans import found, spans

_MAX_CHUNKS = 256  # distinct chunks read per reader and text; more is noise, not a message


def _words(value: str) -> str | None:
    """Stricter than looks_like_text, for readers whose input is common in data (numbers,
    dots and dashes): mostly letters, at most a few other signs."""
    if not looks_like_text(value):
        return None
    body = value.replace(" ", "")
    letters = sum(ch.isalpha() for ch in body)
    return value if letters >= 0.75 * len(body) else None


@functools.cache
def _compiled(pattern: str) -> Any:
    import re2

    return re2.compile(pattern.encode())


def _runs(pattern: str, data: bytes) -> list[str]:
    """The distinct matches of `pattern` in `data` (UTF-8), in order, at most _MAX_CHUNKS."""
    out: dict[str, None] = {}
    for start, end in spans(_compiled(pattern), data):
        out[data[start:end].decode("utf-8", "surrogatepass")] = None
        if len(out) >= _MAX_CHUNKS:
            break
    return list(out)


# --- base32 ---------------------------------------------------------------------------------
# The first two characters of a group carry the top 10 bits of text's first two bytes:
# printable ASCII (0x20-0x7e) has top five bits 00100-01111 (E-P), and the next five bits end
# in the top two of the second byte, 00 or 01 (values whose bit 1 is clear).
_B32 = r"(?:^|[^A-Za-z0-9+/=])[E-P][ABEFIJMNQRUVYZ45][A-Z2-7]{14,}={3,6}"


def _base32(text: str, data: bytes) -> list[str]:
    found = []
    for run in _runs(_B32, data):
        token = run[1:] if not run[:1].isalnum() else run
        body = token.rstrip("=")
        try:
            raw = base64.b32decode(body + "=" * (-len(body) % 8))
        except (binascii.Error, ValueError):
            continue
        value = _text(raw)
        if value is not None:
            found.append(value)
    return found


# --- Ascii85, framed ------------------------------------------------------------------------
_A85 = r"<~[!-uz\s]{10}"


def _ascii85(text: str, data: bytes) -> list[str]:
    found: list[str] = []
    at = text.find("<~")
    while at >= 0 and len(found) < _MAX_CHUNKS:
        end = text.find("~>", at + 2)
        if end < 0:
            break
        try:
            raw = base64.a85decode(text[at : end + 2], adobe=True)
        except (binascii.Error, ValueError):
            raw = b""
        value = _text(raw)
        if value is not None:
            found.append(value)
        at = text.find("<~", end + 2)
    return found


# --- uuencode -------------------------------------------------------------------------------
_UU_BEGIN = re.compile(r"begin [0-7]{3,4} [^\n]{1,200}")
_UU = r"(?m:^begin [0-7]{3,4} [^\n]{1,200}\n[!-`])"


def _uuencode(text: str, data: bytes) -> list[str]:
    """Each `begin` block's lines decoded until `end`, a blank or a line that is not uu; one
    walk over the lines (a block ends where the next begins)."""
    found: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines) and len(found) < _MAX_CHUNKS:
        line = lines[i]
        i += 1
        if not (line.startswith("begin ") and _UU_BEGIN.fullmatch(line.rstrip("\r"))):
            continue
        raw = bytearray()
        while i < len(lines):
            body = lines[i].rstrip("\r")
            if body in ("`", "end", " ", "") or body.startswith("begin "):
                break
            i += 1
            try:
                raw += binascii.a2b_uu(body)
            except (binascii.Error, ValueError):
                break
        value = _text(bytes(raw))
        if value is not None:
            found.append(value)
    return found


# --- quoted-printable -----------------------------------------------------------------------
# An escape of printable ASCII (or a UTF-8 character) followed by a letter or another escape,
# or a soft line break followed by a letter: `=49gnore`, `all=20previous`, `ign=\nore`; not
# code's `x=32,y=64`. One escape or break suffices to look; the reader decodes only lines
# with spaces. Each alternative starts with "=", so RE2 skips to each "=" (memchr) and its
# automaton stays small (a gap between two escapes would make it track every "=" in it).
_QP = r"=(?:(?:[2-7][0-9A-F]|[C-F][0-9A-F]=[89AB][0-9A-F])[A-Za-z=]|\r?\n[A-Za-z])"
_QP_MARK = re.compile(r"=[0-9A-F]{2}")


def _quoted_printable(text: str, data: bytes) -> list[str]:
    """The lines with escapes or soft breaks, decoded together (a soft break joins two)."""
    lines = "".join(
        line for line in text.splitlines(keepends=True)
        if "=" in line and (line.rstrip("\r\n").endswith("=") or _QP_MARK.search(line))
    )
    if " " not in lines:  # prose is encoded with spaces; a base64 blob's `=\n` is not QP
        return []
    value = _text(quopri.decodestring(lines.encode("utf-8", "surrogatepass")))
    return [value] if value is not None and value != lines else []


# --- MIME encoded-words ---------------------------------------------------------------------
_MIME = r"=\?[A-Za-z0-9_.:-]{1,40}\?[BbQq]\?"
_MIME_WORD = r"=\?[A-Za-z0-9_.:-]{1,40}\?[BbQq]\?[^?\s]{1,1000}\?="


def _mime_words(text: str, data: bytes) -> list[str]:
    found = []
    for word in _runs(_MIME_WORD, data):
        charset, kind, body = word[2:-2].split("?", 2)
        try:
            codecs.lookup(charset)
        except LookupError:
            charset = "utf-8"
        try:
            if kind in "Bb":
                raw = base64.b64decode(body + "=" * (-len(body) % 4))
            else:
                raw = quopri.decodestring(body.encode("ascii", "replace"), header=True)
        except (binascii.Error, ValueError):
            continue
        value = raw.decode(charset, "replace")
        if looks_like_text(value):
            found.append(value)
    return found


# --- Morse code -----------------------------------------------------------------------------
_MORSE_TABLE = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g",
    "....": "h", "..": "i", ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n",
    "---": "o", ".--.": "p", "--.-": "q", ".-.": "r", "...": "s", "-": "t", "..-": "u",
    "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z", "-----": "0",
    ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
    "--...": "7", "---..": "8", "----.": "9", ".-.-.-": ".", "--..--": ",", "..--..": "?",
    ".----.": "'", "-.-.--": "!", "-..-.": "/", "---...": ":", ".-.-.": "+", "-....-": "-",
    ".--.-.": "@", "-...-": "=",
}
# Dots and dashes as people type them: middle dot and bullet, en and em dash, minus sign.
_MORSE_SIGNS = str.maketrans({"·": ".", "•": ".", "–": "-", "—": "-", "−": "-", "_": "-"})
_CODE = r"[.\-_\x{00B7}\x{2022}\x{2013}\x{2014}\x{2212}]{1,7}"
_GAP = r"(?: {1,7}|\t| ?[/|] ?)"
# Six codes in a row, each a whole word: a dotted leader, a rule line or `--flag` is not one.
_MORSE = rf"(?:^|[\s(\[:\"'])(?:{_CODE}{_GAP}){{5}}{_CODE}(?:$|[\s)\].,;:\"'])"
_MORSE_RUN = rf"(?:{_CODE}{_GAP})+{_CODE}"


def _morse(text: str, data: bytes) -> list[str]:
    found = []
    for run in _runs(_MORSE_RUN, data):
        run = run.translate(_MORSE_SIGNS)
        words = re.split(r"\s*[/|]\s*|\s{2,}|\t", run)
        letters = [[_MORSE_TABLE.get(code) for code in word.split()] for word in words]
        codes = [c for word in letters for c in word]
        if len(codes) < MIN_DECODED_CHARS or codes.count(None) * 10 > len(codes):
            continue
        value = _words(" ".join("".join(c or "" for c in word) for word in letters))
        if value is not None:
            found.append(value)
    return found


# --- Braille --------------------------------------------------------------------------------
# North American Braille ASCII: cell U+2800 + n reads as this table's character n (the letters
# are those of grade 1 braille); after the number sign (⠼) the letters a-j are digits.
_BRAILLE_ASCII = " a1b'k2l@cif/msp\"e3h9o6r^djg>ntq,*5<-u8v.%[$+x!&;:4\\0z7(_?w]#y)="
_BRAILLE = r"[\x{2801}-\x{28FF}]{2}[\x{2800}-\x{28FF} ]{0,3}[\x{2801}-\x{28FF}]{2}"
_BRAILLE_RUN = r"[\x{2800}-\x{28FF}][\x{2800}-\x{28FF} ,.!?'-]{3,}"
_DIGIT_OF = dict(zip("abcdefghij", "1234567890", strict=True))


def _braille(text: str, data: bytes) -> list[str]:
    found = []
    for run in _runs(_BRAILLE_RUN, data):
        out: list[str] = []
        number = False
        for ch in run:
            code = ord(ch) - 0x2800
            if not 0 <= code < 0x100:
                out.append(ch)
                number = False
                continue
            if code == 0x3C:  # the number sign
                number = True
                continue
            plain = _BRAILLE_ASCII[code & 0x3F]
            if number and plain in _DIGIT_OF:
                plain = _DIGIT_OF[plain]
            else:
                number = False
            out.append(plain)
        value = _words("".join(out))
        if value is not None:
            found.append(value)
    return found


# --- NATO spelling --------------------------------------------------------------------------
_NATO_WORDS = {
    "alfa": "a", "alpha": "a", "bravo": "b", "charlie": "c", "delta": "d", "echo": "e",
    "foxtrot": "f", "golf": "g", "hotel": "h", "india": "i", "juliet": "j", "juliett": "j",
    "kilo": "k", "lima": "l", "mike": "m", "november": "n", "oscar": "o", "papa": "p",
    "quebec": "q", "romeo": "r", "sierra": "s", "tango": "t", "uniform": "u", "victor": "v",
    "whiskey": "w", "whisky": "w", "xray": "x", "x-ray": "x", "yankee": "y", "zulu": "z",
}
_NATO_WORD = "(?:" + "|".join(sorted(_NATO_WORDS, key=len, reverse=True)) + ")"
_NATO_GAP = r"[ ,.;/|-]{1,3}"
# Five in a row: "Alpha, Bravo" in a sentence is not spelling.
_NATO = rf"(?i:\b{_NATO_WORD}(?:{_NATO_GAP}{_NATO_WORD}){{4}}\b)"
_NATO_RUN = rf"(?i:\b{_NATO_WORD}(?:{_NATO_GAP}{_NATO_WORD}\b)+)"
_NATO_SPLIT = re.compile(r"([ ,.;/|-]{1,3})")


def _nato(text: str, data: bytes) -> list[str]:
    found = []
    for run in _runs(_NATO_RUN, data):
        out: list[str] = []
        for piece in _NATO_SPLIT.split(run):
            letter = _NATO_WORDS.get(piece.lower())
            if letter is not None:
                out.append(letter)
            elif "/" in piece or "|" in piece or piece.count(" ") > 1:
                out.append(" ")  # a word break
        value = "".join(out)
        if len(value) >= MIN_DECODED_CHARS:
            found.append(value)
    return found


# --- character codes ------------------------------------------------------------------------
_DEC = r"(?:3[2-9]|[4-9][0-9]|1[01][0-9]|12[0-6])"
_DEC_GAP = r"(?:, ?| |; ?)"
_DECIMAL = rf"\b{_DEC}(?:{_DEC_GAP}{_DEC}){{5,}}\b"
_OCTAL = r"(?:\\[0-3][0-7]{2}){6,}"
_UNICODE_ESCAPE = r"(?:\\u[0-9a-fA-F]{4}){6,}"
_CODE_POINT = r"(?:[Uu]\+[0-9A-Fa-f]{4,5}[ ,]{0,2}){6,}"
_BINARY = r"\b0[01]{7}(?:[ ,]{0,2}0[01]{7}){5,}\b"
_ESCAPED_CODES = "|".join(f"(?:{p})" for p in (_OCTAL, _UNICODE_ESCAPE, _CODE_POINT, _BINARY))
_NUMBER = re.compile(r"\\u([0-9a-fA-F]{4})|[Uu]\+([0-9A-Fa-f]{4,5})|\\([0-7]{3})|\b([01]{8})\b"
                     r"|\b(\d{2,3})\b")


def _char_codes(text: str, data: bytes, pattern: str = _ESCAPED_CODES) -> list[str]:
    found = []
    for run in _runs(pattern, data):
        chars = []
        for match in _NUMBER.finditer(run):
            hex4, point, octal, binary, decimal = match.groups()
            value = (int(hex4 or point, 16) if hex4 or point else int(octal, 8) if octal
                     else int(binary, 2) if binary else int(decimal))
            if not 0 < value < 0x110000 or 0xD800 <= value < 0xE000:
                break
            chars.append(chr(value))
        decoded = _words("".join(chars))
        if decoded is not None:
            found.append(decoded)
    return found


def _decimal_codes(text: str, data: bytes) -> list[str]:
    return _char_codes(text, data, _DECIMAL)


# --- text reversed --------------------------------------------------------------------------
# Reversed forms of the words injections are made of (the learned layer's word classes, five
# letters or more, no palindromes) and of the commonest short words whose reversals are not
# words themselves ("eht", "rof", "siht"; not "dna", "era", "ton"): two on one line mark it as
# written backwards. A note written backwards is mostly ordinary words ("tnuocca knab eht
# egnahc"), which the class words alone did not reach.
_REVERSED_SHORT = ("eht", "rof", "siht", "taht", "htiw", "morf", "ruoy", "uoy", "lla", "neht",
                   "nehw", "eseht", "ereh")


def _reversed_words() -> list[str]:
    from proxy.detector.lexicon import CLASS_OF

    long = {w[::-1] for w in CLASS_OF if len(w) >= 5 and w != w[::-1] and w.isalpha()}
    return sorted(long | set(_REVERSED_SHORT))


_REVERSED = "(?i:\\b(?:" + "|".join(_reversed_words()) + ")\\b)"


def _reversed(text: str, data: bytes) -> list[str]:
    """The lines with two or more reversed words, each read right to left, and each word read
    backwards in place (the two ways of writing text backwards)."""
    found = []
    pattern = _compiled(_REVERSED)
    for line in text.splitlines():
        raw = line.encode("utf-8", "surrogatepass")
        hits = {raw[a:b].lower() for a, b in spans(pattern, raw)}
        if len(hits) < 2:
            continue
        found.append(line[::-1])
        found.append(" ".join(word[::-1] for word in line.split(" ")))
        if len(found) >= _MAX_CHUNKS:
            break
    return found


# --- upside down ----------------------------------------------------------------------------
# "Upside-down text" generators write each letter as its half-turned look-alike and the line
# backwards: "ǝɹoubᴉ" is "ignore". Read back: the line reversed, every letter turned again
# (the ASCII ones too: an upside-down n is u, a p is d, a b is q).
_UPSIDE = dict(zip(
    "ɐqɔpǝɟƃɥᴉıɾʞlɯuodbɹsʇnʌʍxʎz∀ƆƎℲ⅁ſ˥Ԁᴚ⊥∩Λ⅄˙¿¡‾⅋",
    "abcdefghiijklmnopqrstuvwxyzacefgjlprtuvy.?!_&", strict=True))
_UPSIDE_TABLE = str.maketrans({**_UPSIDE, "'": ",", ",": "'"})
# Letters only an upside-down text uses together (IPA and some African alphabets have one or
# two of them: ɔ, ɛ and ə are theirs, so ɔ does not count).
_UPSIDE_MARKS = frozenset("ɐǝɟƃɥᴉɾʞɯɹʇʌʍʎ∀Ǝ⅁ᴚ⊥⅄")
_UPSIDE_DOWN = "[" + "".join(sorted(_UPSIDE_MARKS)) + "]"


def _upside_down(text: str, data: bytes) -> list[str]:
    """Each line with three or more distinct upside-down letters, turned the right way up."""
    found = []
    for line in text.splitlines():
        if len(_UPSIDE_MARKS.intersection(line)) < 3:
            continue
        found.append(line[::-1].translate(_UPSIDE_TABLE))
        if len(found) >= _MAX_CHUNKS:
            break
    return found


# --- combining marks ------------------------------------------------------------------------
_MARKS = "\\x{0300}-\\x{036F}\\x{1AB0}-\\x{1AFF}\\x{1DC0}-\\x{1DFF}\\x{20D0}-\\x{20FF}" \
    "\\x{FE20}-\\x{FE2F}"
# Four letters in a row each carrying marks of the generic blocks (strike-through, "zalgo"):
# scripts whose vowels are combining marks use marks of their own blocks, not these.
_COMBINING = rf"(?:[^\s{_MARKS}][{_MARKS}]{{1,32}}){{4}}"
_MARK_CHARS = re.compile(
    "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]"
)


def _combining(text: str, data: bytes) -> list[str]:
    bare = _MARK_CHARS.sub("", unicodedata.normalize("NFD", text))
    return [unicodedata.normalize("NFC", bare)]


# --- pieces to be joined ("payload splitting", Kang et al. 2023) ------------------------------
# A phrase cut into quoted pieces that no rule sees whole, with an order to join them:
# '"ig", "nore prev", "ious instructions"', '"htt" + "ps://x.example/?d=" + "{chat}"'. Runs
# of three or more quoted pieces (", ', `) between commas or plus signs are read joined.
_PIECE = r"""(?:"[^"\n]*"|'[^'\n]*'|`[^`\n]*`)"""
_PIECES = _PIECE + r"(?:[ \t\r\n]{0,8}[,+][ \t\r\n]{0,8}" + _PIECE + "){2,}"
_PIECE_BODY = re.compile(r""""([^"\n]*)"|'([^'\n]*)'|`([^`\n]*)`""")


def _pieces(text: str, data: bytes) -> list[str]:
    """Every run's pieces joined, the runs one per line of a single text: code and minified
    scripts hold many lists of quoted strings, and one scan of them all costs a fraction of
    one scan each."""
    found = []
    for run in _runs(_PIECES, data):
        joined = "".join("".join(groups) for groups in _PIECE_BODY.findall(run))
        if looks_like_text(joined):
            found.append(joined)
    return ["\n".join(found)] if found else []


# --- words cut at a line's end ---------------------------------------------------------------
# A word hyphenated across two lines, as justified text and PDF extraction leave it and as an
# attacker cuts it so that no rule sees it whole: "Ig-\nnore all pre-\nvious in-\nstructions".
# The lines around each cut are read with the cuts joined (a letter, a hyphen, the line break,
# up to eight spaces or tabs, a letter). Any hyphen or dash counts: after NFKC the Unicode
# hyphen, the minus sign and the dashes are still not "-" (a soft hyphen at a line break is
# made one by normalize.remove_invisible). The gate looks at the characters before NFKC, which
# turns the non-breaking hyphen into the Unicode one.
_HYPHENS = "-\u2010\u2212\u2013\u2014"
_CUT_CHARS = frozenset("\u2010\u2011\u2212\u2013\u2014")
_CUT_WORD = r"\pL[-\x{2010}\x{2212}\x{2013}\x{2014}]\r?\n[ \t]{0,8}\pL"
_CUT = re.compile(r"(?<=[^\W\d_])[" + _HYPHENS + r"]\n[ \t]{0,8}(?=[^\W\d_])")
# The same cut without the letter before it, which is checked apart: a pattern that begins with
# a class of six characters is searched quickly, one that begins with a look-behind is tried
# at every position (30 ms on a megabyte of prose).
_CUT_AT = re.compile(r"[" + _HYPHENS + r"]\n[ \t]{0,8}[^\W\d_]")


def _cut_words(text: str, data: bytes) -> list[str]:
    """Every run of lines joined by cut words, the cuts joined, the runs one per line of a
    single text (a hyphenated manual page is read once, not once per cut)."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    runs: list[list[int]] = []
    for cut in _CUT_AT.finditer(text):
        if cut.start() == 0 or not text[cut.start() - 1].isalpha():
            continue
        start = text.rfind("\n", 0, cut.start()) + 1
        end = text.find("\n", cut.end())
        end = len(text) if end < 0 else end
        if runs and start <= runs[-1][1]:
            runs[-1][1] = end
        elif len(runs) < _MAX_CHUNKS:
            runs.append([start, end])
        else:
            break
    return ["\n".join(_CUT.sub("", text[a:b]) for a, b in runs)] if runs else []


_BRAILLE_CHARS = frozenset(chr(c) for c in range(0x2801, 0x2900))
_MARK_SET = frozenset(
    chr(c) for lo, hi in ((0x300, 0x36F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF),
                          (0xFE20, 0xFE2F)) for c in range(lo, hi + 1)
)
_MORSE_CHARS = frozenset("·•–—−")

Reader = tuple[str, str, Callable[[str, bytes], list[str]]]
READERS: tuple[Reader, ...] = (
    ("base32", _B32, _base32),
    ("ascii85", _A85, _ascii85),
    ("uuencode", _UU, _uuencode),
    ("quoted_printable", _QP, _quoted_printable),
    ("mime", _MIME, _mime_words),
    ("morse", _MORSE, _morse),
    ("braille", _BRAILLE, _braille),
    ("nato", _NATO, _nato),
    ("char_codes", _ESCAPED_CODES, _char_codes),
    ("decimal_codes", _DECIMAL, _decimal_codes),
    ("reversed", _REVERSED, _reversed),
    ("combining", _COMBINING, _combining),
    ("upside_down", _UPSIDE_DOWN, _upside_down),
    ("pieces", _PIECES, _pieces),
    ("cut_words", _CUT_WORD, _cut_words),
)
_NONE = (False,) * len(READERS)


# Per reader (READERS' order), whether its pattern can occur: byte strings of which any
# group occurring whole opens the gate (C-speed searches), a prefix of the text, or a character
# of the text (known for text that is not ASCII). Some are all but necessary, chosen so code,
# JSON and logs rarely open them: base32 is read when padded (three to six "=": most lengths of
# text need them; a base32 run has no other mark), quoted-printable where it has a soft line
# break or one of the escapes text needs most (space, "=", UTF-8 leads), Morse where a dot is
# next to a dash (six letters of only e i s h t m o are rare), NATO spelling where India, Oscar
# or Tango is one of the words, character codes where one is of a lower-case letter (octal
# \1.., binary 0110...., decimal 100 to 119 after a comma or, spaced, with both " 10" and
# " 11"), reversed text where a reversed "the", "and", "all" or "you" is, upside-down text where
# one of its letters is (in text that is not ASCII), quoted pieces where a quote meets a comma
# or a plus sign and a word tells the reader to join them (JSON and code have the first on
# every line; the pieces are only a message where the text asks for the join), words cut at a
# line's end where a hyphen ends a line (or a Unicode hyphen or dash is in the text).
_NO_CHARS: frozenset[str] = frozenset()
# Two quotes about a comma or a plus sign (prose has a quote before a comma, rarely before
# another quote), and words of an order to join; each starts with a pair of bytes that is rare
# in English, as every needle whose first two bytes occur costs the walk a look.
_PIECE_SEPARATORS = (b'","', b'", "', b"','", b"', '", b"`,", b'+ "', b"+ '", b'+"', b"+'")
_JOIN_WORDS = (b"ncatenat", b"oin th", b"mbine ", b"mbine:", b"ssemble th", b"ppend th",
               b"spaces", b"ogether")
Gate = tuple[tuple[tuple[bytes, ...], ...], bytes | None, frozenset[str]]
_GATES: tuple[Gate, ...] = (
    (((b"===",),), None, _NO_CHARS),
    (((b"<~",),), None, _NO_CHARS),
    (((b"\nbegin ",),), b"begin ", _NO_CHARS),
    (tuple((n,) for n in (b"=\n", b"=\r\n", b"=20", b"=3D", b"=C3", b"=E2")), None, _NO_CHARS),
    (((b"=?",),), None, _NO_CHARS),
    (((b".-",), (b"-.",)), None, _MORSE_CHARS),
    ((), None, _BRAILLE_CHARS),
    (tuple((n,) for n in (b"ndia", b"NDIA", b"scar", b"SCAR", b"tango", b"Tango", b"TANGO")),
     None, _NO_CHARS),
    (tuple((n,) for n in (b"\\1", b"\\u00", b"U+00", b"u+00", b"0110")), None, _NO_CHARS),
    (((b",10",), (b",11",), (b", 10",), (b", 11",), (b" 10", b" 11")), None, _NO_CHARS),
    (tuple((n,) for n in (b" eht ", b" dna ", b" lla ", b" uoy ")), None, _NO_CHARS),
    ((), None, _MARK_SET),
    ((), None, _UPSIDE_MARKS),
    (tuple((sep, word) for sep in _PIECE_SEPARATORS for word in _JOIN_WORDS), None, _NO_CHARS),
    (((b"-\n",), (b"-\r\n",)), None, _CUT_CHARS),
)
assert len(_GATES) == len(READERS)
_READER_NEEDLES = tuple(
    dict.fromkeys(n for groups, _, _ in _GATES for group in groups for n in group)
)
# The walk answers the other passes' marks of several characters too (marks.py), after the
# readers' needles: bit len(_READER_NEEDLES) + i is marks.NEEDLES[i].
_NEEDLES = (*_READER_NEEDLES, *marks.NEEDLES)
assert len(set(_NEEDLES)) == len(_NEEDLES) <= 64
_READER_BITS = (1 << len(_READER_NEEDLES)) - 1
_MARK_BITS = tuple(
    (bit, sum(1 << _NEEDLES.index(m.encode("ascii")) for m in group)) for bit, group in marks.MARKS
)
_STARTS = tuple(start for _, start, _ in _GATES if start is not None)
# Per gate, the bit masks of its groups in what native.needles returns.
_MASKS = tuple(
    tuple(sum(1 << _NEEDLES.index(n) for n in group) for group in groups)
    for groups, _, _ in _GATES
)


# The gates of text whose characters are ASCII and that does not begin with one of _STARTS
# (_gates), by the readers' needles found in it.
_GATES_OF: dict[int, tuple[bool, ...]] = {}
_GATES_KEPT = 4096
# Per tuple of gates, the indices of the open ones.
_OPEN_OF: dict[tuple[bool, ...], tuple[int, ...]] = {}


def walk(data: bytes) -> int | None:
    """Which of _NEEDLES occur in `data` (a text's UTF-8 bytes), in one C walk; None where the
    extension is not built (then each pass searches on its own)."""
    module = native.load()
    return None if module is None else int(module.needles(data, _NEEDLES))


def marks_of(bits: int) -> int:
    """The marks (marks.py) of the text whose walk gave `bits`."""
    out = 0
    for bit, mask in _MARK_BITS:
        if bits & mask:
            out |= bit
    return out


def _gates(data: bytes, chars: set[str] | None, bits: int | None = None) -> tuple[bool, ...]:
    """Whether each reader's gate (_GATES) opens on `data`, a text's UTF-8 bytes (`chars`: the
    set of its characters when it is not ASCII). In C, one walk over the bytes finds which
    needles occur (one search per needle costs 3 ms on 64 KB); else one search each. `bits`:
    that walk's result, when the caller made it (walk)."""
    if bits is None:
        bits = walk(data)
    if bits is None:
        return tuple(
            any(all(n in data for n in group) for group in groups)
            or (start is not None and data.startswith(start))
            or (chars is not None and not chars.isdisjoint(wanted))
            for groups, start, wanted in _GATES
        )
    if chars is None and not data.startswith(_STARTS):
        # Then the gates are a function of the readers' needles found alone: kept per set.
        bits &= _READER_BITS
        if not bits:
            return _NONE  # most text: no gate opens
        gates = _GATES_OF.get(bits)
        if gates is None:
            gates = tuple(any(bits & mask == mask for mask in masks) for masks in _MASKS)
            if len(_GATES_OF) < _GATES_KEPT:
                _GATES_OF[bits] = gates
        return gates
    return tuple(
        any(bits & mask == mask for mask in masks)
        or (start is not None and data.startswith(start))
        or (chars is not None and not chars.isdisjoint(wanted))
        for (_, start, wanted), masks in zip(_GATES, _MASKS, strict=True)
    )


def present(data: bytes, chars: set[str] | None, bits: int | None = None) -> tuple[bool, ...]:
    """Whether each reader's pattern occurs in `data` (a text's UTF-8 bytes; `chars` the set
    of its characters when it is not ASCII), in READERS' order. Only where a reader's gate
    opens is its RE2 pattern searched: adding the patterns to normalize's prefilter pass
    instead costs several times the gates (measured), as its automaton grows with every
    pattern on text it has not seen. `bits`: walk(data), when the caller made it."""
    patterns = _patterns()  # compiled on the first scan, like the learned layer's model
    gates = _gates(data, chars, bits)
    opened = _OPEN_OF.get(gates)
    if opened is None:
        opened = tuple(index for index, gate in enumerate(gates) if gate)
        if len(_OPEN_OF) < _GATES_KEPT:
            _OPEN_OF[gates] = opened
    if not opened:
        return _NONE
    out = list(_NONE)
    for index in opened:  # only where a gate opened is its reader's pattern searched
        out[index] = found(patterns[index], data)
    return tuple(out)


@functools.cache
def _patterns() -> tuple[Any, ...]:
    """Every reader's pattern, compiled together (a few ms, once)."""
    return tuple(_compiled(pattern) for _name, pattern, _read in READERS)


def read(text: str, data: bytes, present: tuple[bool, ...]) -> list[tuple[str, str]]:
    """(reader, text read) for each reader whose pattern occurs (`present`, in READERS'
    order) in `text` (`data` its UTF-8 bytes)."""
    out: list[tuple[str, str]] = []
    for (name, _pattern, reader), here in zip(READERS, present, strict=True):
        if here:
            out += [(name, value) for value in reader(text, data) if value.strip()]
    return out
