"""Normalisation passes: from the text a tool returned to the views the rules match against.

Each pass undoes one way of hiding words from a pattern (see docs/detector.md). `prepare()` runs
them in order and returns segments: the folded text itself, plus what was hidden in it (HTML
comments, Unicode tag characters, variation-selector payloads, encoded chunks), each normalised
the same way, and signals (hiding techniques seen) that signal rules score.
"""

from __future__ import annotations

import functools
import re
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from proxy.detector import native, readers, unrendered
from proxy.detector.confusables import fold_confusables, fold_styled
from proxy.detector.decode import RUN_PATTERNS, decode_chunks
from proxy.detector.lexicon import CLASS_OF
from proxy.detector.marks import COMMENT
from proxy.detector.model import REPAIRED_MAX_CHARS, repaired
from proxy.detector.re2spans import found as re2_found
from proxy.detector.respell import MARK_PATTERNS, respelled_views

MAX_DEPTH = 2  # decoded text is decoded again once (base64 inside hex, ...), no further

# ANSI escape sequences: CSI, OSC (bounded) and two-byte escapes.
_ANSI = re.compile(
    r"\x1b(?:\[[0-?]{0,32}[ -/]{0,8}[@-~]|\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)|[@-Z\\-_])"
    r"|\x9b[0-?]{0,32}[ -/]{0,8}[@-~]"
)
# Conceal (SGR 8), cursor up / erase line / clear screen: text drawn then hidden on a terminal.
_ANSI_HIDE = re.compile(
    r"\x1b\[(?:[0-9;]{0,16};)?8(?:;[0-9;]{0,16})?m|\x1b\[[0-9]{0,4}[AFK]|\x1b\[2J"
)

_TAG_RUN = re.compile("[\U000e0000-\U000e007f]+")
_BLACK_FLAG = "\U0001f3f4"  # subdivision flags are the one legitimate use of tag characters
_VS_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{4,}")

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
_INVISIBLE_CHARS = frozenset(
    chr(c)
    for lo, hi in (
        (0x00AD, 0x00AD),
        (0x034F, 0x034F),
        (0x061C, 0x061C),
        (0x115F, 0x1160),
        (0x17B4, 0x17B5),
        (0x180B, 0x180F),
        (0x200B, 0x200F),
        (0x202A, 0x202E),
        (0x2060, 0x206F),
        (0x3164, 0x3164),
        (0xFE00, 0xFE0F),
        (0xFEFF, 0xFEFF),
        (0xFFA0, 0xFFA0),
        (0xFFF9, 0xFFFB),
        (0x1D173, 0x1D17A),
        (0xE0000, 0xE0FFF),
    )
    for c in range(lo, hi + 1)
)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
_TAG_CHARS = frozenset(chr(c) for c in range(0xE0000, 0xE0080))
_VS_CHARS = frozenset(
    [chr(c) for c in range(0xFE00, 0xFE10)] + [chr(c) for c in range(0xE0100, 0xE01F0)]
)
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ZERO_WIDTH_IN_WORD = re.compile("[A-Za-z][\u200b-\u200d\u2060\ufeff]+[A-Za-z]")

_HTML_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]{0,15})\b([^<>]{0,1000})>")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z]{2,10});")
# Tags whose removal should glue the words around them (inline) vs. separate them (block).
_INLINE_TAGS = frozenset(
    [
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "cite",
        "code",
        "data",
        "del",
        "dfn",
        "em",
        "font",
        "i",
        "ins",
        "kbd",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "time",
        "tt",
        "u",
        "var",
        "wbr",
    ]
)
_BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "center",
        "col",
        "colgroup",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hr",
        "html",
        "iframe",
        "img",
        "input",
        "label",
        "legend",
        "li",
        "link",
        "main",
        "menu",
        "meta",
        "nav",
        "noscript",
        "object",
        "ol",
        "optgroup",
        "option",
        "p",
        "picture",
        "pre",
        "section",
        "select",
        "source",
        "style",
        "summary",
        "table",
        "tbody",
        "td",
        "template",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "ul",
        "video",
        "audio",
        "svg",
        "button",
        "script",
    ]
)
_MARKDOWN_EMPHASIS = ("*", "`")


