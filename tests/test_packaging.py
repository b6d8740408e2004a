"""What a user installs: every subpackage of the source folders is in pyproject.toml's list, and the
wheel built from the checkout holds every module, each importable from it alone."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile

from tests.helpers.data import REPO


def _pyproject() -> tuple[dict[str, str], list[str]]:
    setup = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    return setup["package-dir"], setup["packages"]


def source_modules(*, packages_only: bool = False) -> set[str]:
    """Every module (or package) of the source folders, by import name (package-dir maps folders
    to names)."""
    package_dir, _ = _pyproject()
    modules = set()
    for name, folder in package_dir.items():
        root = REPO / folder
        nested = [REPO / other for other in package_dir.values() if other != folder and other.startswith(folder + "/")]
        for path in root.rglob("*.py"):
            if "__pycache__" in path.parts or any(path.is_relative_to(n) for n in nested):
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            elif packages_only:
                continue
            modules.add(".".join([name, *parts]))
    return modules


def test_every_subpackage_of_the_source_folders_is_listed():
    _, listed = _pyproject()
    packages = source_modules(packages_only=True)
    assert sorted(packages - set(listed)) == [], "add them to [tool.setuptools] packages in pyproject.toml"
    assert sorted(set(listed) - packages) == []


def test_the_wheel_holds_every_module_and_each_imports_from_it(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "--no-index", "-w", str(tmp_path / "dist"), str(REPO)], capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("schedlab-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
        names = [n for n in archive.namelist() if n.endswith(".py")]
    in_wheel = {n[:-3].replace("/", ".").removesuffix(".__init__") for n in names}
    assert sorted(source_modules() - in_wheel) == []
    assert list((site / "schedlab" / "platforms").glob("*.xml")), "the shipped platforms' XML"
    # pybatsim (top-level `batsim`) is optional: its entry files import it, and are what it loads
    script = ("import importlib, sys\n"
              "for name in sys.argv[1:]:\n"
              "    try:\n"
              "        module = importlib.import_module(name)\n"
              "    except ModuleNotFoundError as error:\n"
              "        if error.name != 'batsim' or not name.startswith('schedlab.pybatsim_entry'):\n"
              "            raise\n"
              "        continue\n"
              f"    assert module.__file__.startswith({str(site)!r}), (name, module.__file__)\n")
    importable = sorted(name for name in in_wheel if not name.endswith("__main__"))  # __main__ runs the CLI
    done = subprocess.run([sys.executable, "-P", "-c", script, *importable], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin",
                                             "HOME": str(tmp_path)}, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
