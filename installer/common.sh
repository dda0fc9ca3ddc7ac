# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source this
# Paths shared by install.sh and uninstall.sh (sourced, not run). They match what Gatewatch itself
# uses (platformdirs): the venv lives in the per-user data directory, beside the audit log.

GW_OS="$(uname -s)"
GW_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GW_BIN_DIR="$HOME/.local/bin"
GW_LAUNCH_AGENT_LABEL="org.gatewatch.tray"

if [ "$GW_OS" = "Darwin" ]; then
  GW_DATA="$HOME/Library/Application Support/gatewatch"
  GW_CONFIG="$GW_DATA"
  GW_LAUNCH_AGENT="$HOME/Library/LaunchAgents/$GW_LAUNCH_AGENT_LABEL.plist"
else
  GW_DATA="${XDG_DATA_HOME:-$HOME/.local/share}/gatewatch"
  GW_CONFIG="${XDG_CONFIG_HOME:-$HOME/.config}/gatewatch"
  GW_DESKTOP_ENTRY="${XDG_DATA_HOME:-$HOME/.local/share}/applications/gatewatch.desktop"
  GW_AUTOSTART_ENTRY="${XDG_CONFIG_HOME:-$HOME/.config}/autostart/gatewatch.desktop"
  GW_ICON="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/scalable/apps/gatewatch.svg"
fi
GW_VENV="$GW_DATA/venv"
GW_APP_LOG="$GW_DATA/tray-start.log"

say() { printf 'gatewatch: %s\n' "$*"; }
die() { printf 'gatewatch: error: %s\n' "$*" >&2; exit 1; }

# Is the tray app serving its socket? Asks the installed Gatewatch where the socket lives.
gw_app_running() {
  local sock
  [ -x "$GW_VENV/bin/python" ] || return 1
  sock="$("$GW_VENV/bin/python" -I -c \
    'from proxy.paths import runtime_dir; print(runtime_dir() / "gatewatch.sock")' 2>/dev/null)" \
    || return 1
  [ -S "$sock" ]
}
