"""Word classes for the learned layer, and the spelling repair that maps near-misses onto them.

The model's weights for word classes are learned like any other feature; the classes let what
it learned from "ignore previous instructions" carry over to "disregard prior directives",
which a bag of words trained on a few templates would not. Misspellings of the class words
("iunstructions", "instuctions", "disreagrd") are repaired first: a typo is a cheap way past
an exact-word feature, and a benchmark's own templates contain them.
"""

from __future__ import annotations

import functools

CLASSES: dict[str, tuple[str, ...]] = {
    "IGNORE": ("ignore", "ignoring", "disregard", "disregarding", "forget", "override",
               "overrule", "bypass", "abandon", "discard", "dismiss", "nevermind", "supersede",
               "neglect", "skip", "omit"),
    "PRIOR": ("previous", "prior", "above", "earlier", "preceding", "initial", "original",
              "former", "foregoing", "before", "existing", "old", "past"),
    "INSTR": ("instruction", "instructions", "directions", "directive", "directives", "rules",
              "guidelines", "prompt", "prompts", "commands", "orders", "guidance", "programming",
              "constraints", "restrictions", "policies", "policy", "task", "tasks", "objective"),
    "AI": ("ai", "assistant", "chatbot", "bot", "llm", "gpt", "chatgpt", "claude", "gemini",
           "copilot", "agent", "model", "bard", "llama"),
    "YOU": ("you", "your", "yourself", "yours", "u"),
    "NOW": ("now", "henceforth", "onwards", "onward", "instead", "anymore", "immediately",
            "forthwith"),
    "ROLE": ("act", "acting", "pretend", "roleplay", "role", "persona", "character", "mode",
             "operating", "simulate", "become", "behave", "impersonate", "embody"),
    "UNBOUND": ("unrestricted", "unfiltered", "uncensored", "limits", "limitless", "unlimited",
                "boundaries", "jailbreak", "jailbroken", "freedom", "unbound", "unchained",
                "amoral", "unethical", "filters", "censorship", "anything"),
    "SAY": ("say", "print", "output", "reply", "respond", "repeat", "write", "answer", "echo",
            "display", "type", "state"),
    "SEND": ("send", "email", "forward", "transfer", "post", "upload", "share", "leak",
             "exfiltrate", "wire", "pay", "invite", "delete", "reserve", "book"),
    "SECRET": ("password", "secret", "secrets", "credentials", "token", "tokens", "apikey",
               "private", "confidential", "ssh"),
    "HIDE": ("secretly", "silently", "covertly", "quietly", "hidden", "conceal", "unnoticed"),
    "URGENT": ("important", "urgent", "attention", "must", "mandatory", "required", "critical",
               "crucial", "essential", "immediately"),
    "AUTHORITY": ("system", "admin", "administrator", "developer", "root", "sudo", "operator",
                  "maintenance", "debug", "owner", "creator", "openai", "anthropic"),
    "USER": ("user", "human", "customer", "requester"),
}

CLASS_OF: dict[str, str] = {word: cls for cls, words in CLASSES.items() for word in words}
_MIN_REPAIR = 7  # shorter words are too close to other words for a one-letter repair


def _deletes(word: str) -> list[str]:
    """One letter removed, in order of position (a list: a set's order would change from one
    process to the next, and so would the repair)."""
    return [word[:i] + word[i + 1:] for i in range(len(word))]


_MAX_REPAIR = max(len(w) for w in CLASS_OF)
MAX_REPAIRED = _MAX_REPAIR + 1  # repair() leaves longer tokens as they are
_REPAIRS: dict[str, str] = {}
for _word in sorted(CLASS_OF, key=lambda w: (len(w), w)):
    if len(_word) >= _MIN_REPAIR:
        for _variant in _deletes(_word):
            _REPAIRS.setdefault(_variant, _word)


@functools.lru_cache(maxsize=65536)
def repair(token: str) -> str:
    """The class word `token` misspells by one letter (added, missing or changed), or itself."""
    if token in CLASS_OF or not _MIN_REPAIR - 1 <= len(token) <= MAX_REPAIRED:
        return token  # too short, or longer than any class word plus one letter
    found = _REPAIRS.get(token)  # a letter missing
    if found is not None:
        return found
    for variant in _deletes(token):
        found = CLASS_OF.get(variant) if len(variant) >= _MIN_REPAIR else None  # one extra
        if found is not None:
            return variant
        found = _REPAIRS.get(variant)  # one changed (or swapped neighbours' half)
        if found is not None:
            return found
    return token


def repair_tables() -> tuple[dict[str, str], dict[str, str], int, int]:
    """What repair() reads, for its C copy (_native.Repairer): the class words, the class
    words with one letter missing, the shortest class word repaired to and the longest token
    repaired."""
    return CLASS_OF, _REPAIRS, _MIN_REPAIR, MAX_REPAIRED
