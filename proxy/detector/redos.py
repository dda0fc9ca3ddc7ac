"""Static checks that keep rule patterns linear-time, bounded in width and matchable.

The proxy runs every pattern over every tool result, so one pattern that backtracks
catastrophically is a denial of service. We parse patterns with the standard library's regex
parser and reject the shapes that can blow up:

- unbounded quantifiers (`*`, `+`, `{n,}`): a match must fit the scan window's overlap, so every
  pattern has a bounded width (write `.{0,40}` instead of `.*`);
- a variable quantifier or an alternation inside a repeated group (`(a+)+`, `(a?){20}`,
  `(a|ab){0,9}`): nested ambiguity, the classic exponential case. An alternation whose
  branches begin with characters no other branch can begin with (`(?:[^.]|\\.[^\\s.]){0,40}`:
  anything but a dot, or a dot inside a token) is allowed: at each step one branch at most can
  go on, so there is nothing to backtrack into (not under `(?i)`, where `a` and `A` overlap);
- backreferences (no linear-time guarantee at all);
- chains of gaps whose product of choices per start position is too large (polynomial blow-up
  such as `a.{0,90}b.{0,90}c.{0,90}d`);
- upper-case letters: patterns run on case-folded text, so they would never match.
"""

from __future__ import annotations

import importlib
import sys
from itertools import combinations
from typing import Any

# The standard library's own regex parser (re._parser since 3.11, sre_parse before).
sre_parse: Any = importlib.import_module(
    "re._parser" if sys.version_info >= (3, 11) else "sre_parse"
)
sre_c: Any = importlib.import_module(
    "re._constants" if sys.version_info >= (3, 11) else "sre_constants"
)

CHECKER_VERSION = 4  # bump when a check changes, so remembered verdicts are re-checked
MAX_MATCH_WIDTH = 1000  # also the overlap between scan windows
MAX_COST = 50_000  # estimated match attempts per start position

_REPEATS = {sre_c.MAX_REPEAT, sre_c.MIN_REPEAT}
_POSSESSIVE = getattr(sre_c, "POSSESSIVE_REPEAT", None)
if _POSSESSIVE is not None:
    _REPEATS.add(_POSSESSIVE)
_ATOMIC = getattr(sre_c, "ATOMIC_GROUP", None)


