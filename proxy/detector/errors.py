"""Errors raised while loading rule packs and the detector policy."""

from __future__ import annotations

from proxy.errors import ConfigFileError


class PackError(ConfigFileError):
    """A rule pack, detector policy or detector settings file is malformed.

    Carries the file, the 1-based line (0 when unknown) and what to do about it, so the user can
    fix the file without reading code.
    """
