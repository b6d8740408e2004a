#!/usr/bin/env bash
# Set up .venv (Python 3.11+) with schedlab and its test tools, then lint, type-check and run the tests.
# Extra arguments go to pytest (e.g. scripts/test.sh -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
.venv/bin/ruff check schedlab schedulers predictors workloads platforms tests benchmarks
bash scripts/typecheck.sh
exec .venv/bin/python -m pytest "$@"