def pattern_problems(pattern: str) -> list[str]:
    """Everything unsafe or unmatchable about `pattern`; an empty list means it is fine."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception as exc:  # re.error, and RecursionError on absurd nesting
        return [f"pattern does not compile: {exc}"]
    problems: list[str] = []
    folds_case = bool(parsed.state.flags & sre_c.SRE_FLAG_IGNORECASE)
    _walk(list(parsed), problems, inside_repeat=False, folds_case=folds_case)
    low, high = parsed.getwidth()
    if high > MAX_MATCH_WIDTH and not any("unbounded" in p for p in problems):
        problems.append(
            f"a match can be {high} characters long; keep it under {MAX_MATCH_WIDTH} "
            "(smaller {m,n} bounds)"
        )
    if low == 0:
        problems.append("pattern can match the empty string; it would fire on every text")
    cost = _cost(list(parsed), tail=True)
    if cost > MAX_COST:
        problems.append(
            f"too many ways to match from one position (about {cost}); shorten the {{0,N}} "
            "gaps or use fewer of them"
        )
    if "(?i" not in pattern:
        upper = sorted(_upper_literals(list(parsed)))
        if upper:
            problems.append(
                "patterns match case-folded text, so upper-case letters never match: "
                + ", ".join(repr(ch) for ch in upper)
            )
    # de-duplicate, keep order
    return list(dict.fromkeys(problems))


def _children(op: Any, av: Any) -> list[list[Any]]:
    if op in _REPEATS:
        return [list(av[2])]
    if op is sre_c.SUBPATTERN:
        return [list(av[3])]
    if op is sre_c.BRANCH:
        return [list(branch) for branch in av[1]]
    if op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
        return [list(av[1])]
    if _ATOMIC is not None and op is _ATOMIC:
        return [list(av)]
    if op is sre_c.GROUPREF_EXISTS:
        return [list(part) for part in av[1:] if part is not None]
    return []


def _walk(
    items: list[Any], problems: list[str], *, inside_repeat: bool, folds_case: bool
) -> None:
    """`folds_case`: under (?i), where branches that begin with "a" and "A" overlap."""
    for op, av in items:
        if op in (sre_c.GROUPREF, sre_c.GROUPREF_EXISTS):
            problems.append("backreferences are not allowed (no linear-time guarantee)")
        if op in _REPEATS:
            low, high = av[0], av[1]
            if high == sre_c.MAXREPEAT:
                problems.append("unbounded quantifier (*, + or {n,}); use a bounded {0,N}")
            if inside_repeat and low != high:
                problems.append(
                    "nested quantifier: a variable repeat inside a repeated group can "
                    "backtrack exponentially"
                )
            repeated = high > 1
            _walk(list(av[2]), problems, inside_repeat=inside_repeat or repeated,
                  folds_case=folds_case)
            continue
        if op is sre_c.SUBPATTERN and av[1] & sre_c.SRE_FLAG_IGNORECASE:
            folds_case_here = True
        else:
            folds_case_here = folds_case
        if op is sre_c.BRANCH and inside_repeat and (folds_case or not _distinct_starts(av[1])):
            problems.append(
                "alternation inside a repeated group can backtrack exponentially; repeat a "
                "character class instead"
            )
        for child in _children(op, av):
            _walk(child, problems, inside_repeat=inside_repeat, folds_case=folds_case_here)


# A set of first characters: (negated, chars) is "any character but these" when negated.
FirstSet = tuple[bool, frozenset[str]]


def _first_set(items: list[Any]) -> FirstSet | None:
    """The characters a branch can begin with, where the branch starts with a literal or a
    class of literals and ranges; None where it cannot be told simply (then it counts as
    overlapping everything)."""
    if not items:
        return None
    op, av = items[0]
    if op is sre_c.LITERAL:
        return False, frozenset(chr(av))
    if op is sre_c.NOT_LITERAL:
        return True, frozenset(chr(av))
    if op is sre_c.SUBPATTERN:
        return _first_set(list(av[3]))
    if op is not sre_c.IN:
        return None
    negated, chars = False, set()
    for kind, value in av:
        if kind is sre_c.NEGATE:
            negated = True
        elif kind is sre_c.LITERAL:
            chars.add(chr(value))
        elif kind is sre_c.RANGE and value[1] - value[0] < 256:
            chars.update(chr(c) for c in range(value[0], value[1] + 1))
        else:
            return None  # categories (\s, \w) and wide ranges: not told simply
    return negated, frozenset(chars)


def _disjoint(a: FirstSet, b: FirstSet) -> bool:
    (neg_a, set_a), (neg_b, set_b) = a, b
    if neg_a and neg_b:
        return False  # two "anything but" sets always share characters
    if neg_a:
        return set_b <= set_a
    if neg_b:
        return set_a <= set_b
    return not set_a & set_b


def _distinct_starts(branches: list[Any]) -> bool:
    firsts = [_first_set(list(branch)) for branch in branches]
    known = [first for first in firsts if first is not None]
    return len(known) == len(firsts) and all(_disjoint(a, b) for a, b in combinations(known, 2))


def _cost(items: list[Any], *, tail: bool = False) -> int:
    r"""Rough upper bound of backtracking choices per start position (product along a sequence).

    A repeat of one character class followed by a literal the class cannot match (`[^.]{0,40}\.`,
    `\S{1,99} `) stops at a fixed place, so it adds no choices; so does a greedy repeat that ends
    the whole pattern (`tail`), which succeeds at its first try.
    """
    total = 1
    for index, (op, av) in enumerate(items):
        if op in _REPEATS:
            low, high = av[0], min(av[1], 10_000)
            following = items[index + 1] if index + 1 < len(items) else None
            ends_pattern = tail and following is None and op is sre_c.MAX_REPEAT
            if ends_pattern or _stops_deterministically(list(av[2]), following):
                pass
            elif high == 1:
                # `(?:X)?Y` is `Y|XY`: tried one after the other at the same place, so counted
                # as alternatives are, by the costlier one (X's choices, or the one of skipping X).
                total *= max(1, _cost(list(av[2])))
            else:
                total *= (high - low + 1) * _cost(list(av[2]))
        elif op is sre_c.BRANCH:
            # Alternatives are tried one after another at the same place: their choices do not
            # multiply the way a gap's do, so count the costliest one.
            total *= max(_cost(list(branch)) for branch in av[1])
        elif op is sre_c.SUBPATTERN:
            total *= _cost(list(av[3]))
        total = min(total, 10**12)
    return total


def _stops_deterministically(body: list[Any], following: Any) -> bool:
    if len(body) != 1 or following is None or following[0] is not sre_c.LITERAL:
        return False
    char = chr(following[1])
    op, av = body[0]
    if op is sre_c.LITERAL:
        return av != following[1]
    if op is sre_c.NOT_LITERAL:
        return av == following[1]
    if op is sre_c.IN:
        return not _in_matches(av, char)
    return False


def _in_matches(members: list[Any], char: str) -> bool:
    """Whether a parsed character class matches `char` (conservatively True when unsure)."""
    negate = False
    hit = False
    for op, av in members:
        if op is sre_c.NEGATE:
            negate = True
        elif op is sre_c.LITERAL:
            hit = hit or chr(av) == char
        elif op is sre_c.RANGE:
            hit = hit or av[0] <= ord(char) <= av[1]
        elif op is sre_c.CATEGORY:
            probe = {
                sre_c.CATEGORY_SPACE: char.isspace(),
                sre_c.CATEGORY_NOT_SPACE: not char.isspace(),
                sre_c.CATEGORY_DIGIT: char.isdigit(),
                sre_c.CATEGORY_NOT_DIGIT: not char.isdigit(),
                sre_c.CATEGORY_WORD: char.isalnum() or char == "_",
                sre_c.CATEGORY_NOT_WORD: not (char.isalnum() or char == "_"),
            }.get(av)
            if probe is None:
                return True
            hit = hit or probe
        else:
            return True
    return hit != negate


def _upper_literals(items: list[Any]) -> set[str]:
    found: set[str] = set()
    for op, av in items:
        if op is sre_c.LITERAL and chr(av) != chr(av).casefold():
            found.add(chr(av))
        elif op is sre_c.IN:
            for sub_op, sub_av in av:
                if sub_op is sre_c.LITERAL and chr(sub_av) != chr(sub_av).casefold():
                    found.add(chr(sub_av))
                elif sub_op is sre_c.RANGE and any(
                    chr(c) != chr(c).casefold() for c in range(sub_av[0], min(sub_av[1], 0x24F) + 1)
                ):
                    found.add(f"{chr(sub_av[0])}-{chr(sub_av[1])}")
        for child in _children(op, av):
            found |= _upper_literals(child)
    return found
