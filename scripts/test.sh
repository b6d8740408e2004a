#!/usr/bin/env bash
# Set up .venv (Python 3.11+) with schedlab and its test tools, then lint, type-check and run the tests.
# Extra arguments go to pytest (e.g. scripts/test.sh -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
echo "installing schedlab, its dependencies (numpy, pandas, scikit-learn, xgboost, ...) and its test tools" \
  "(pytest, hypothesis, ruff, mypy, dask, gymnasium) into .venv: 1-3 minutes the first time (33-150 s" \
  "measured), seconds once installed" >&2
t0=$(date +%s)
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
echo "installed in $(( $(date +%s) - t0 )) s" >&2
.venv/bin/ruff check schedlab schedulers predictors workloads platforms tests benchmarks
bash scripts/typecheck.sh
exec .venv/bin/python -m pytest "$@"
