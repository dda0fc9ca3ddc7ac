"""The Clients tab wraps and unwraps through proxy.clients: toggles, preview, Protect all, Undo."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError
from keyrings.alt.file import PlaintextKeyring
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.clients_tab import ClientsTab
from proxy.clients import discovery
from tests.clients_home import EXE, FIXTURES, LAYOUT

DESKTOP = LAYOUT["claude_desktop_config.json"]


@pytest.fixture
def test_keyring(tmp_path: Path) -> Iterator[None]:
    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring.cfg")
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield
    keyring.set_keyring(previous)


class MemoryKeyring(KeyringBackend):
    """A keyring backend that is not a plaintext file (Secret Service stands in for it on a
    desktop); keyring's own backend interface, holding the secrets in memory."""

    priority = 1.0  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.items.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@pytest.fixture
def private_keyring() -> Iterator[MemoryKeyring]:
    backend = MemoryKeyring()
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def servers(path: Path) -> dict[str, bool]:
    config = next(c for c in discovery.discover() if c.path == path)
    return {e.name: e.wrapped for e in discovery.load(config).entries if e.command}


def toggle(tab: ClientsTab, client: str, server: str, on: bool) -> None:
    item = tab.server_item(client, server)
    assert item is not None
    item.setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)


def write(qtbot: QtBot, tab: ClientsTab) -> None:
    assert tab.preview is not None and tab.preview.isVisible()
    qtbot.mouseClick(tab.preview.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.preview is not None and not tab.preview.isVisible())


def test_a_toggle_previews_then_wraps_and_unwrapping_restores_the_file(
    qtbot: QtBot, home: Path
) -> None:
    original = (home / DESKTOP).read_bytes()
    tab = ClientsTab()
    qtbot.addWidget(tab)
    item = tab.server_item("claude-desktop", "github")
    assert item is not None and item.text(1) == "Not protected"

    toggle(tab, "claude-desktop", "github", True)
    assert tab.preview is not None
    assert f'"command":"{EXE}"' in tab.preview.diff.toPlainText()
    assert (home / DESKTOP).read_bytes() == original  # nothing written before Write
    write(qtbot, tab)
    assert servers(home / DESKTOP) == {
        "filesystem": False, "github": True, "sqlite": False, "time": False}
    row = tab.server_item("claude-desktop", "github")
    assert row is not None and row.text(1) == "Protected"
    assert "quit Claude Desktop completely" in tab.status.text()

    toggle(tab, "claude-desktop", "github", False)
    write(qtbot, tab)
    assert (home / DESKTOP).read_bytes() == original


def test_ticking_a_client_protects_all_its_servers(qtbot: QtBot, home: Path) -> None:
    goose = home / LAYOUT["goose_config.yaml"]
    original = goose.read_bytes()
    tab = ClientsTab()
    qtbot.addWidget(tab)
    toggle(tab, "claude-desktop", "github", True)
    write(qtbot, tab)
    client = tab.client_item("claude-desktop")
    assert client is not None and client.checkState(0) == Qt.CheckState.PartiallyChecked

    goose_row = tab.client_item("goose")
    assert goose_row is not None and goose_row.text(1) == "0 of 3 protected"
    goose_row.setCheckState(0, Qt.CheckState.Checked)
    write(qtbot, tab)
    assert servers(goose) == {"github": True, "fetch": True, "plain": True}
    goose_row = tab.client_item("goose")
    assert goose_row is not None and goose_row.text(1) == "3 of 3 protected"

    goose_row.setCheckState(0, Qt.CheckState.Unchecked)
    write(qtbot, tab)
    assert goose.read_bytes() == original


