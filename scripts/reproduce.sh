#!/usr/bin/env bash
# Regenerate a study's table of record from the code that ships, with the pinned libraries
# (constraints/reproduce.txt, installed into .venv first): run its campaign (or factory) into
# out/reproductions/NAME, write its report and experiments/STUDY/RESULTS-NAME.md (headed by the
# commands and commit that made it) and its evidence, experiments/STUDY/evidence/NAME (the small
# files the table of record is computed from, committed), then docs/reproductions.md from every
# study's committed evidence (`all` also requires that one commit made them all).
#   bash scripts/reproduce.sh walltime/coare policies/factory-their-tuples ...   # or: all
#   bash scripts/reproduce.sh --check-pins  # every pin of constraints/reproduce.txt has a Python 3.12 wheel
#   bash scripts/reproduce.sh --ci    # what CI recomputes: every study's small variant (`--small 500`:
#                                     # first window, first 500 jobs) checked against its expected results
#                                     # (experiments/STUDY-FOLDER/expected/NAME-small.json); --update records
#                                     # them. The factory's small file (factory-ci.toml) is a test of the suite
#   bash scripts/reproduce.sh predictions/main   # a study of our own (OWN): its report, RESULTS and evidence
# Needs ../shared/data (the traces); WORKERS (default 2) runs in parallel.
set -euo pipefail
cd "$(dirname "$0")/.."
ALL="policies/factory-their-tuples policies/factory-ctc policies/factory-sdsc policies/clairvoyant-authors policies/clairvoyant-authors-skip16 policies/longterm walltime/coare walltime/coare-7days walltime/curie walltime/hpc2n walltime/wagap hybrid/main hybrid/clairvoyance hybrid/sensitivity hybrid/alpha0 hybrid/reliability diws/ricc diws/predictors"
# studies of record that reproduce no paper (no row in the table of record): run and checked like the others
OWN="predictions/main"
PY=${PYTHON:-python3}
if [ "${1:-}" = --check-pins ]; then
  dl=$(mktemp -d); trap 'rm -rf "$dl"' EXIT
  grep -v '^#' constraints/reproduce.txt > "$dl/pins.txt"
  for version in 3.11 3.12; do
    "$PY" -m pip download -q --disable-pip-version-check --python-version "$version" --only-binary=:all: --no-deps \
      -r "$dl/pins.txt" -d "$dl/$version"
    echo "reproduce: every pin of constraints/reproduce.txt has a wheel for Python $version"
  done
  exit 0
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -c constraints/reproduce.txt -e .
if [ "${1:-}" = --ci ]; then
  update=(); [ "${2:-}" = --update ] && update=(--update)
  for study in $ALL $OWN; do
    # a factory and the model studies are no campaigns: the tests run factory-ci.toml and small studies
    case "$study" in policies/factory-*|diws/predictors|hybrid/reliability) continue ;; esac
    .venv/bin/schedlab experiment check "experiments/$study.toml" --small 500 --workers "${WORKERS:-2}" \
      ${update[@]+"${update[@]}"}
  done
  exit 0
fi
studies=("$@")
if [ "${#studies[@]}" = 0 ] || [ "${studies[0]}" = all ]; then read -r -a studies <<< "$ALL"; fi
for study in "${studies[@]}"; do
  [ -f "experiments/$study.toml" ] || { echo "reproduce: no experiments/$study.toml" >&2; exit 2; }
done
mkdir -p out/reproductions
for study in "${studies[@]}"; do
  name=$(basename "$study"); folder=$(dirname "$study")
  out="out/reproductions/$folder-$name"
  rm -rf "$out"  # from scratch: every run made by this commit
  .venv/bin/schedlab experiment run "experiments/$study.toml" -o "$out" --workers "${WORKERS:-2}"
  .venv/bin/schedlab report "$out" -o "$out/report" --results-file "experiments/$folder/RESULTS-$name.md"
  .venv/bin/schedlab evidence "$out" -o "experiments/$folder/evidence/$name"
done
dirs=()
for study in $ALL; do
  evidence="experiments/$(dirname "$study")/evidence/$(basename "$study")"
  [ -d "$evidence" ] && dirs+=("$evidence")
done
one=(); [ "${studies[*]}" = "$ALL" ] && one=(--one-commit)
.venv/bin/schedlab reproductions "${dirs[@]}" -o docs/reproductions.md --not-attempted experiments/not-attempted.toml \
  ${one[@]+"${one[@]}"}
