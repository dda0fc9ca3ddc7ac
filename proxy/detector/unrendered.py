"""What a renderer would not show, and its text.

A web page or a README can carry an instruction for the model where the person never sees it:
in an element hidden with CSS (display:none, a zero font size, no opacity, moved off the
screen, clipped away, the text's colour the background's), with the `hidden` attribute, in a
`<template>` or `<noscript>`, by a class or id its own style sheet hides; in a Markdown
comment (a link reference definition, `[//]: # (...)`, is never rendered) or a link's title
(shown only on hover). The detector scans that text on its own as well as in place, so the
rules written for invisible text (HTML comments) see it whole.

CSS is read strictly enough that a value written another way hides the same (`opacity:.0`,
`font-size:0.5px`, `DISPLAY: NONE !important`); a value we cannot read does not count as
hiding, and the element's text stays in the visible view either way.
"""

from __future__ import annotations

import re

from proxy.detector.marks import MD_LINK, MD_REFERENCE

# Elements whose content a person's browser does not render: a template's never, noscript's
# not while scripts run (as they do for nearly everyone; a fetcher that runs none reads it).
UNRENDERED_TAGS = frozenset(["template", "noscript"])
# Elements without content: a hidden one hides no text.
VOID_TAGS = frozenset(["area", "base", "br", "col", "embed", "hr", "img", "input", "link",
                       "meta", "param", "source", "track", "wbr"])

# An attribute's value: double-quoted, single-quoted or bare (groups 1-3 of what follows).
_VALUE = r"""\s{0,3}=\s{0,3}(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))"""
_STYLE_ATTR = re.compile(r"(?<![\w-])style" + _VALUE, re.IGNORECASE)
_CLASS_OR_ID = re.compile(r"(?<![\w-])(class|id)" + _VALUE, re.IGNORECASE)
# The `hidden` attribute (or a "hidden" class), not aria-hidden, not hidden="false".
_HIDDEN_WORD = re.compile(r"(?<![\w-])hidden\b(?!\s{0,3}=\s{0,3}[\"']?false)", re.IGNORECASE)
_CSS_NAME = re.compile(r"[.#]-?[A-Za-z_][\w-]{0,100}")
_STYLE_OPEN = re.compile(r"<style\b", re.IGNORECASE)
_STYLE_CLOSE = re.compile(r"</style\s{0,3}>", re.IGNORECASE)
_NUMBER = re.compile(r"([+-]?(?:\d{1,10}(?:\.\d{0,10})?|\.\d{1,10}))\s{0,3}([a-z%]{0,4})")
# A colour function's alpha: the fourth of four comma-separated values, or what follows "/".
_COLOUR_FUNCTION = re.compile(r"(?:rgba?|hsla?)\(([^()]{0,80})\)")
_HEX_ALPHA = re.compile(r"#(?:[0-9a-f]{3}0|[0-9a-f]{6}0[0-9a-f])")  # alpha under 1/16
# CommonMark link reference definitions (never rendered; `[//]: # (note)` is the usual Markdown
# comment) and inline links' titles: the title, or the comment, is the hidden text.
# (Matched at the start of each line holding "]:", not searched with `^` and re.MULTILINE,
# which tries every position of the text: 0.25 ms per 64 KB.)
_REFERENCE = re.compile(
    r""" {0,3}\[[^\]\n]{1,200}\]:[ \t]{0,10}(?:<[^>\n]{0,2000}>|\S{1,2000})"""
    r"""[ \t]{1,10}(?:"([^"\n]{1,2000})"|'([^'\n]{1,2000})'|\(([^()\n]{1,2000})\))"""
    r"""[ \t]{0,10}(?:\n|$)"""
)
_LINK_TITLE = re.compile(
    r"""\]\((?:<[^>\n]{0,2000}>|[^\s()]{0,2000})[ \t]{1,10}"""
    r"""(?:"([^"\n]{1,2000})"|'([^'\n]{1,2000})'|\(([^()\n]{1,2000})\))\)"""
)
_CLIPPED_AWAY = re.compile(
    r"inset\(\s{0,3}(?:50|[6-9]\d|100)(?:\.\d{1,5})?%|circle\(\s{0,3}0|rect\(\s{0,3}0"
    r"(?:px)?[\s,]{1,5}0(?:px)?[\s,]{1,5}0(?:px)?[\s,]{1,5}0"
)
_FAR_TRANSLATE = re.compile(r"translate[xy]?\(-\d{4,}")
_SHORT_HEX = re.compile(r"#[0-9a-f]{3}")
_PAINT_WORDS = frozenset(["inherit", "initial", "unset", "currentcolor", "revert", ""])
_NAMED = {"white": "#ffffff", "black": "#000000"}


