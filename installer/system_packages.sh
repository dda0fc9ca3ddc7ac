# shellcheck shell=bash
# Installing the system packages pip cannot (sourced by install.sh after common.sh).
# GW_SYSTEM_PACKAGES: ask (default: ask on the terminal), yes (install without asking, for CI),
# no (only say what to run).

GW_SYSTEM_PACKAGES="${GW_SYSTEM_PACKAGES:-ask}"

# The install command for a package manager, one word per line.
gw_install_command() {  # $1: manager (apt-get, dnf, pacman); then the packages
  local manager="$1"
  shift
  case "$manager" in
    apt-get) printf '%s\n' apt-get install -y -q "$@" ;;
    dnf) printf '%s\n' dnf install -y "$@" ;;
    pacman) printf '%s\n' pacman -S --needed --noconfirm "$@" ;;
    *) return 1 ;;
  esac
}

# Install packages with the platform's package manager: directly when root, through sudo
# otherwise, after asking unless GW_SYSTEM_PACKAGES=yes. Returns non-zero when nothing was
# installed (the reason and the command to run by hand are printed).
gw_install_system_packages() {  # $1: manager; then the packages
  local manager="$1"
  shift
  local -a cmd prefix=()
  mapfile -t cmd < <(gw_install_command "$manager" "$@")
  [ "${#cmd[@]}" -gt 0 ] || { say "no known way to install packages with $manager"; return 1; }
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      say "missing system packages: $*; as root, run: ${cmd[*]}"
      return 1
    fi
    prefix=(sudo)
  fi
  local shown="${prefix[*]:+${prefix[*]} }${cmd[*]}"
  say "missing system packages: $*"
  case "$GW_SYSTEM_PACKAGES" in
    yes) ;;
    no)
      say "install them with: $shown"
      return 1
      ;;
    *)
      if [ ! -t 0 ]; then
        say "no terminal to ask on; install them with: $shown (or run again with --yes)"
        return 1
      fi
      local answer
      read -r -p "gatewatch: install them now with \`$shown\`? [Y/n] " answer || answer=n
      case "$answer" in
        "" | y | Y | yes | YES) ;;
        *)
          say "not installed; install them with: $shown"
          return 1
          ;;
      esac
      ;;
  esac
  say "running: $shown"
  if [ "$manager" = apt-get ]; then
    # A fresh machine may not have package lists yet: refresh them once if the install fails.
    "${prefix[@]}" env DEBIAN_FRONTEND=noninteractive "${cmd[@]}" \
      || { "${prefix[@]}" apt-get update -q \
        && "${prefix[@]}" env DEBIAN_FRONTEND=noninteractive "${cmd[@]}"; }
  else
    "${prefix[@]}" "${cmd[@]}"
  fi
}

# The first package manager on PATH that gw_install_command knows.
gw_package_manager() {
  local m
  for m in apt-get dnf pacman; do
    if command -v "$m" >/dev/null 2>&1; then
      printf '%s\n' "$m"
      return 0
    fi
  done
  return 1
}
