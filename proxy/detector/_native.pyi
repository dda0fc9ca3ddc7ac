# The C extension proxy/detector/_native.c (see proxy/detector/native.py).

from collections.abc import Callable

Best = tuple[float, int, int]

SOURCE_SHA256: str

class Model:
    def __init__(
        self,
        unigrams: dict[str, float],
        bigrams: dict[tuple[str, ...], float],
        class_of: dict[str, str],
        classes: dict[str, float],
        class_pairs: dict[tuple[str, ...], float],
        window: int,
    ) -> None: ...
    def score(self, toks: list[str], keep: bool, /) -> tuple[object, ...]: ...

def windows(contrib: list[float], span: int, /) -> Best | None: ...
def ascii_tokens(
    text: str, repair: Callable[[str], str], repair_from: int, repair_to: int, /
) -> list[str] | None: ...
def flat(text: str, /) -> str: ...
