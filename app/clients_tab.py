"""Clients tab: every MCP client config found, one Protect toggle per server, Protect all,
a preview of each change before it is written, and undo of the last change.

All the work is done by proxy.clients (the same code as `gatewatch wrap`); this is the view.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QShowEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import protection, undo_log
from app.keyring_check import plaintext_backend
from proxy.clients import changes, discovery
from proxy.clients.discovery import ConfigFile, LoadedConfig
from proxy.clients.entries import ServerEntry, Transport
from proxy.clients.executable import ExecutableNotFound
from proxy.clients.health import check_entry
from proxy.clients.nodes import ConfigSyntaxError
from proxy.redact import redact_argv

HEADERS = ("Server", "Status", "Command")
BANNER_MS = 8000  # a "Saved" note goes away by itself
ENTRY_ROLE = Qt.ItemDataRole.UserRole
GREEN, AMBER, RED = QColor("#2f7d5b"), QColor("#9a6700"), QColor("#b4403a")


def _status(config: ConfigFile, entry: ServerEntry) -> tuple[str, str, QColor | None]:
    """(status text, tooltip, colour) for one server."""
    if entry.transport is not Transport.STDIO:
        # Say it: a greyed-out row alone reads as "nothing to do here".
        why = entry.skip_reason or "not a server the client starts on this computer"
        if entry.transport is Transport.REMOTE:
            return ("Not protected (remote)",
                    "Gatewatch protects servers the client starts on this computer; this one "
                    f"is reached over the network, so its calls are not checked. {why}", AMBER)
        return "Not protected (skipped)", why, AMBER
    problem = check_entry(config, entry).problem
    if problem:
        return "Broken", problem, RED
    if entry.wrapped:
        return "Protected", "Runs through Gatewatch", GREEN
    return "Not protected", "The client runs this server directly", AMBER


def _short(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


class DiffHighlighter(QSyntaxHighlighter):
    """Added lines green, removed lines red, hunk headers dim."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.formats: dict[str, QTextCharFormat] = {}
        for prefix, colour in (("+", GREEN), ("-", RED), ("@", QColor("#777777"))):
            fmt = QTextCharFormat()
            fmt.setForeground(colour)
            self.formats[prefix] = fmt

    def highlightBlock(self, text: str) -> None:
        if text[:1] in self.formats and not text.startswith(("+++", "---")):
            self.setFormat(0, len(text), self.formats[text[:1]])


class PreviewDialog(QDialog):
    """What a plan will do, in plain words per app; the unified diff behind a toggle."""

    def __init__(self, plan: changes.Plan, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        unwrap = plan.action == "unwrap"
        self.setWindowTitle("Stop protecting?" if unwrap else "Protect these servers?")
        self.resize(760, 460)
        files = len(plan.changes)
        notes = protection.skipped_summary(plan)
        # Scrolls: protecting everything may touch many apps.
        self.summary = QPlainTextEdit("\n\n".join(protection.plan_summary(plan))
                                      + ("\n\n" + "\n".join(notes) if notes else ""),
                                      readOnly=True)
        self.summary.setObjectName("planSummary")
        backup = QLabel(f"Gatewatch keeps a backup of {'each' if files > 1 else 'the'} file; "
                        "Undo puts it back exactly, even after a restart.")
        backup.setObjectName("note")
        backup.setWordWrap(True)
        self.diff_toggle = QPushButton("Show the exact change")
        self.diff_toggle.setCheckable(True)
        self.diff_toggle.setAutoDefault(False)
        self.diff = QPlainTextEdit(plan.preview(), readOnly=True)
        self.diff.setObjectName("diff")
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)  # nothing cut off
        self.diff.setVisible(False)
        self.highlighter = DiffHighlighter(self.diff.document())
        self.diff_toggle.toggled.connect(self._show_diff)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.write_button = self.buttons.addButton(
            "Stop protecting" if unwrap else "Protect", QDialogButtonBox.ButtonRole.AcceptRole)
        # Enter must not write a config file: only a click (or Alt+key) does.
        self.write_button.setAutoDefault(False)
        self.write_button.setDefault(False)
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        cancel.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary, 2)
        layout.addWidget(backup)
        layout.addWidget(self.diff_toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.diff, 1)
        layout.addWidget(self.buttons)

    def _show_diff(self, shown: bool) -> None:
        self.diff.setVisible(shown)
        self.diff_toggle.setText("Hide the exact change" if shown else "Show the exact change")
        if shown and self.height() < 640:
            self.resize(self.width(), 640)


