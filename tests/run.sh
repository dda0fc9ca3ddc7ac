#!/usr/bin/env bash
# The test command: sets up .venv and the npm reference servers if needed, then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
if [ ! -x tests/npm/node_modules/.bin/mcp-server-everything ]; then
  (cd tests/npm && npm install --no-audit --no-fund --loglevel=error)
fi
export QT_QPA_PLATFORM=offscreen
exec .venv/bin/python -m pytest "$@"
