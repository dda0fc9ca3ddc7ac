# The C extension proxy/detector/_native.c (see proxy/detector/native.py).

Best = tuple[float, int, int]

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
