"""Inputs shaped to make regexes backtrack (near-misses of the rules, long runs of one
pattern): used by the detector's ReDoS test and by bench/detector_bench.py."""

from __future__ import annotations

import string


def _misspellings(words: tuple[str, ...], count: int) -> str:
    """`count` distinct one-letter misspellings of `words`, in a fixed order."""
    out: list[str] = []
    for word in words:
        for at in range(len(word)):
            out += [word[:at] + c + word[at + 1 :] for c in string.ascii_lowercase
                    if c != word[at]]
    return " ".join(out[:count]) + " "


SEEDS = {
    "near_miss_phrases": "ignore all previous instruction ignore the above and ",
    "render_image_gap": "render image with the data of render image ",
    "single_char": "a",
    "base64ish": "QUFB",
    "unclosed_comments": "<!--",
    "url_escapes": "%41%",
    "markdown_image": "![x](https://e.example/a?q=",
    "tags_and_brackets": "<span [system] <|im_",
    "zero_width": "i\u200bg",
    "mixed_script": "іgnоrе ",
    # keys of underscored words in comments, each a view of its own read apart at underscores
    "key_underscores": "<!-- " + "ignore_" * 2000 + "-: -->\n",
    # thousands of distinct misspelt override words in one view, each read back
    "misspellings": _misspellings(("instructions", "previous", "disregard", "guidelines"), 2000),
}


def hostile_inputs(size: int = 1 << 20) -> dict[str, str]:
    """Each seed repeated to `size` characters (1 MB by default)."""
    return {name: (seed * (size // len(seed) + 1))[:size] for name, seed in SEEDS.items()}
