#!/usr/bin/env bash
# Remove Gatewatch for this user: first offer to unwrap every client config that launches
# servers through it, then remove the venv, the `gatewatch` link, the desktop entry and start at
# login. The audit log, trust and policy stay unless --purge.
set -euo pipefail
# shellcheck source=installer/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage() {
  cat <<USAGE
usage: installer/uninstall.sh [--yes] [--purge]

  --yes     do not ask: unwrap every wrapped client config, then uninstall
  --purge   also delete your data: audit log, remembered trust, policy and settings
USAGE
}

yes=0
purge=0
while [ $# -gt 0 ]; do
  case "$1" in
    --yes|-y) yes=1 ;;
    --purge) purge=1 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
  shift
done

python="$GW_VENV/bin/python"
unwrap="$GW_REPO/installer/unwrap_clients.py"

# Client configs that still launch `gatewatch run` would break once it is gone: unwrap first.
if [ -x "$python" ]; then
  status=0
  wrapped="$("$python" -I "$unwrap" --list)" || status=$?
  if [ "$status" -ne 0 ]; then
    say "warning: could not list wrapped client configs; check them by hand after uninstalling"
  elif [ -n "$wrapped" ]; then
    say "these client servers are launched through Gatewatch:"
    printf '%s\n' "$wrapped" | sed 's/^/  /'
    answer=n
    if [ "$yes" = 1 ]; then
      answer=y
    elif [ -t 0 ]; then
      read -r -p "gatewatch: restore their original commands now? [Y/n] " answer || answer=n
      answer="${answer:-y}"
    else
      die "no terminal to ask: run again with --yes to unwrap them and uninstall"
    fi
    case "$answer" in
      y|Y|yes) "$python" -I "$unwrap" --apply || die "unwrapping failed; nothing was removed" ;;
      *) say "warning: left wrapped; those servers will fail to start until you unwrap them" ;;
    esac
  fi
fi

running=0
if gw_app_running; then running=1; fi

if [ "$GW_OS" = "Darwin" ]; then
  launchctl bootout "gui/$(id -u)/$GW_LAUNCH_AGENT_LABEL" 2>/dev/null || true
  rm -f "$GW_LAUNCH_AGENT"
else
  rm -f "$GW_DESKTOP_ENTRY" "$GW_AUTOSTART_ENTRY" "$GW_ICON"
fi
# Only our own link: never a `gatewatch` the user put there some other way.
link="$GW_BIN_DIR/gatewatch"
if [ -L "$link" ] && [ "$(readlink "$link")" = "$GW_VENV/bin/gatewatch" ]; then
  rm -f "$link"
fi
rm -rf "$GW_VENV"
rm -f "$GW_APP_LOG"

if [ "$purge" = 1 ]; then
  rm -rf "$GW_DATA" "$GW_CONFIG"
  [ -n "${XDG_RUNTIME_DIR:-}" ] && rm -rf "$XDG_RUNTIME_DIR/gatewatch"
  say "removed Gatewatch and all its data"
else
  rmdir "$GW_DATA" 2>/dev/null || true
  say "removed Gatewatch; your data stays in $GW_DATA and $GW_CONFIG (--purge deletes it)"
fi
if [ "$running" = 1 ]; then
  say "the tray app is still running (from the removed files): quit it from its menu"
fi
