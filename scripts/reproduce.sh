#!/usr/bin/env bash
# Regenerate a study's table of record from the code that ships: run its campaign (or factory) into
# out/reproductions/NAME, write its report and experiments/STUDY/RESULTS-NAME.md (headed by the
# commands and commit that made it), then docs/reproductions.md from every results directory there.
#   bash scripts/reproduce.sh walltime/coare policies/factory-their-tuples ...   # or: all
#   bash scripts/reproduce.sh --ci    # what CI recomputes: every study's small variant (`--small 500`:
#                                     # first window, first 500 jobs) checked against its expected results
#                                     # (experiments/STUDY-FOLDER/expected/NAME-small.json); --update records
#                                     # them. The factory's small file (factory-ci.toml) is a test of the suite
# Needs ../shared/data (the traces); WORKERS (default 2) runs in parallel.
set -euo pipefail
cd "$(dirname "$0")/.."
ALL="policies/factory-their-tuples policies/clairvoyant-authors policies/longterm walltime/coare walltime/coare-7days hybrid/main hybrid/clairvoyance hybrid/sensitivity hybrid/reliability diws/ricc diws/predictors"
if [ "${1:-}" = --ci ]; then
  update=(); [ "${2:-}" = --update ] && update=(--update)
  for study in $ALL; do
    # a factory and the model studies are no campaigns: the tests run factory-ci.toml and small studies
    case "$study" in policies/factory-their-tuples|diws/predictors|hybrid/reliability) continue ;; esac
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
done
dirs=()
for study in $ALL; do
  out="out/reproductions/$(dirname "$study")-$(basename "$study")"
  [ -d "$out" ] && dirs+=("$out")
done
.venv/bin/schedlab reproductions "${dirs[@]}" -o docs/reproductions.md
