"""settings.yaml: defaults, validation with file and line, round trip keeping comments."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from proxy import paths
from proxy.settings import Settings, SettingsError, load_settings, save_settings


def write(text: str) -> Path:
    path = paths.settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_missing_or_empty_file_means_defaults() -> None:
    assert load_settings() == Settings()
    write("# nothing yet\n")
    assert load_settings() == Settings()
    assert Settings().ask_via == "auto" and Settings().ask_timeout == 120


def test_values_are_read() -> None:
    write("ask_via: app\nask_timeout: 30\npopup_timeout: 20\ndetector: off\nretention_days: 7\n")
    s = load_settings()
    assert (s.ask_via, s.ask_timeout, s.popup_timeout, s.detector, s.retention_days) == (
        "app", 30.0, 20.0, False, 7)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("ask_via: auto\nask_via_typo: app\n", 2, "unknown setting 'ask_via_typo'"),
        ("ask_via: email\n", 1, "ask_via must be one of auto, elicitation, app, deny"),
        ("\n\nask_timeout: 5\n", 3, "ask_timeout must be at least 10"),
        ("ask_timeout: soon\n", 1, "ask_timeout must be a float"),
        ("retention_days: 1.5\n", 1, "retention_days must be an int"),
        ("detector: maybe\n", 1, "detector must be true or false"),
        ("- ask_via\n", 1, "must be a mapping"),
        ("ask_via: [auto\n", 2, "not valid YAML"),
    ],
)
def test_bad_settings_name_file_line_and_fix(text: str, line: int, words: str) -> None:
    path = write(text)
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert words in str(err.value)


def test_save_keeps_comments_and_reads_back() -> None:
    path = write("# chosen by me\nask_via: elicitation  # my client can ask\n")
    changed = dataclasses.replace(load_settings(), popup_timeout=45.0, detector=False)
    save_settings(changed)
    text = path.read_text()
    assert "# chosen by me" in text and "# my client can ask" in text
    assert load_settings() == changed
