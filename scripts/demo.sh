#!/usr/bin/env bash
# Set up .venv (Python 3.11+) with schedlab, then run the demo experiment on the embedded engine:
# a seeded synthetic workload, fcfs vs easy vs easy-sjbf, outputs in out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
.venv/bin/schedlab demo --out out/demo "$@"
echo "the schedlab command is in .venv: run \`source .venv/bin/activate\` first (or call .venv/bin/schedlab)"
