#!/usr/bin/env bash
# Rewrite the reference section of docs/writing-a-scheduler.md from the code
# (`schedlab scheduler reference`); tests/test_tutorial.py fails until it is current.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
"$PY" - <<'PYEOF'
from pathlib import Path

from schedlab.schedulers.reference import reference

path = Path("docs/writing-a-scheduler.md")
text = path.read_text(encoding="utf-8")
head, rest = text.split("<!-- reference: start -->\n")
_, tail = rest.split("<!-- reference: end -->")
path.write_text(head + "<!-- reference: start -->\n" + reference() + "<!-- reference: end -->" + tail, encoding="utf-8")
print(f"{path}: reference section rewritten")
PYEOF
