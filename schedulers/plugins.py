"""Schedulers from outside schedlab: plugins and `MODULE:CLASS`.

A package declares its schedulers as entry points of the group `schedlab.schedulers`
(`myq = "mypkg.sched:MyQueue"` in its pyproject.toml); once installed, `myq` is a scheduler name
everywhere a shipped one is (simulate, serve, campaigns, pybatsim entry files, `scheduler check`).
Entry points are read only when a name is not a shipped one (start-up stays light). A broken
plugin (it cannot be imported, is no Scheduler, or takes a shipped name) is recorded as one line
naming its package and never stops the other schedulers.

Without packaging, `MODULE:CLASS` names a class directly: an importable module (the working
directory included) or a `.py` file (`path/to/mine.py:MyQueue`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from schedlab.errors import InputError

ENTRY_POINT_GROUP = "schedlab.schedulers"
#: one line per plugin that could not be registered, by its name (listings show them)
PROBLEMS: dict[str, str] = {}
_read: set[str] = set()  # entry point names already tried


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def code_identity(cls: type) -> dict[str, str] | None:
    """What identifies the code of a scheduler that is not shipped: its module file's sha256 (and
    its package's version for a plugin), so a campaign reruns a run whose scheduler file changed;
    None for schedlab's own (its version identifies them). The files of the class and of its bases
    count, not other modules they import."""
    import inspect

    module = getattr(cls, "__module__", "")
    if module.startswith("schedlab."):
        return None
    identity = {"module": module}
    digest = hashlib.sha256()
    for klass in cls.__mro__:  # the class's file and those of its bases that are not schedlab's
        if klass.__module__.startswith(("schedlab.", "builtins")):
            continue
        try:
            source = inspect.getsourcefile(klass)
        except TypeError:
            continue
        if source and Path(source).is_file():
            digest.update(Path(source).read_bytes())
    identity["sha256"] = digest.hexdigest()
    for entry in _entry_points():
        if entry.value.split(":")[0] == module and getattr(entry, "dist", None) is not None:
            identity["package"] = f"{entry.dist.name} {entry.dist.version}"
    return identity


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _describe(entry: Any) -> str:
    dist = getattr(entry, "dist", None)
    package = f"{dist.name} {dist.version}" if dist is not None else "an unknown package"
    return f"plugin scheduler {entry.name!r} (package {package}, {entry.value})"


def _load(entry: Any) -> None:
    from schedlab.schedulers.interface import BUILTIN_MODULES, SCHEDULERS, Scheduler, register

    _read.add(entry.name)
    where = _describe(entry)
    if entry.name in BUILTIN_MODULES:
        PROBLEMS[entry.name] = f"{where}: the name of a shipped scheduler; ignored"
        return
    try:
        cls = entry.load()
    except (Exception, SystemExit) as exc:  # whatever a third-party import raises: said, never fatal
        PROBLEMS[entry.name] = f"{where}: cannot be loaded: {_one_line(exc)}"
        return
    if not (isinstance(cls, type) and issubclass(cls, Scheduler)):
        PROBLEMS[entry.name] = f"{where}: {entry.value} is not a subclass of schedlab.Scheduler"
        return
    if SCHEDULERS.get(entry.name) is cls:
        return  # its module registered it under this name already (@register)
    if entry.name in SCHEDULERS:
        PROBLEMS[entry.name] = f"{where}: the name is taken by {SCHEDULERS[entry.name].__module__}; ignored"
        return
    register(entry.name)(cls)


def load_plugin(name: str) -> None:
    """Register the plugin(s) called `name`, if any and not tried yet."""
    if name in _read:
        return
    for entry in _entry_points():
        if entry.name == name:
            _load(entry)
    _read.add(name)


def load_all_plugins() -> dict[str, str]:
    """Register every installed plugin; returns the problems (name -> one line)."""
    for entry in _entry_points():
        if entry.name not in _read:
            _load(entry)
    return PROBLEMS


def class_from_spec(spec: str) -> type:
    """The Scheduler subclass `MODULE:CLASS` names (InputError otherwise, one line)."""
    from schedlab.schedulers.interface import Scheduler

    cls = object_from_spec(spec, "scheduler", "CLASS")
    class_name = spec.rpartition(":")[2]
    if not (isinstance(cls, type) and issubclass(cls, Scheduler)):
        raise InputError(f"scheduler {spec!r}: {class_name} is not a subclass of schedlab.Scheduler")
    if "name" not in vars(cls):  # not registered itself: known by the spec (outputs, listings)
        cls.name = spec
    return cls


def object_from_spec(spec: str, what: str, kind: str = "NAME") -> Any:
    """What `MODULE:NAME` or `FILE.py:NAME` names (a user's scheduler class, a policy function);
    InputError otherwise, one line starting with `what`."""
    module_name, _, class_name = spec.rpartition(":")
    if not module_name or not class_name.isidentifier():
        raise InputError(f"{what} {spec!r}: expected {'a name, ' if what == 'scheduler' else ''}"
                         f"MODULE:{kind} or FILE.py:{kind}")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name).resolve()
            if not path.is_file():
                raise InputError(f"{what} {spec!r}: {module_name}: no such file")
            digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]  # hash() varies by process
            unique = f"schedlab_user_{path.stem}_{digest}"
            module = sys.modules.get(unique)
            if module is None:
                loader_spec = importlib.util.spec_from_file_location(unique, path)
                module = importlib.util.module_from_spec(loader_spec)  # type: ignore[arg-type]
                sys.modules[unique] = module
                try:
                    loader_spec.loader.exec_module(module)  # type: ignore[union-attr]
                except BaseException:
                    del sys.modules[unique]
                    raise
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:
                sys.path.append(os.getcwd())  # a module next to the user, as `python -m` would see it
            module = importlib.import_module(module_name)
    except InputError:
        raise
    except (Exception, SystemExit) as exc:  # whatever a user's module does on import, said in one line
        raise InputError(f"{what} {spec!r}: cannot import {module_name}: {_one_line(exc)}") from None
    found = getattr(module, class_name, None)
    if found is None:
        raise InputError(f"{what} {spec!r}: {module_name} has no {class_name}")
    return found
