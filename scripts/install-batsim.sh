#!/usr/bin/env bash
# Build real Batsim 4.2.1 + batsched 1.4.0 (+ a pybatsim 3.2.1 venv) into a cache directory outside
# the repository, using the shared build script; a no-op when already built. Prints the prefix.
# usage: scripts/install-batsim.sh [PREFIX]   (default: ${XDG_CACHE_HOME:-~/.cache}/schedlab/batsim-4.2.1)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${1:-${SCHEDLAB_BATSIM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/batsim-4.2.1}}
BUILD=${SCHEDLAB_BATSIM_BUILD:-$HERE/../shared/tools/batsim/build.sh}
if [ -x "$PREFIX/bin/batsim" ] && [ -x "$PREFIX/bin/batsched" ] && [ -x "$PREFIX/venv/bin/pybatsim" ]; then
  echo "$PREFIX"; exit 0
fi
[ -f "$BUILD" ] || { echo "install-batsim: build script not found at $BUILD (set SCHEDLAB_BATSIM_BUILD)" >&2; exit 2; }
bash "$BUILD" "$PREFIX" --with-pybatsim >&2
echo "$PREFIX"
