#!/usr/bin/env bash
# Set up .venv (Python 3.11+) with schedlab, then run the demo experiment on the embedded engine:
# a seeded synthetic workload, fcfs vs easy vs easy-sjbf, outputs in out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
exec .venv/bin/schedlab demo --out out/demo "$@"
