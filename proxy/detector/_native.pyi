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

class Repairer:
    def __init__(
        self, class_of: dict[str, str], repairs: dict[str, str], min_len: int, max_len: int
    ) -> None: ...
    def __call__(self, token: str, /) -> str: ...

def windows(contrib: list[float], span: int, /) -> Best | None: ...
def ascii_tokens(
    text: str, repair: Callable[[str], str] | Repairer, repair_from: int, repair_to: int, /
) -> list[str] | None: ...
def flat(text: str, /) -> str: ...
def needles(data: bytes, needles: tuple[bytes, ...], /) -> int: ...

# The engine's destination finder (proxy/engine/destinations.py) and taint's contact test
# (proxy/engine/taint.py).
Span = tuple[int, int]

class Spans:
    def __init__(self) -> None: ...
    def add(self, start: int, end: int, key: str | None, kind: str, /) -> None: ...
    def taken(self, start: int, end: int, /) -> bool: ...
    def found(self) -> tuple[tuple[str, str, int, int], ...]: ...
    def add_dotted(
        self,
        text: str,
        not_tlds: frozenset[str],
        url_key: Callable[[str, bool], tuple[str, str] | None],
        ip_key: Callable[[str], str | None],
        ip_kind: str,
        host_kind: str,
        /,
    ) -> None: ...
    def add_channels(self, text: str, kind: str, /) -> None: ...

def ipv6_runs(text: str, /) -> list[Span]: ...
def url_spans(text: str, /) -> list[Span]: ...
def ibans(text: str, /) -> list[Span]: ...
def contacts(
    text: str,
    found: tuple[tuple[str, str, int, int], ...],
    value_start: Callable[[str], int | None],
    declared: Callable[[str, int, int], object],
    /,
) -> list[bool]: ...
def phone_spans(text: str, /) -> list[Span]: ...