@dataclass
class Segment:
    """One view of the text to match: kind is text, lines, comment, hidden, decoded or markup."""

    kind: str
    text: str
    # False for what the readers of smuggled text read (and what is found in it): the rules
    # match it, the learned layer does not read it (its model was trained without them).
    scored: bool = True


@dataclass
class Prepared:
    segments: list[Segment] = field(default_factory=list)
    signals: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    timed_out: bool = False

    def note(self, value: str) -> None:
        if value not in self.notes:
            self.notes.append(value)


# --- the passes, each usable on its own -----------------------------------------------------


def strip_ansi(text: str) -> tuple[str, bool]:
    """Remove terminal escape sequences; say whether any of them hid or overwrote text."""
    if "\x1b" not in text and "\x9b" not in text:
        return text, False
    hiding = _ANSI_HIDE.search(text) is not None
    return _ANSI.sub("", text), hiding


def extract_tag_text(text: str) -> tuple[str, str]:
    """Remove Unicode tag characters (U+E0000 block); return the ASCII text they spelled.

    Tag characters render as nothing but carry a full hidden ASCII message. Emoji subdivision
    flags (black flag + tag letters) are the one legitimate use and are not reported.
    """
    if text.isascii() or not _TAG_RUN.search(text):
        return text, ""
    hidden: list[str] = []

    def take(match: re.Match[str]) -> str:
        run = match.group()
        start = match.start()
        is_flag = start > 0 and text[start - 1] == _BLACK_FLAG and len(run) <= 8
        if not is_flag:
            hidden.append("".join(chr(ord(ch) - 0xE0000) for ch in run if ord(ch) < 0xE007F))
        return ""

    return _TAG_RUN.sub(take, text), " ".join(part for part in hidden if part.strip())


def extract_variation_selector_text(text: str) -> tuple[str, str]:
    """Decode bytes smuggled as runs of variation selectors (one selector per byte).

    VS1..VS16 carry bytes 0..15, VS17..VS256 (U+E0100 block) bytes 16..255. A single selector
    after an emoji is ordinary; four or more in a row are a payload.
    """
    if text.isascii() or not _VS_RUN.search(text):
        return text, ""
    hidden: list[str] = []

    def take(match: re.Match[str]) -> str:
        data = bytes(
            ord(ch) - 0xFE00 if ord(ch) <= 0xFE0F else ord(ch) - 0xE0100 + 16
            for ch in match.group()
        )
        hidden.append(data.decode("utf-8", errors="replace"))
        return ""

    return _VS_RUN.sub(take, text), " ".join(hidden)


def remove_invisible(text: str) -> tuple[str, set[str]]:
    """Drop zero-width, invisible and bidi control characters; report which tricks were used."""
    if text.isascii() or _INVISIBLE.search(text) is None:
        return text, set()
    signals: set[str] = set()
    if _BIDI.search(text):
        signals.add("bidi_control")
    first = _ZERO_WIDTH_IN_WORD.search(text)
    if first is not None and _ZERO_WIDTH_IN_WORD.search(text, first.end()) is not None:
        signals.add("zero_width_in_words")
    # A soft hyphen where the line breaks is drawn as a hyphen: keep it as one there, so a word
    # cut at the line's end with it reads as cut (readers.py, cut_words), not as two words.
    if "\u00ad\n" in text or "\u00ad\r\n" in text:
        text = text.replace("\u00ad\n", "-\n").replace("\u00ad\r\n", "-\r\n")
    # str.replace per distinct character present runs at C speed; a regex sub builds one piece
    # per match and crawls on text that is one third zero-width characters.
    for char in set(text) & _INVISIBLE_CHARS:
        text = text.replace(char, "")
    return text, signals


