#!/usr/bin/env bash
# The test command: sets up .venv and the npm reference servers if needed, then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
# The npm reference servers and the client CLIs (pinned in tests/npm/package.json): installed
# once, again only when one of them is missing.
for bin in mcp-server-everything mcp-server-filesystem mcp-server-memory claude gemini codex; do
  if [ ! -x "tests/npm/node_modules/.bin/$bin" ]; then
    (cd tests/npm && npm install --no-audit --no-fund --loglevel=error)
    break
  fi
done
# The detector's training corpora, every file pinned in bench/training-*.lock: installed once
# (about 1 to 2 min, 315 MB in .corpora/), again only when a lock changes. The model test rebuilds
# the candidate model from them and compares it with its file.
bash bench/install_corpora.sh .venv/bin/python
export QT_QPA_PLATFORM=offscreen
exec .venv/bin/python -m pytest "$@"
