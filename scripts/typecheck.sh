#!/usr/bin/env bash
# Type-check schedlab with mypy (configured in pyproject.toml, [tool.mypy]). The package is built
# from several top-level folders (pyproject's package-dir: schedulers/ is schedlab.schedulers, ...),
# which mypy cannot map itself: it checks a temporary tree of links laid out as the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/schedlab"
for entry in schedlab/*; do ln -s "$repo/$entry" "$tree/schedlab/"; done
for folder in schedulers predictors workloads platforms; do ln -s "$repo/$folder" "$tree/schedlab/$folder"; done
cd "$tree"
MYPYPATH="$tree" "$repo/.venv/bin/mypy" --config-file "$repo/pyproject.toml" -p schedlab