def nfkc(text: str) -> str:
    """Compatibility forms (fullwidth, math alphanumerics, ligatures, circled) to plain letters."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    if non_ascii * 10 > len(text):
        return unicodedata.normalize("NFKC", text)
    # Mostly ASCII (which NFKC leaves alone): normalise only the non-ASCII runs.
    return _NON_ASCII_RUN.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def strip_markup(text: str, marks: int | None = None) -> tuple[str, list[str], list[str], bool]:
    """Remove HTML comments and tags, decode entities and markdown emphasis.

    Returns the visible text, the bodies of what a renderer does not show (HTML comments,
    Markdown comments and link titles, the text of elements hidden with CSS or the `hidden`
    attribute: proxy/detector/unrendered.py), the tags that carried
    attributes (where image and link URLs live) and whether any tag hid its text with CSS.
    `marks`: which of marks.py's marks occur in `text`, when the caller knows.
    """
    comments: list[str] = []
    if "<!--" in text if marks is None else marks & COMMENT:
        text, comments = _cut_comments(text)
    comments += unrendered.markdown_hidden(text, marks)
    attributed: list[str] = []
    css_hidden = False
    if "<" in text:
        hiding: list[re.Match[str]] = []
        names = unrendered.style_sheet_names(text)

        def replace(match: re.Match[str]) -> str:
            nonlocal css_hidden
            name = match.group(2).lower()
            if name not in _INLINE_TAGS and name not in _BLOCK_TAGS:
                return match.group()  # <|im_start|>, <system>, <instructions>: keep for the rules
            attrs = match.group(3)
            if name in unrendered.UNRENDERED_TAGS and not match.group(1):
                css_hidden = True  # never rendered while scripts run
                hiding.append(match)
            if attrs.strip():
                attributed.append(match.group())
                if unrendered.may_hide(attrs, names) and unrendered.hides(attrs, names):
                    css_hidden = True
                    if not match.group(1) and name not in unrendered.VOID_TAGS:
                        hiding.append(match)
            return "" if name in _INLINE_TAGS else " "

        original = text
        text = _HTML_TAG.sub(replace, text)
        if hiding:  # the hidden text stays in the visible view too: a renderer may show it
            bodies = unrendered.bodies(original, hiding, _HTML_TAG)
            shown = (_visible(body) for body in bodies)
            comments += [part for part in shown if part and not part.isspace()]
    if "&" in text and _ENTITY.search(text):
        # Its entity table costs import time; most results have no entities.
        from proxy.detector.entities import unescape

        text = unescape(text)
    # str.replace, not translate(): translate walks a dict per character on non-ASCII text.
    for mark in _MARKDOWN_EMPHASIS:
        if mark in text:
            text = text.replace(mark, "")
    return text, comments, attributed, css_hidden


def _visible(fragment: str) -> str:
    """A fragment's text as a renderer would lay it out, were it shown."""
    return _HTML_TAG.sub(lambda m: "" if m.group(2).lower() in _INLINE_TAGS else " ", fragment)


def _cut_comments(text: str) -> tuple[str, list[str]]:
    # A find() loop, not a regex: an unclosed "<!--" repeated a million times stays linear.
    out: list[str] = []
    comments: list[str] = []
    pos = 0
    while True:
        start = text.find("<!--", pos)
        if start < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:start])
        end = text.find("-->", start + 4)
        if end < 0:
            comments.append(text[start + 4 :])  # unclosed: the rest is hidden from a renderer
            break
        comments.append(text[start + 4 : end])
        pos = end + 3
    return " ".join(out), comments


def fold_case_and_space(text: str) -> str:
    """Case-fold and collapse every run of whitespace (newlines too) to one space."""
    return collapse_space(text.casefold())


def collapse_space(text: str) -> str:
    """" ".join(text.split()), in one C pass where the extension is built."""
    module = native.load()
    return " ".join(text.split()) if module is None else module.flat(text)


def lines_view(text: str) -> str:
    """Case-folded with line breaks and spacing kept, for rules about line starts (role labels).

    Collapsing spaces line by line costs a Python step per line; the few rules that use this
    view allow for runs of spaces and tabs instead.
    """
    return text.casefold()


# --- the pipeline ---------------------------------------------------------------------------


