"""Every scalar in a call's arguments, with its path (`to[0]`, `headers.Bcc`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def scalar_leaves(value: Any, path: str = "") -> Iterator[tuple[str, str | int | float]]:
    """(path, value) of every string and number; booleans and nulls carry nothing."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (str, int, float)):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from scalar_leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from scalar_leaves(item, f"{path}[{i}]")
