"""docs/writing-a-scheduler.md cannot rot: every code block runs, in order, in a fresh directory.

Fences: ```python file=NAME / ```toml file=NAME are written to NAME; ```python runs in one
namespace; ```sh runs with bash -e (schedlab from this environment on PATH); `needs=batsim` /
`needs=pybatsim` blocks run only where real Batsim / pybatsim are installed (CI has both). A toml
block without a file name is a snippet for another project's file, not run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).resolve().parent.parent / "docs" / "writing-a-scheduler.md"
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, dict[str, str], str]]:
    found = []
    for language, info, body in FENCE.findall(TUTORIAL.read_text(encoding="utf-8")):
        found.append((language, dict(item.split("=", 1) for item in info.split()), body))
    return found


def batsim_bin() -> str | None:
    prefixes = [os.environ.get("SCHEDLAB_BATSIM_PREFIX"), str(Path.home() / ".cache/schedlab/batsim-4.2.1")]
    for prefix in filter(None, prefixes):
        if (Path(prefix) / "bin" / "batsim").exists():
            return str(Path(prefix) / "bin")
    found = shutil.which("batsim")
    return str(Path(found).parent) if found else None


def test_the_tutorial_has_the_blocks_it_promises():
    kinds = [(language, info.get("file"), info.get("needs")) for language, info, _ in blocks()]
    assert ("python", "sjf_aging.py", None) in kinds and ("toml", "compare.toml", None) in kinds
    assert ("sh", None, "batsim") in kinds and ("sh", None, "pybatsim") in kinds
    scheduler = next(body for language, info, body in blocks() if info.get("file") == "sjf_aging.py")
    assert 30 <= len(scheduler.strip().splitlines()) <= 60  # the 30-50 lines of scheduler, roughly


@pytest.mark.slow  # about 10 s: CI's second pass runs it (.ci/run), as `pytest -m slow tests/test_tutorial.py` does
def test_every_code_block_of_the_tutorial_runs(tmp_path, monkeypatch):
    bin_dir = Path(sys.executable).parent
    tools = {"batsim": batsim_bin(), "pybatsim": str(bin_dir) if (bin_dir / "pybatsim").exists() else None}
    path = os.pathsep.join(filter(None, [str(bin_dir), tools["batsim"], os.environ.get("PATH", "")]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict[str, object] = {"__name__": "tutorial"}
    ran, skipped, snippets = 0, [], 0
    try:
        for number, (language, info, body) in enumerate(blocks()):
            needs = info.get("needs")
            if needs is not None and (tools.get(needs) is None or (needs == "pybatsim" and tools["batsim"] is None)):
                skipped.append(needs)
                continue
            if "file" in info:
                (tmp_path / info["file"]).write_text(body, encoding="utf-8")
            elif language == "python":
                exec(compile(body, f"{TUTORIAL.name} block {number}", "exec"), namespace)
            elif language == "sh":
                done = subprocess.run(["bash", "-e", "-c", body], cwd=tmp_path, capture_output=True, text=True,
                                      timeout=300, env={**os.environ, "PATH": path})
                assert done.returncode == 0, f"block {number}:\n{body}\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
            else:
                snippets += 1  # a snippet of another project's file
                continue
            ran += 1
    finally:
        sys.modules.pop("sjf_aging", None)
    assert ran == len(blocks()) - len(skipped) - snippets and snippets == 1
    assert (tmp_path / "out/sjf/jobs.csv").read_text() == (tmp_path / "out/sjf-python/jobs.csv").read_text()
    assert (tmp_path / "out/compare/report/report.html").exists()
    if "batsim" not in skipped:
        batsim_rows = (tmp_path / "out/batsim/_jobs.csv").read_text().splitlines()
        assert len(batsim_rows) == 1001  # every job, under real Batsim
    if "pybatsim" not in skipped:
        assert len((tmp_path / "out/pybatsim/_jobs.csv").read_text().splitlines()) == 1001


def test_the_reference_section_is_what_the_code_says():
    """docs/writing-a-scheduler.md's reference is `schedlab scheduler reference`'s text: regenerate it
    (scripts/update-reference.sh) when hooks, states, Job fields, decisions or extension points change."""
    from schedlab.schedulers.reference import reference

    text = TUTORIAL.read_text(encoding="utf-8")
    written = text.split("<!-- reference: start -->\n")[1].split("<!-- reference: end -->")[0]
    assert written == reference()