@dataclass
class Base:
    """What prepare() finds before markup is read, shared by both ways of finishing it (a
    call's arguments are scanned without markup by the argument rules and with it by the
    injection rules): ANSI, Unicode and respelling passes done, encoded chunks decoded."""

    root: _Node
    signals: set[str] = field(default_factory=set)
    timed_out: bool = False
    read: bool = True  # whether the readers of smuggled text run


# Readers whose output is most of the text again (pieces to join: thousands of characters of
# ordinary prose; the text with its cut words joined): no line view of it.
WHOLE_TEXT_READERS = frozenset({"pieces", "cut_words"})


@dataclass
class _Node:
    kind: str
    text: str
    events: list[str | _Node]  # notes and nested texts, in the order the passes met them
    # The folded line and flat views of `text`, once one finish made them: the other finish
    # of the same text (a call's argument, with and without markup) reuses them when reading
    # markup left the text as it was.
    folded: tuple[str, str] | None = None
    scored: bool = True  # see Segment.scored
    marks: int | None = None  # marks.py's marks in `text`, where the readers' walk ran on it
    # Whether rules that read line edges see this text too: the text, what was decoded or
    # hidden in it; not the respellings of the whole text (leet, spelled-out words) nor what
    # the readers that return most of a text read (WHOLE_TEXT_READERS), which would cost a
    # scan more each for the few rules they could add to.
    lines: bool = True


def base(text: str, *, deadline: float | None = None, readers: bool = True) -> Base:
    """The markup-independent passes over `text` (see prepare)."""
    out = Base(_Node("text", "", []), read=readers)
    out.root = _base(text, deadline, 0, "text", out)
    return out


def finish(found: Base, *, markup: bool = True, deadline: float | None = None) -> Prepared:
    """The segments of a prepared text, with tags and comments read (`markup`) or kept; past
    `deadline` (a time.perf_counter() value) the rules-only views below are not made."""
    out = Prepared(signals=set(found.signals), timed_out=found.timed_out)
    _finish(found.root, markup, out)
    # Views for the rules only; the learned layer's tokens already read both ways.
    for segment in list(out.segments):
        if segment.kind == "lines":
            continue
        if deadline is not None and time.perf_counter() > deadline:
            out.timed_out = True  # views made from the text: what the budget cuts
            break
        text = segment.text
        # Not for the argument rules (no markup read): a shell or a path reads `_` as itself;
        # not for what was decoded or respelled, whose views already cost a scan each.
        spaced = unjoined(text) if markup and segment.kind in _UNJOINED_KINDS else None
        if spaced is not None:
            out.segments.append(Segment("decoded", spaced, scored=False))
            out.note("decoded:underscores")
            text = spaced
        # Misspelt class words read back: repaired() cuts words at underscores too, so the
        # spaced view, where there is one, carries every fix the text's own view would.
        fixed = repaired(text)
        if fixed is not None:
            out.segments.append(Segment("decoded", fixed, scored=False))
            out.note("decoded:repaired")
    return out


def unjoined(flat: str) -> str | None:
    """`flat` with the underscores of words joined like prose read as spaces; None when it has
    none or is longer than REPAIRED_MAX_CHARS (the bound of the other rules-only view; past it
    the learned layer, whose tokens end at underscores, reads such words).

    RE2's word boundary counts `_` as a letter, so "External_Ignore your previous
    instructions" (a channel name) or "ignore_all_previous_instructions" passed every rule
    that starts or ends at a word; a model reads them as the words they join. A token that
    reads as code is left as it is: a call, an index, an assignment, a key (`(`, `[`, `=`, `:`)
    or a dotted name (`module_utils.basic`, a rule id in Gatewatch's own messages), whose words
    read apart made ordinary source files look like orders ("post_sendgrid_api(module, ...,
    from_address, ...)"). Each token is looked at once, from its underscores, so text without
    them costs one search. The text's own view is kept beside this one, for the rules that
    name identifiers (send_email, im_start).
    """
    at = flat.find("_") if len(flat) <= REPAIRED_MAX_CHARS else -1
    if at < 0:
        return None
    parts: list[str] = []
    done = 0
    while at >= 0:
        start = flat.rfind(" ", 0, at) + 1
        end = flat.find(" ", at)
        end = len(flat) if end < 0 else end
        token = flat[start:end]
        # an attribute's value is judged on its own (alt="caption_ignore ..." is prose); an
        # assignment spaced as prose ("login_data = {") is code too
        value = max(token.rfind('="'), token.rfind("='"))
        judged = token[value + 2 :] if value >= 0 else token
        # a key is code ("system_prompt: |" in a config file is not a header), unless it is
        # made of the override phrase ("ignore_previous_instructions: ...")
        if judged.endswith(":") and _override_key(judged[:-1]):
            judged = judged[:-1]
        if not _CODE_TOKEN.search(judged) and flat[end + 1 : end + 2] != "=":
            parts += (flat[done:start], token.replace("_", " "))
            done = end
        at = flat.find("_", end)
    if not parts:
        return None
    parts.append(flat[done:])
    return collapse_space("".join(parts))


