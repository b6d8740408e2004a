#!/usr/bin/env bash
# Set up .venv (Python 3.11+) with schedlab, then run the demo experiment on the embedded engine:
# a seeded synthetic workload, fcfs vs easy vs easy-sjbf, outputs in out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
echo "installing schedlab and its dependencies (numpy, pandas, scikit-learn, xgboost, ...) into .venv: 1-3 minutes the first time (33-150 s measured), seconds once installed" >&2
t0=$(date +%s)
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
echo "installed in $(( $(date +%s) - t0 )) s" >&2
.venv/bin/schedlab demo --out out/demo "$@"
echo "the schedlab command is in .venv: run \`source .venv/bin/activate\` first (or call .venv/bin/schedlab)"