def declarations(css: str) -> dict[str, str]:
    """`a: b; c: d` as {"a": "b", "c": "d"}: names and values lower-cased, `!important` and
    comments dropped; the last of a repeated property wins, as in CSS."""
    out: dict[str, str] = {}
    if "/*" in css:  # a find() loop, not a regex: linear however many comments are open
        kept, at = [], 0
        while (start := css.find("/*", at)) >= 0:
            kept.append(css[at:start])
            end = css.find("*/", start + 2)
            at = len(css) if end < 0 else end + 2
        css = " ".join([*kept, css[at:]])
    for part in css.split(";"):
        name, colon, value = part.partition(":")
        if colon:
            out[name.strip().lower()] = value.lower().replace("!important", "").strip()
    return out


def _number(value: str) -> tuple[float, str] | None:
    found = _NUMBER.match(value)
    if found is None or value[found.end():].strip():
        return None
    return float(found.group(1)), found.group(2)


def _tiny_font(value: str) -> bool:
    parsed = _number(value)
    if parsed is None:
        return False
    size, unit = parsed
    limit = {"px": 2.0, "pt": 1.5, "em": 0.2, "rem": 0.2, "%": 20.0, "vw": 0.2, "vh": 0.2}
    return size <= 0 or size < limit.get(unit, 0.0)


def _far_off(value: str) -> bool:
    parsed = _number(value)
    return parsed is not None and parsed[0] <= -999 and parsed[1] in ("px", "em", "rem", "pt", "")


def _colour(value: str) -> str:
    value = _NAMED.get(value, value)
    if _SHORT_HEX.fullmatch(value):  # #fff is #ffffff
        value = "#" + "".join(c * 2 for c in value[1:])
    return value


def _faint(colour: str) -> bool:
    """Whether a colour is (nearly) transparent: its alpha under 0.1."""
    if _HEX_ALPHA.fullmatch(colour):
        return True
    found = _COLOUR_FUNCTION.fullmatch(colour)
    if found is None:
        return False
    inner = found.group(1)
    if "/" in inner:
        alpha = inner.rsplit("/", 1)[1]
    elif inner.count(",") == 3:
        alpha = inner.rsplit(",", 1)[1]
    else:
        return False
    parsed = _number(alpha.strip())
    return parsed is not None and parsed[0] < (10.0 if parsed[1] == "%" else 0.1)


def _invisible_colour(colour: str, props: dict[str, str]) -> bool:
    if colour == "transparent" or _faint(colour):
        return True
    background = _colour(props.get("background-color", props.get("background", "")))
    return colour not in _PAINT_WORDS and _colour(colour) == background


def declarations_hide(css: str) -> bool:
    """Whether these CSS declarations leave an element's text unseen."""
    props = declarations(css)
    if not props:
        return False
    if props.get("display") == "none" or props.get("visibility") in ("hidden", "collapse"):
        return True
    opacity = _number(props.get("opacity", "1"))
    if opacity is not None and opacity[0] < (10.0 if opacity[1] == "%" else 0.1):
        return True
    if "font-size" in props and _tiny_font(props["font-size"]):
        return True
    if "color" in props and _invisible_colour(props["color"], props):
        return True
    if any(_far_off(props.get(side, "")) for side in ("left", "top", "right", "text-indent",
                                                       "margin-left", "margin-top")):
        return True
    if _CLIPPED_AWAY.search(props.get("clip-path", "") + " " + props.get("clip", "")):
        return True
    transform = props.get("transform", "").replace(" ", "")
    if "scale(0" in transform or _FAR_TRANSLATE.search(transform):
        return True
    clipped = any(props.get(name) in ("hidden", "clip")
                  for name in ("overflow", "overflow-x", "overflow-y"))
    return clipped and any(
        (parsed := _number(props.get(name, "1"))) is not None and parsed[0] <= 0
        for name in ("height", "max-height", "width", "max-width"))


