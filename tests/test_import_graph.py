"""The house's floors (docs/design.md, "Floors"): a module never imports one of a higher floor, and
no module imports itself back through others (no import circle). Every import counts, those inside
functions too (they run all the same)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.data import REPO

#: import name -> folder (pyproject.toml's package-dir)
ROOTS = {"schedlab": "schedlab", "schedlab.schedulers": "schedulers", "schedlab.predictors": "predictors",
         "schedlab.workloads": "workloads", "schedlab.platforms": "platforms"}

#: lowest first; a module is on the floor of the longest prefix that names it
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("schedlab", "schedlab.errors", "schedlab.model", "schedlab.paths", "schedlab.resources",
              "schedlab.memory", "schedlab.parsing", "schedlab.host", "schedlab.interrupts",
              "schedlab.abilities")),
    ("formats", ("schedlab.protocol", "schedlab.workload", "schedlab.workload_columns", "schedlab.platform",
                 "schedlab.platforms")),
    ("data", ("schedlab.workloads", "schedlab.predictors", "schedlab.metrics")),
    ("schedulers", ("schedlab.schedulers",)),
    ("engine", ("schedlab.engine", "schedlab.outputs")),
    ("tools", ("schedlab.runs", "schedlab.checker", "schedlab.api", "schedlab.experiments", "schedlab.pybatsim_entry",
               "schedlab.rl")),
    ("command", ("schedlab.cli", "schedlab.__main__")),
]

KNOWN_CIRCLES: list[set[str]] = []  # every one removed (issue 39); the list stays empty


def _module_name(path: Path) -> str:
    best = max(((name, folder) for name, folder in ROOTS.items() if path.is_relative_to(REPO / folder)),
               key=lambda item: len(item[1]))
    parts = list(path.relative_to(REPO / best[1]).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([best[0], *parts])


def import_graph() -> dict[str, set[str]]:
    """Each module of ours -> the modules of ours it imports (`from P import M` counts as M when M
    is a module)."""
    files = {_module_name(path): path for folder in ROOTS.values() for path in (REPO / folder).rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    graph[name].add(target if target in files else node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(alias.name for alias in node.names)
        graph[name] = {target for target in graph[name] if target in files and target != name}
    return graph


def floor_of(module: str) -> int:
    best = max(((len(prefix), level) for level, (_, prefixes) in enumerate(FLOORS) for prefix in prefixes
                if module == prefix or module.startswith(prefix + ".")), default=None)
    assert best is not None, f"{module} is on no floor: add it to FLOORS and to docs/design.md's map"
    return best[1]


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_no_module_imports_a_higher_floor():
    graph = import_graph()
    upward = sorted(f"{module} ({FLOORS[floor_of(module)][0]}) imports {target} ({FLOORS[floor_of(target)][0]})"
                    for module, targets in graph.items() for target in targets if floor_of(target) > floor_of(module))
    assert upward == []


def test_no_new_import_circle():
    found = circles(import_graph())
    assert sorted(map(sorted, found)) == sorted(map(sorted, KNOWN_CIRCLES))


def test_the_circle_finder_finds_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_a_checkout_imports_as_the_package_it_installs_as(tmp_path):
    """`python -m schedlab` started in the checkout's root imports the checkout's schedlab/ first
    (the folder is put on sys.path); its subpackages, which pyproject maps from folders beside it,
    come from the checkout too. Run without site's .pth files, so an editable install's finder
    (which maps them wherever Python starts) is not there to hide a missing one."""
    import subprocess
    import sys
    import sysconfig

    code = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import schedlab.schedulers.easy, "
            "schedlab.workloads.slurm; print(schedlab.schedulers.easy.__file__, schedlab.workloads.slurm.__file__)")
    done = subprocess.run([sys.executable, "-S", "-c", code, str(REPO), sysconfig.get_paths()["purelib"]],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.split() == [str(REPO / "schedulers" / "easy.py"), str(REPO / "workloads" / "slurm.py")]