def test_cancelling_the_preview_writes_nothing_and_resets_the_toggle(
    qtbot: QtBot, home: Path
) -> None:
    original = (home / LAYOUT["codex_config.toml"]).read_bytes()
    tab = ClientsTab()
    qtbot.addWidget(tab)
    toggle(tab, "codex", "docs", True)
    assert tab.preview is not None
    tab.preview.reject()
    assert (home / LAYOUT["codex_config.toml"]).read_bytes() == original
    row = tab.server_item("codex", "docs")
    assert row is not None and row.checkState(0) == Qt.CheckState.Unchecked


def test_protect_all_then_undo_puts_every_file_back(qtbot: QtBot, home: Path) -> None:
    tab = ClientsTab()
    qtbot.addWidget(tab)
    assert not tab.undo_button.isEnabled()
    qtbot.mouseClick(tab.protect_all_button, Qt.MouseButton.LeftButton)
    write(qtbot, tab)
    assert all(all(servers(home / where).values()) for where in LAYOUT.values())
    assert tab.undo_button.isEnabled()

    qtbot.mouseClick(tab.undo_button, Qt.MouseButton.LeftButton)
    for fixture, where in LAYOUT.items():
        assert (home / where).read_bytes() == (FIXTURES / fixture).read_bytes(), where
    assert not tab.undo_button.isEnabled()


def test_secrets_move_to_the_keyring_and_undo_brings_them_back(
    qtbot: QtBot, home: Path, private_keyring: MemoryKeyring
) -> None:
    original = (home / DESKTOP).read_bytes()
    tab = ClientsTab()
    qtbot.addWidget(tab)
    warned: list[str] = []
    tab.confirm_plaintext = lambda backend: warned.append(backend) or True  # type: ignore[method-assign]
    tab.secrets_box.setChecked(True)
    assert not warned  # a keyring that is not a plain file is used without a warning
    toggle(tab, "claude-desktop", "github", True)
    assert tab.preview is not None
    assert "ghp_0123456789" not in tab.preview.diff.toPlainText()
    write(qtbot, tab)
    username = "claude-desktop/github/GITHUB_PERSONAL_ACCESS_TOKEN"
    assert keyring.get_password("gatewatch", username) == (
        "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB")
    assert b"ghp_0123456789" not in (home / DESKTOP).read_bytes()

    qtbot.mouseClick(tab.undo_button, Qt.MouseButton.LeftButton)
    assert (home / DESKTOP).read_bytes() == original
    assert keyring.get_password("gatewatch", username) is None


def test_an_added_file_shows_up(qtbot: QtBot, home: Path, tmp_path: Path) -> None:
    custom = tmp_path / "mine.json"
    custom.write_text('{"mcpServers": {"mine": {"command": "mine-server"}}}')
    tab = ClientsTab()
    qtbot.addWidget(tab)
    assert tab.server_item("custom", "mine") is None
    tab.add_file(custom)
    row = tab.server_item("custom", "mine")
    assert row is not None and row.text(1) == "Not protected"


def test_showing_the_tab_picks_up_changes_made_elsewhere(qtbot: QtBot, home: Path) -> None:
    from proxy.clients import changes

    tab = ClientsTab()
    qtbot.addWidget(tab)
    changes.apply(changes.make_plan("wrap", changes.load_all(), changes.select("goose"), exe=EXE))
    row = tab.server_item("goose", "fetch")
    assert row is not None and row.text(1) == "Not protected"
    tab.show()
    qtbot.waitUntil(lambda: (r := tab.server_item("goose", "fetch")) is not None
                    and r.text(1) == "Protected")


def test_a_file_changed_while_the_preview_is_open_is_not_overwritten(
    qtbot: QtBot, home: Path
) -> None:
    vscode = home / LAYOUT["vscode_mcp.json"]
    tab = ClientsTab()
    qtbot.addWidget(tab)
    toggle(tab, "vscode", "fs", True)
    edited = vscode.read_text().replace('"promptString"', '"pickString"')
    vscode.write_text(edited)  # VS Code saved the file meanwhile
    write(qtbot, tab)
    assert vscode.read_text() == edited
    assert "changed since the preview" in tab.status.text()
    row = tab.server_item("vscode", "fs")
    assert row is not None and row.checkState(0) == Qt.CheckState.Unchecked
    assert not tab.undo_button.isEnabled()


