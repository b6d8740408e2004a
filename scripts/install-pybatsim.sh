#!/usr/bin/env bash
# Install pybatsim 3.2.1 next to schedlab, so the pybatsim entry files (schedlabEasy.py, ...) run.
# pybatsim 3.2.1 pins pyzmq<23, which does not build on Python 3.11+; its code works with the pyzmq
# schedlab already uses. So: schedlab's `pybatsim` extra brings pybatsim's other dependencies, and
# pybatsim itself is installed without its pins (--no-deps). These are the two documented steps.
# usage: scripts/install-pybatsim.sh [PYTHON]   (default: .venv/bin/python of this repository)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${1:-$HERE/.venv/bin/python}
[ -x "$PY" ] || { echo "install-pybatsim: no Python at $PY (create the venv first: python3 -m venv .venv)" >&2; exit 2; }
"$PY" -m pip install -q --disable-pip-version-check -e "$HERE[pybatsim]"
"$PY" -m pip install -q --disable-pip-version-check --no-deps "pybatsim==3.2.1"
"$PY" -c 'import batsim.batsim, schedlab.pybatsim_entry.adapter' \
  || { echo "install-pybatsim: pybatsim does not import in $PY" >&2; exit 1; }
echo "pybatsim 3.2.1 installed for $PY ($(dirname "$PY")/pybatsim)" >&2
