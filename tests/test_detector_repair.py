"""The C copy of lexicon.repair (_native.Repairer), which ascii_tokens calls without running
Python code: the same word for every token, against the Python function, and the Python
function wherever the tables do not fit it."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.payloads import KINDS, payload
from proxy.detector import native
from proxy.detector.detector import model_views
from proxy.detector.lexicon import CLASS_OF, MAX_REPAIRED, repair, repair_tables
from proxy.detector.model import _REPAIR_FROM, _c_repair
from proxy.detector.normalize import prepare

built = pytest.mark.skipif(native.load() is None, reason="the C extension is not built here")
_ALPHABET = string.ascii_lowercase + "0Z_"


def _one_edit(word: str) -> set[str]:
    """Every word one letter from `word`: removed, added, changed, two neighbours swapped."""
    out = {word}
    for i in range(len(word) + 1):
        out.add(word[:i] + word[i + 1 :])
        for c in _ALPHABET:
            out.add(word[:i] + c + word[i:])
            out.add(word[:i] + c + word[i + 1 :])
    out.update(word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1))
    return out


def _repairer():  # type: ignore[no-untyped-def]
    module = native.load()
    assert module is not None
    return module.Repairer(*repair_tables())


@built
def test_the_tokens_repair_in_c():
    module = native.load()
    assert type(_c_repair(module)) is module.Repairer  # type: ignore[union-attr]


@built
def test_every_word_one_letter_from_a_class_word_is_repaired_as_in_python():
    mine = _repairer()
    words = set().union(*map(_one_edit, CLASS_OF))
    words |= set().union(*map(_one_edit, [w + "s" for w in CLASS_OF]))  # two letters away
    # ascii_tokens gives the Repairer ASCII words only: of the class words of other languages
    # that are not ASCII ("contraseña"), the neighbours that are ("contrasena") are kept.
    words = {word for word in words if word.isascii()}
    rnd = random.Random(13)
    words |= {"".join(rnd.choice(_ALPHABET) for _ in range(rnd.randint(0, 18)))
              for _ in range(20000)}
    assert len(words) > 50000
    changed = 0
    for word in words:
        fixed = mine(word)
        assert fixed == repair(word), word
        assert type(fixed) is str
        changed += fixed != word
    assert changed > 10000  # the test reaches the repairs, not only the words left alone


@built
@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=MAX_REPAIRED + 3))
def test_any_ascii_word_is_repaired_as_in_python(word):
    assert _repairer()(word) == repair(word)


@built
@pytest.mark.parametrize("kind", KINDS)
def test_payload_tokens_are_the_same_with_the_python_repair(kind):
    """ascii_tokens with the Repairer and with the Python function it replaces."""
    module = native.load()
    assert module is not None
    for size in (4096, 65536):
        views, _base = model_views(prepare(payload(kind, size, 7), markup=True))
        for view in views:
            if view.isascii():
                assert module.ascii_tokens(view, _repairer(), _REPAIR_FROM, MAX_REPAIRED) == (
                    module.ascii_tokens(view, repair, _REPAIR_FROM, MAX_REPAIRED))


@built
def test_tables_the_c_copy_cannot_take_keep_the_python_repair():
    module = native.load()
    assert module is not None
    class_of, repairs, shortest, longest = repair_tables()
    with pytest.raises(TypeError):
        module.Repairer({1: "x"}, repairs, shortest, longest)
    with pytest.raises(TypeError):
        module.Repairer(class_of, {"abc": 3}, shortest, longest)
    with pytest.raises(ValueError):
        module.Repairer(class_of, repairs, shortest, 41)  # longer than a token's piece
    with pytest.raises(ValueError):
        _repairer()("é")  # ascii_tokens gives it ASCII words only
    # Keys that are not ASCII can never equal an ASCII word: left out, the rest as before.
    odd = module.Repairer({**class_of, "ignoré": "IGNORE"}, {**repairs, "ignoé": "ignore"},
                          shortest, longest)
    for word in ("ignroe", "ignoree", "instuctions", "ignor", "plain"):
        assert odd(word) == repair(word)