def test_a_plaintext_keyring_is_refused_unless_the_person_agrees(
    qtbot: QtBot, home: Path, test_keyring: None
) -> None:
    tab = ClientsTab()
    qtbot.addWidget(tab)
    tab.confirm_plaintext = lambda backend: False  # type: ignore[method-assign]
    tab.secrets_box.setChecked(True)
    assert not tab.secrets_box.isChecked()
    toggle(tab, "claude-desktop", "github", True)
    assert tab.preview is not None
    assert "keyring" not in tab.preview.summary.toPlainText()  # nothing moves
    write(qtbot, tab)
    assert b"ghp_0123456789" in (home / DESKTOP).read_bytes()


def test_the_preview_says_in_words_what_changes_and_enter_does_not_write(
    qtbot: QtBot, home: Path
) -> None:
    original = (home / DESKTOP).read_bytes()
    tab = ClientsTab()
    qtbot.addWidget(tab)
    assert "not protected" in tab.unprotected.text()
    tab.protect_all()
    preview = tab.preview
    assert preview is not None
    summary = preview.summary.toPlainText()
    assert "Claude Desktop: " in summary and "will run through Gatewatch" in summary
    assert "Restart" in summary
    assert preview.diff.isHidden()  # the exact change is behind a toggle
    qtbot.keyClick(preview, Qt.Key.Key_Return)
    assert (home / DESKTOP).read_bytes() == original  # Enter cancels, never writes
    preview.diff_toggle.click()
    assert not preview.diff.isHidden()


def test_undo_survives_a_restart_and_unprotect_says_calls_go_unchecked(
    qtbot: QtBot, home: Path
) -> None:
    original = (home / DESKTOP).read_bytes()
    tab = ClientsTab()
    qtbot.addWidget(tab)
    toggle(tab, "claude-desktop", "github", True)
    write(qtbot, tab)
    assert (home / DESKTOP).read_bytes() != original
    again = ClientsTab()  # the app started again
    qtbot.addWidget(again)
    assert again.undo_button.isEnabled()
    again.undo()
    assert (home / DESKTOP).read_bytes() == original
    assert not again.undo_button.isEnabled()
    toggle(again, "claude-desktop", "github", True)
    write(qtbot, again)
    toggle(again, "claude-desktop", "github", False)
    assert again.preview is not None
    assert "will no longer check" in again.preview.summary.toPlainText()
    assert again.preview.write_button.text() == "Stop protecting"


def test_a_remote_server_says_it_stays_unprotected(qtbot: QtBot, home: Path) -> None:
    tab = ClientsTab()
    qtbot.addWidget(tab)
    remote = [tab.tree.topLevelItem(i).child(j)  # type: ignore[union-attr]
              for i in range(tab.tree.topLevelItemCount())
              for j in range(tab.tree.topLevelItem(i).childCount())  # type: ignore[union-attr]
              if "remote" in tab.tree.topLevelItem(i).child(j).text(1)]  # type: ignore[union-attr]
    assert remote and all(r.text(1) == "Not protected (remote)" for r in remote)
    assert "not checked" in remote[0].toolTip(1)


def test_a_saved_note_goes_away_by_itself(qtbot: QtBot, home: Path) -> None:
    tab = ClientsTab()
    qtbot.addWidget(tab)
    tab.show()
    toggle(tab, "claude-desktop", "github", True)
    write(qtbot, tab)
    assert tab.status.isVisible() and tab.status.text().startswith("Saved")
    tab._status_timer.setInterval(50)  # the real note stays 8 s
    tab._status_timer.start()
    qtbot.waitUntil(lambda: not tab.status.isVisible(), timeout=2000)
