"""Patterns for the RE2 set pass that match wherever the rules' own patterns do, and cost its
automaton far fewer states.

A counted repetition such as `[^|;&]{0,300}` makes RE2's DFA track how far into the count every
live thread is; in a set of dozens of rules on text full of their first words ("curl" in a
log, "ignore" in prose) the states are products of those counts, rarely seen twice, and each
fresh text pays for building them (1-3 ms per 64 KB where the automaton is otherwise warm at
0.1 ms). The set only has to say which rules may match: each one it names is searched again
with its exact pattern (scanner._scan_segment), so the set may be given a wider pattern:
`X{n,m}` with a large m becomes `X{n,}`, which matches every text the original matches.
"""

from __future__ import annotations

WIDEST = 16  # counts up to this stay exact: they cost the automaton little


def widen(pattern: str, widest: int = WIDEST) -> str:
    """`pattern` (RE2 syntax) with every counted repetition `{n,m}` whose m is at least
    `widest` made unbounded above (`{n,}`): a pattern that matches wherever `pattern` does.
    Braces that are escaped, in a character class or quoted (\\Q...\\E: left whole) are
    literal and stay."""
    if "\\Q" in pattern:
        return pattern
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\":  # an escape, with its argument if it takes one in braces (\x{..}, \p{..})
            out.append(pattern[i : i + 2])
            i += 2
        elif in_class:
            if pattern.startswith("[:", i):  # [:alpha:] inside a class
                end = pattern.find(":]", i + 2)
                end = n if end < 0 else end + 2
                out.append(pattern[i:end])
                i = end
                continue
            in_class = ch != "]"
            out.append(ch)
            i += 1
        elif ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):  # a leading "]" is a member, not the end
                out.append("]")
                i += 1
        elif ch == "{":
            close = pattern.find("}", i)
            low, comma, high = pattern[i + 1 : close].partition(",") if close > 0 else ("", "", "")
            if comma and low.isdigit() and high.isdigit() and int(high) >= widest:
                out.append("{" + low + ",}")
                i = close + 1
            else:
                out.append(ch)
                i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)