# What makes a token with underscores read as code rather than words: see unjoined().
_CODE_TOKEN = re.compile(r"[(\[=:]|\.\w")
# The text, its comments, its hidden text and the attributes a reader sees (alt, title).
_UNJOINED_KINDS = frozenset({"text", "comment", "hidden", "markup"})
# The verbs of the override phrase, which make a key read as words (see _override_key).
_OVERRIDE_VERBS = frozenset(w for w, c in CLASS_OF.items() if c == "IGNORE")
_WORD_CHARS = re.compile(r"\w+")


def _override_key(key: str) -> bool:
    """Whether `key` (a token's text before its closing colon) is words joined by underscores
    with a verb of the override phrase before its last word ("disregard_all_prior_rules").
    Split, not matched by one pattern: a regex that finds the verb anywhere backtracks over a
    long run of underscores (quadratic: a megabyte of such keys in comments took a minute)."""
    if "_" not in key or _WORD_CHARS.fullmatch(key) is None:
        return False
    return not _OVERRIDE_VERBS.isdisjoint(key.lower().split("_")[:-1])


def prepare(
    text: str, *, markup: bool = True, deadline: float | None = None, readers: bool = True
) -> Prepared:
    """Run every pass over `text` and collect the segments to match.

    `markup=False` keeps tags, comments and backticks as they are (used for tool-call arguments,
    where they are payload, not presentation). `deadline` is a time.perf_counter() value; past it
    the expensive optional passes (decoding) stop and `timed_out` is set.
    """
    return finish(base(text, deadline=deadline, readers=readers), markup=markup,
                  deadline=deadline)


# What a text is asked about in one set search: respelling marks and encoded runs.
_PREFILTERS = (*MARK_PATTERNS, *RUN_PATTERNS)
_RUNS_AT = len(MARK_PATTERNS)


@functools.cache
def _any_mark_or_run() -> Any:
    import re2

    return re2.compile("|".join(f"(?:{p})" for p in _PREFILTERS).encode())


@functools.cache
def _which_mark_or_run() -> Any:
    import re2

    found = re2.Set.SearchSet()
    for pattern in _PREFILTERS:
        found.Add(pattern.encode())
    found.Compile()
    return found


def _present(data: bytes) -> tuple[bool, ...] | None:
    """Which of _PREFILTERS occur in `data`, in one RE2 pass; None when the set finds none.
    It is asked only after the single search found one, and RE2 reports a set search that
    ran out of memory as no match: then each search runs on its own, as before."""
    matched = _which_mark_or_run().Match(data)
    if not matched:
        return None
    return tuple(index in matched for index in range(len(_PREFILTERS)))


