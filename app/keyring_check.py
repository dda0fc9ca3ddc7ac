"""Does the keyring backend encrypt? Moving a token into a plaintext keyring file only moves it.
No Qt."""

from __future__ import annotations


def plaintext_backend() -> str | None:
    """The backend's name when it stores secrets unencrypted (e.g. keyrings.alt's
    PlaintextKeyring, a file anyone with the account can read), else None."""
    import keyring

    backend = keyring.get_keyring()
    for b in getattr(backend, "backends", [backend]):
        cls = type(b)
        name = f"{cls.__module__}.{cls.__name__}"
        if "Plaintext" in cls.__name__ or (
            cls.__module__.startswith("keyrings.alt") and "Encrypted" not in cls.__name__
        ):
            return name
    return None
