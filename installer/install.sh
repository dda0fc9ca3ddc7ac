#!/usr/bin/env bash
# Install Gatewatch for this user, or upgrade it in place when run again:
# its own venv in the per-user data directory, `gatewatch` in ~/.local/bin, a desktop entry and
# start at login (Linux: XDG autostart; macOS: a LaunchAgent), then the tray app is started.
set -euo pipefail
# shellcheck source=installer/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=installer/system_packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/system_packages.sh"

usage() {
  cat <<USAGE
usage: installer/install.sh [--no-launch] [--yes | --no-system-packages]

  --no-launch            install only; do not start the tray app (headless machines, CI)
  --yes                  install missing system packages (Qt's libraries, python3-venv)
                         without asking: directly as root, else through sudo
  --no-system-packages   never install system packages; only say which are missing

Without --yes, missing system packages are installed after asking on the terminal.

Environment: PYTHON=python3.X picks the Python that makes the venv (3.11 or newer).
USAGE
}

launch=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-launch) launch=0 ;;
    --yes|-y) GW_SYSTEM_PACKAGES=yes ;;
    --no-system-packages) GW_SYSTEM_PACKAGES=no ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
  shift
done

python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || die "$python not found: install Python 3.11 or newer"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "$("$python" -V 2>&1) is too old: Gatewatch needs Python 3.11 or newer (set PYTHON=...)"
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  # Debian and Ubuntu ship venv's pip bootstrap separately.
  if [ "$(gw_package_manager || true)" = apt-get ]; then
    gw_install_system_packages apt-get python3-venv || true
  fi
  "$python" -c 'import venv, ensurepip' 2>/dev/null \
    || die "$python cannot make virtual environments: install python3-venv (apt) and run again"
fi

# Checked before pip replaces the code under it.
running=0
if gw_app_running; then running=1; fi

# Re-use a working venv (upgrade in place); replace one whose Python is gone or too old.
if [ -x "$GW_VENV/bin/python" ] \
  && "$GW_VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  say "upgrading Gatewatch in $GW_VENV"
else
  rm -rf "$GW_VENV"
  mkdir -p "$GW_DATA"
  say "creating $GW_VENV"
  "$python" -m venv "$GW_VENV"
fi

# A local directory is always rebuilt and reinstalled by pip, so a re-run upgrades the code even
# when the version number did not change.
"$GW_VENV/bin/python" -m pip install --disable-pip-version-check --quiet --upgrade "$GW_REPO" \
  || die "pip could not install $GW_REPO into $GW_VENV (see the messages above)"
gatewatch="$GW_VENV/bin/gatewatch"
"$gatewatch" --version >/dev/null || die "$gatewatch does not run after install"

mkdir -p "$GW_BIN_DIR"
ln -sfn "$gatewatch" "$GW_BIN_DIR/gatewatch"
say "linked $GW_BIN_DIR/gatewatch"
case ":$PATH:" in
  *":$GW_BIN_DIR:"*) ;;
  *) say "note: $GW_BIN_DIR is not on your PATH; add it in your shell profile" ;;
esac

resources="$("$GW_VENV/bin/python" -I -c 'from proxy.paths import resources_dir; print(resources_dir())')"

desktop_entry() {  # $1: where to write it
  local exec_line="\"$gatewatch\"" icon="$GW_ICON"
  mkdir -p "$(dirname "$1")"
  if [ -f "$resources/gatewatch.desktop.in" ]; then
    # sed replacement text: escape & and the | delimiter.
    local e i
    e="$(printf '%s' "$exec_line" | sed 's/[&|\\]/\\&/g')"
    i="$(printf '%s' "$icon" | sed 's/[&|\\]/\\&/g')"
    sed -e "s|@EXEC@|$e|g" -e "s|@ICON@|$i|g" "$resources/gatewatch.desktop.in" > "$1"
  else
    printf '%s\n' "[Desktop Entry]" "Type=Application" "Name=Gatewatch" \
      "Comment=Watch and approve what your AI tools do" "Exec=$exec_line" "Icon=$icon" \
      "Terminal=false" "Categories=Utility;Security;" "X-GNOME-Autostart-enabled=true" > "$1"
  fi
}

qt_ok=1
if [ "$GW_OS" = "Darwin" ]; then
  mkdir -p "$(dirname "$GW_LAUNCH_AGENT")"
  cat > "$GW_LAUNCH_AGENT" <<PLIST
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>$GW_LAUNCH_AGENT_LABEL</string>
  <key>ProgramArguments</key><array><string>$gatewatch</string></array>
  <key>RunAtLoad</key><true/>
  <key>ProcessType</key><string>Interactive</string>
  <key>StandardErrorPath</key><string>$GW_APP_LOG</string>
</dict>
</plist>
PLIST
  say "start at login: $GW_LAUNCH_AGENT"
else
  mkdir -p "$(dirname "$GW_ICON")"
  cp "$resources/icons/gatewatch.svg" "$GW_ICON"
  desktop_entry "$GW_DESKTOP_ENTRY"
  desktop_entry "$GW_AUTOSTART_ENTRY"
  say "desktop entry: $GW_DESKTOP_ENTRY"
  say "start at login: $GW_AUTOSTART_ENTRY"
  # Qt's xcb platform needs system libraries pip cannot install: install the missing ones
  # with the platform's package manager, or name them.
  if ! needed="$("$GW_VENV/bin/python" -I -m proxy.doctor.qt_libs --packages)"; then
    if [ -n "$needed" ]; then
      # shellcheck disable=SC2086  # "MANAGER PACKAGE..." on one line, split on purpose
      gw_install_system_packages $needed || true
    fi
    "$GW_VENV/bin/python" -I -m proxy.doctor.qt_libs || qt_ok=0
  fi
fi

if [ "$running" = 1 ]; then
  say "installed; the tray app is still running the old version: quit it from its menu and" \
    "start it again (gatewatch)"
  exit 0
fi
if [ "$launch" = 0 ]; then
  say "installed; start the tray app with: gatewatch"
  exit 0
fi
if [ "$qt_ok" = 0 ]; then
  die "installed, but the tray app cannot start until the packages above are installed; then run: gatewatch"
fi
if [ "$GW_OS" = "Darwin" ]; then
  launchctl bootout "gui/$(id -u)/$GW_LAUNCH_AGENT_LABEL" 2>/dev/null || true
  launchctl bootstrap "gui/$(id -u)" "$GW_LAUNCH_AGENT"
elif [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  nohup "$gatewatch" >"$GW_APP_LOG" 2>&1 </dev/null &
else
  say "installed; no graphical session here, so the tray app starts at your next desktop login"
  exit 0
fi
say "installed and started; look for the Gatewatch icon in your system tray"