def _base(
    text: str, deadline: float | None, depth: int, kind: str, out: Base, scored: bool = True,
    lines: bool = True,
) -> _Node:
    node = _Node(kind, "", [], scored=scored, lines=lines)
    events = node.events
    text, ansi_hiding = strip_ansi(text)
    if ansi_hiding:
        out.signals.add("ansi_hiding")
        events.append("hidden:ansi")
    hidden_parts: list[str] = []
    chars: set[str] | None = None  # the characters of text that is not ASCII
    if not text.isascii():
        # One pass to learn which characters occur, so passes with nothing to do are skipped
        # (each would otherwise cost a regex pass over the whole text).
        chars = set(text)
        if chars & _TAG_CHARS:
            text, tag_text = extract_tag_text(text)
            if tag_text:
                out.signals.add("unicode_tags")
                events.append("hidden:unicode_tags")
                hidden_parts.append(tag_text)
        if chars & _VS_CHARS:
            text, vs_text = extract_variation_selector_text(text)
            if vs_text:
                out.signals.add("variation_selector_payload")
                events.append("hidden:variation_selectors")
                hidden_parts.append(vs_text)
        if chars & _INVISIBLE_CHARS:
            text, invisible_signals = remove_invisible(text)
            out.signals |= invisible_signals
        text = fold_styled(text, chars)
        text = nfkc(text)
        if not text.isascii():
            text = fold_confusables(text)
    node.text = text
    if depth < MAX_DEPTH:
        # One search for all of them: most short texts have no respelling and no run worth
        # decoding, and then cost one RE2 call instead of four.
        data = text.encode("utf-8", "surrogatepass")
        runs = re2_found(_any_mark_or_run(), data)
        # Then which of them, in one more pass, so each search after this one is only run
        # where it finds something.
        present = _present(data) if runs else None
        marks = present[:_RUNS_AT] if present is not None else None
        for name, view in respelled_views(text, marks, deadline) if runs else ():
            events.append(f"decoded:{name}")
            events.append(_base(view, deadline, MAX_DEPTH, "decoded", out, scored, lines=False))
        # One C walk over the bytes: the readers' gates and the marks decode_chunks and
        # strip_markup would otherwise search the text for one by one (None: no extension).
        bits = readers.walk(data)
        node.marks = readers.marks_of(bits) if bits is not None else None
        if deadline is not None and time.perf_counter() > deadline:
            out.timed_out = True
        else:
            found_runs = present[_RUNS_AT:] if present is not None else None
            for encoding, decoded in decode_chunks(
                text, deadline, runs=runs, found=found_runs, marks=node.marks
            ):
                events.append(f"decoded:{encoding}")
                events.append(_base(decoded, deadline, depth + 1, "decoded", out, scored))
            wanted = readers.present(data, chars, bits) if out.read else ()
            for name, value in readers.read(text, data, wanted) if any(wanted) else ():
                events.append(f"decoded:{name}")
                events.append(_base(value, deadline, depth + 1, "decoded", out, False,
                                    lines=name not in WHOLE_TEXT_READERS))
        for part in hidden_parts:
            events.append(_base(part, deadline, depth + 1, "hidden", out, scored))
    return node


def _finish(node: _Node, markup: bool, out: Prepared) -> None:
    for event in node.events:
        if isinstance(event, str):
            out.note(event)
        else:
            _finish(event, markup, out)
    text = node.text
    comments: list[str] = []
    if markup:
        text, comments, attributed, css_hidden = strip_markup(text, node.marks)
        if css_hidden:
            out.signals.add("css_hidden")
        if comments and "<!--" in node.text:
            out.note("hidden:html_comment")
        if attributed:
            out.segments.append(Segment("markup", fold_case_and_space("\n".join(attributed)),
                                        node.scored))
    if text is node.text and node.folded is not None:
        folded, flat = node.folded
    else:
        folded = lines_view(text)  # casefold once for both views
        flat = collapse_space(folded)
        if text is node.text:
            node.folded = (folded, flat)
    out.segments.append(Segment(node.kind, flat, node.scored))
    # What was decoded or hidden in the text, and its comments, get the line view too: an
    # order written to an AI reader in base64 or an HTML comment is the same note.
    if node.lines:
        out.segments.append(Segment("lines", folded))
    for body in comments:
        out.segments.append(Segment("comment", fold_case_and_space(body), node.scored))
    if comments:
        out.segments.append(Segment("lines", lines_view("\n".join(c.strip() for c in comments))))