def style_sheet_names(text: str) -> frozenset[str]:
    """Class and id selectors (".x", "#y") that the text's own `<style>` sheets hide."""
    names: set[str] = set()
    at = 0
    while (opening := _STYLE_OPEN.search(text, at)) is not None:
        closing = _STYLE_CLOSE.search(text, opening.end())
        at = len(text) if closing is None else closing.end()
        sheet = text[opening.end() : at if closing is None else closing.start()]
        for rule in sheet.split("}"):  # "selectors { declarations": split, not a regex: linear
            selectors, brace, body = rule.rpartition("{")
            if brace and declarations_hide(body):
                names.update(_CSS_NAME.findall(selectors[-1000:]))
    return frozenset(names)


def may_hide(attrs: str, names: frozenset[str]) -> bool:
    """False where `hides` would be: no style, no "hidden", no reference to decode and no
    hidden names. Asked of every tag with attributes, so it is substring tests only (a
    case-insensitive regex search costs seven times as much)."""
    if names or "&" in attrs:
        return True
    low = attrs.lower()
    return "style" in low or "hidden" in low


def hides(attrs: str, names: frozenset[str]) -> bool:
    """Whether a tag with these attributes hides its content: its style, the `hidden`
    attribute or class, or a class or id that `names` (from style_sheet_names) hides."""
    if "&" in attrs:  # a browser decodes references in attribute values: display&#58;none
        from proxy.detector.entities import unescape

        attrs = unescape(attrs)
    style = _STYLE_ATTR.search(attrs)
    if style is not None and declarations_hide(next(g for g in style.groups() if g is not None)):
        return True
    rest = attrs if style is None else attrs[: style.start()] + attrs[style.end() :]
    if _HIDDEN_WORD.search(rest):
        return True
    if names:
        for found in _CLASS_OR_ID.finditer(rest):
            sign = "." if found.group(1).lower() == "class" else "#"
            value = found.group(2) or found.group(3) or found.group(4) or ""
            if any(sign + word in names for word in value.split()):
                return True
    return False


def bodies(text: str, openings: list[re.Match[str]], tag: re.Pattern[str]) -> list[str]:
    """The raw contents of the elements that `openings` (matches of `tag` in `text`, in order;
    group 1 the closing slash, group 2 the name, group 3 the attributes) open: up to the
    close tag that balances each, or to the end of the text when none does, as a renderer
    hides the rest of an unclosed element. An element inside one already taken is part of it,
    so the text is walked once however the tags nest."""
    found: list[str] = []
    taken = 0
    for opening in openings:
        if opening.start() < taken:
            continue
        name = opening.group(2).lower()
        depth, end = 1, len(text)
        for other in tag.finditer(text, opening.end()):
            if other.group(2).lower() != name:
                continue
            if other.group(1):
                depth -= 1
            elif not other.group(3).rstrip().endswith("/"):
                depth += 1
            if depth == 0:
                end = other.start()
                break
        found.append(text[opening.end() : end])
        taken = end
    return found


def markdown_hidden(text: str, marks: int | None = None) -> list[str]:
    """The titles of Markdown link reference definitions (Markdown comments) and of inline
    links: text that a Markdown renderer does not show, or shows only on hover. `marks`: which
    of marks.py's marks occur in `text`, when the caller knows."""
    found: list[str] = []
    if "]:" in text if marks is None else marks & MD_REFERENCE:
        at, searched = text.find("]:"), 0
        while at >= 0:  # each line holding "]:" once: its start found back to the last line
            start = text.rfind("\n", searched, at) + 1 or searched
            if (m := _REFERENCE.match(text, start)) is not None:
                found.append(next(g for g in m.groups() if g is not None))
            end = text.find("\n", at)
            if end < 0:
                break
            searched = end + 1
            at = text.find("]:", searched)
    if "](" in text if marks is None else marks & MD_LINK:
        found += [next(g for g in m.groups() if g is not None) for m in _LINK_TITLE.finditer(text)]
    return found
