#!/usr/bin/env bash
# CI: install (--no-launch --yes) -> gatewatch doctor -> re-install (upgrade) -> uninstall -> purge,
# all in a throw-away HOME, checking what each step leaves behind. Any failure stops with a
# message naming the step. Needs only python3, this checkout and the package registry.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

real_home="$HOME"
work="$(mktemp -d "${TMPDIR:-/tmp}/gatewatch-ci-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home"
export XDG_RUNTIME_DIR="$work/run"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
unset XDG_DATA_HOME XDG_CONFIG_HOME XDG_STATE_HOME XDG_CACHE_HOME GATEWATCH_HOME
unset DISPLAY WAYLAND_DISPLAY QT_QPA_PLATFORM PYTHONPATH VIRTUAL_ENV
# Keep the real pip cache so CI does not download Qt again for every throw-away HOME.
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$real_home/.cache/pip}"
export PATH="$HOME/.local/bin:$PATH"

step() { printf '\n=== ci-check: %s\n' "$*"; }
fail() { printf '\nci-check: FAILED: %s\n' "$*" >&2; exit 1; }
must_exist() { for f in "$@"; do [ -e "$f" ] || fail "expected $f to exist"; done; }
must_not_exist() {
  for f in "$@"; do
    if [ -e "$f" ] || [ -L "$f" ]; then fail "expected $f gone"; fi
  done
}

data="$HOME/.local/share/gatewatch"
venv="$data/venv"
link="$HOME/.local/bin/gatewatch"
desktop="$HOME/.local/share/applications/gatewatch.desktop"
autostart="$HOME/.config/autostart/gatewatch.desktop"
icon="$HOME/.local/share/icons/hicolor/scalable/apps/gatewatch.svg"

doctor() {
  local status=0
  gatewatch doctor || status=$?
  [ "$status" -le 1 ] || fail "gatewatch doctor reported a failure (exit $status)"
  gatewatch doctor --json > "$work/doctor.json" || [ $? -le 1 ] || fail "doctor --json failed"
  "$venv/bin/python" -I - "$work/doctor.json" <<'PY' || fail "doctor --json output is not valid"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["status"] in ("OK", "WARN"), report["status"]
names = {c["check"] for c in report["checks"]}
assert {"python", "database", "socket-dir"} <= names, names
PY
}

step "install --no-launch --yes (installs missing system packages too)"
bash "$here/install.sh" --no-launch --yes || fail "install.sh exited $?"
"$venv/bin/python" -I -m proxy.doctor.qt_libs \
  || fail "Qt's system libraries are still missing after install.sh --yes"
must_exist "$venv/bin/gatewatch" "$link" "$desktop" "$autostart" "$icon"
[ "$(command -v gatewatch)" = "$link" ] || fail "gatewatch on PATH is $(command -v gatewatch)"
grep -qx "Exec=\"$venv/bin/gatewatch\"" "$desktop" || fail "desktop entry Exec line is wrong"
! grep -q '@[A-Z]*@' "$desktop" "$autostart" || fail "desktop entry has unfilled placeholders"
# The venv holds a real install, not a link back to this checkout.
"$venv/bin/python" -I -c 'import proxy, sys; sys.exit("site-packages" not in proxy.__file__)' \
  || fail "proxy is not installed into the venv's site-packages"
# With a compiler on the machine the wheel carries the detector's C extension (doctor only
# warns when it is missing, which would let a broken build hook pass unnoticed).
if command -v cc >/dev/null 2>&1; then
  "$venv/bin/python" -I -c 'import sys; from proxy.detector import native
sys.exit(None if native.load() is not None else native.status())' \
    || fail "the installed Gatewatch runs the detector's Python path although a C compiler is here"
fi

step "wrap a client config, then gatewatch doctor"
claude="$HOME/.config/Claude/claude_desktop_config.json"
mkdir -p "$(dirname "$claude")"
printf '{"mcpServers": {"echo": {"command": "%s", "args": ["-c", "pass"]}}}\n' \
  "$(command -v python3)" > "$claude"
gatewatch wrap claude-desktop --yes || fail "gatewatch wrap exited $?"
grep -q '"run"' "$claude" || fail "the client config was not wrapped"
doctor
must_exist "$data/gatewatch.db"
grep -q '1 of 1 servers wrapped' "$work/doctor.json" || fail "doctor does not see the wrapped server"

step "install again (upgrade in place)"
bash "$here/install.sh" --no-launch || fail "re-running install.sh exited $?"
gatewatch --version || fail "gatewatch does not run after the upgrade"
doctor

step "uninstall --yes (keeps data)"
bash "$here/uninstall.sh" --yes || fail "uninstall.sh exited $?"
must_not_exist "$venv" "$link" "$desktop" "$autostart" "$icon"
must_exist "$data/gatewatch.db"
! grep -q '"run"' "$claude" || fail "uninstall left the client config wrapped"
grep -q '"pass"' "$claude" || fail "uninstall did not restore the original command"

step "uninstall --yes --purge"
bash "$here/uninstall.sh" --yes --purge || fail "uninstall.sh --purge exited $?"
must_not_exist "$data" "$HOME/.config/gatewatch"

printf '\nci-check: OK\n'