class ClientsTab(QWidget):
    changed = Signal()  # config files were written (or put back)
    summary_changed = Signal(object)  # protection.Unprotected, after every refresh

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loaded: list[LoadedConfig] = []
        self.preview: PreviewDialog | None = None
        self.unprotected = protection.Unprotected(0, ())

        intro = QLabel("MCP clients found on this computer. A protected server runs through "
                       "Gatewatch, which checks every tool call and result.")
        intro.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(HEADERS)
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.tree.itemChanged.connect(self._toggled)
        self.empty = QLabel("No MCP client configs were found. Use “Add config file…” for a "
                            "client Gatewatch does not know.")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)

        self.secrets_box = QCheckBox("Move tokens and passwords into the system keyring")
        self.secrets_box.setToolTip(
            "Secret-looking env values leave the config file; Gatewatch hands them to the "
            "server when it starts it. Unprotecting puts them back.")
        self.secrets_box.toggled.connect(self._secrets_toggled)
        self.protect_all_button = QPushButton("Protect all")
        self.protect_all_button.clicked.connect(self.protect_all)
        self.undo_button = QPushButton("Undo last change")
        self.undo_button.clicked.connect(self.undo)
        add_button = QPushButton("Add config file…")
        add_button.clicked.connect(self._choose_file)
        refresh_button = QPushButton("Refresh")
        refresh_button.clicked.connect(self.refresh)
        self.status = QLabel()
        self.status.setObjectName("banner")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.hide()
        self._status_timer = QTimer(self, singleShot=True, interval=BANNER_MS)
        self._status_timer.timeout.connect(self.status.hide)

        buttons = QHBoxLayout()
        buttons.addWidget(self.protect_all_button)
        buttons.addWidget(self.undo_button)
        buttons.addStretch(1)
        buttons.addWidget(add_button)
        buttons.addWidget(refresh_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.status)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.secrets_box)
        layout.addLayout(buttons)
        self.refresh()

    # -- reading ----------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not event.spontaneous():  # clients may have rewritten their files meanwhile
            self.refresh()

    def refresh(self) -> None:
        self.loaded = changes.load_all()
        self.tree.blockSignals(True)
        self.tree.clear()
        for loaded in self.loaded:
            config = loaded.config
            top = QTreeWidgetItem([config.client.label, "", _short(config.path)])
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            top.setToolTip(2, str(config.path))
            top.setForeground(2, QBrush(QColor("#777777")))
            stdio = [e for e in loaded.entries if e.transport is Transport.STDIO]
            if loaded.error:
                top.setText(1, "Cannot read")
                top.setToolTip(1, loaded.error)
                top.setForeground(1, QBrush(RED))
            elif stdio:
                wrapped = sum(e.wrapped for e in stdio)
                top.setText(1, f"{wrapped} of {len(stdio)} protected")
                # Ticking a client protects all its servers; unticking gives them all back.
                top.setData(0, ENTRY_ROLE, (config.path, None))
                top.setFlags(top.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                top.setCheckState(0, Qt.CheckState.Checked if wrapped == len(stdio) else
                                  Qt.CheckState.PartiallyChecked if wrapped else
                                  Qt.CheckState.Unchecked)
                top.setToolTip(0, f"Tick to protect every server in {config.path.name}")
            self.tree.addTopLevelItem(top)
            for entry in loaded.entries:
                top.addChild(self._server_item(config, entry))
            top.setExpanded(True)
        self.tree.blockSignals(False)
        self.empty.setVisible(not self.loaded)
        self.tree.setVisible(bool(self.loaded))
        self.unprotected = protection.unprotected(self.loaded)
        self.protect_all_button.setEnabled(bool(self.unprotected))
        self._update_undo()
        self.summary_changed.emit(self.unprotected)

    def _update_undo(self) -> None:
        last = undo_log.latest()
        self.undo_button.setEnabled(last is not None)
        self.undo_button.setToolTip(undo_log.describe(last) if last else "Nothing to undo")

    def _secrets_toggled(self, on: bool) -> None:
        """Refuse to move tokens into a keyring that stores them as plain text, unless the
        person agrees after being told."""
        if not on:
            return
        backend = plaintext_backend()
        if backend is not None and not self.confirm_plaintext(backend):
            self.secrets_box.setChecked(False)

    def confirm_plaintext(self, backend: str) -> bool:
        """Ask before moving tokens into a keyring that does not encrypt (No by default)."""
        answer = QMessageBox.warning(
            self, "This keyring does not encrypt",
            f"The keyring on this computer ({backend}) keeps secrets in a plain file. Moving a "
            "token there takes it out of the client's config but does not protect it: anyone "
            "who can read your files can read it.\n\nMove tokens there anyway?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _server_item(self, config: ConfigFile, entry: ServerEntry) -> QTreeWidgetItem:
        status, tip, colour = _status(config, entry)
        original = entry.original
        runs = (" ".join(redact_argv([original[0], *original[1]])) if original
                else entry.skip_reason or "")
        name = f"{entry.name}  (project {Path(entry.scope).name})" if entry.scope else entry.name
        item = QTreeWidgetItem([name, status, runs])
        item.setToolTip(1, tip)
        item.setToolTip(2, runs)
        if colour is not None:
            item.setForeground(1, QBrush(colour))
        item.setData(0, ENTRY_ROLE, (config.path, entry.location))
        if entry.transport is Transport.STDIO:
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(0, Qt.CheckState.Checked if entry.wrapped
                               else Qt.CheckState.Unchecked)
            item.setToolTip(0, "Tick to protect this server, untick to give it back its "
                               "original command")
        else:
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
        return item

    def client_item(self, client_id: str) -> QTreeWidgetItem | None:
        """The row of a client's (first) config file."""
        for i, loaded in enumerate(self.loaded):
            if loaded.config.client.id == client_id:
                return self.tree.topLevelItem(i)
        return None

    def server_item(self, client_id: str, server: str) -> QTreeWidgetItem | None:
        """The row of one server (for tests and for jumping to it)."""
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is None or self.loaded[i].config.client.id != client_id:
                continue
            for j in range(top.childCount()):
                if self.loaded[i].entries[j].name == server:
                    return top.child(j)
        return None

    # -- changing ---------------------------------------------------------------------------

    def _toggled(self, item: QTreeWidgetItem, column: int) -> None:
        key = item.data(0, ENTRY_ROLE)
        if column != 0 or not key:
            return
        path, location = key
        action: changes.Action = ("unwrap" if item.checkState(0) == Qt.CheckState.Unchecked
                                  else "wrap")
        self._propose(action, lambda c, e: c.path == path and location in (None, e.location))

    def protect_all(self) -> None:
        self._propose("wrap", changes.everything)

    def _propose(self, action: changes.Action, chosen: changes.Selector) -> None:
        try:
            plan = changes.make_plan(action, self.loaded, chosen,
                                     secrets_to_keyring=self.secrets_box.isChecked())
        except ExecutableNotFound as exc:
            self._say(str(exc))
            self.refresh()
            return
        if not plan.changes:
            reasons = [*plan.notes, *(s.reason for s in plan.skipped)]
            self._say("Nothing to change." + (" " + " ".join(reasons) if reasons else ""))
            self.refresh()
            return
        self.preview = PreviewDialog(plan, self)
        self.preview.accepted.connect(lambda: self._write(plan))
        self.preview.rejected.connect(self.refresh)  # put the toggle back
        self.preview.open()

    def _write(self, plan: changes.Plan) -> None:
        done = changes.apply(plan)
        if done.written:
            undo_log.record(plan, done)
        self._report(done, "Saved")
        self.refresh()
        self.changed.emit()

    def undo(self) -> None:
        """Undo the latest change, also one made before the app last started."""
        self._report(undo_log.undo_latest(), "Put back")
        self.refresh()
        self.changed.emit()

    def _report(self, done: changes.Applied, verb: str) -> None:
        lines = []
        if done.written:
            names = ", ".join(_short(path) for path, _ in done.written)
            lines.append(f"{verb} {names}.")
        lines += [f"Not written: {reason}" for _, reason in done.failed]
        if done.restart:
            lines.append("To pick up the change: " + "; ".join(done.restart) + ".")
        elif done.written:
            lines.append("The client picks up the change by itself.")
        self._say("\n".join(lines), sticky=bool(done.failed))

    def _say(self, text: str, sticky: bool = False) -> None:
        """Show a note; it goes away by itself unless it reports a failure."""
        self.status.setText(text)
        self.status.setVisible(bool(text))
        if text and not sticky:
            self._status_timer.start()
        else:
            self._status_timer.stop()

    def _choose_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Add an MCP config file", str(Path.home()),
                                              "Config files (*.json *.yaml *.yml *.toml)")
        if name:
            self.add_file(Path(name))

    def add_file(self, path: Path) -> None:
        try:
            discovery.add_path(path)
        except (OSError, ValueError, ConfigSyntaxError) as exc:
            self._say(f"Cannot add {path}: {exc}", sticky=True)
            return
        self._say(f"Added {path}.")
        self.refresh()
