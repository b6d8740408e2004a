#!/usr/bin/env bash
# Set up .venv (Python 3.11+) with schedlab and its test tools, then lint, type-check and run the tests.
# Extra arguments go to pytest (e.g. scripts/test.sh -m slow; -n 0: no worker processes).
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
# two pytest-xdist workers (the tests are independent; SCHEDLAB_TEST_WORKERS=0 runs them in this process)
started=$EPOCHREALTIME
status=0
.venv/bin/python -m pytest -q -n "${SCHEDLAB_TEST_WORKERS:-2}" "$@" || status=$?
awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "pytest took %.0f s (the goal: at most 120 s on the project'"'"'s 2-core machine, idle)\n", b - a }' >&2
exit "$status"
