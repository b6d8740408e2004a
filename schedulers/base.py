"""Schedulers by name and by options: the lookup of a name (shipped, registered, plugin or
MODULE:CLASS), the conversion of command-line options to the types `__init__` declares, and
creation. The interface itself and the name table are in `interface.py` (re-exported here)."""

from __future__ import annotations

import contextlib
import math
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schedlab.errors import InputError, SchedlabError, SchedulerFailure
from schedlab.schedulers.interface import (
    BUILTIN_MODULES,
    SCHEDULERS,
    Scheduler,
    inert_options_of,
    keyword_options,
    merged_class_dict,
    register,
)

__all__ = ["BUILTIN_MODULES", "SCHEDULERS", "Scheduler", "all_schedulers", "create_scheduler", "option_named",
           "parse_options", "raised_by", "register", "scheduler_class", "scheduler_option_specs",
           "scheduler_option_types"]


def all_schedulers(*, plugins: bool = True) -> dict[str, type[Scheduler]]:
    """The registry with every shipped scheduler loaded (listings, tests), and every installed
    plugin's unless `plugins=False` (broken ones: `schedulers.plugins.PROBLEMS`)."""
    import importlib

    for module in sorted(set(BUILTIN_MODULES.values())):
        importlib.import_module(f"schedlab.schedulers.{module}")
    if plugins:
        from schedlab.schedulers.plugins import load_all_plugins

        load_all_plugins()
    return SCHEDULERS


def bytes_per_resource(name: str) -> int:
    """A scheduler's peak memory per resource (`Scheduler.bytes_per_resource`), or the default's
    when the name cannot be looked up here (an unknown or failing scheduler is said where it is made)."""
    try:
        return int(scheduler_class(name).bytes_per_resource)
    except Exception:
        return int(Scheduler.bytes_per_resource)


def scheduler_class(name: str) -> type[Scheduler]:
    """The class a scheduler name gives: shipped (its module imported on demand), registered,
    an installed plugin's (entry point group `schedlab.schedulers`) or `MODULE:CLASS`."""
    import importlib

    if name not in SCHEDULERS and name in BUILTIN_MODULES:
        importlib.import_module(f"schedlab.schedulers.{BUILTIN_MODULES[name]}")
    if name in SCHEDULERS:
        return SCHEDULERS[name]
    from schedlab.schedulers import plugins

    if ":" in name:
        return plugins.class_from_spec(name)
    plugins.load_plugin(name)
    if name in SCHEDULERS:
        return SCHEDULERS[name]
    if name in plugins.PROBLEMS:
        raise InputError(plugins.PROBLEMS[name])
    known = ", ".join(sorted(all_schedulers()))
    raise InputError(f"unknown scheduler {name!r} (known: {known}; or MODULE:CLASS)")


def _coerce(text: str, annotation: Any) -> Any:
    """Turn a command-line `k=v` value into the type the scheduler's __init__ declares."""
    if annotation is bool:
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"expected true/false, got {text!r}")
    if annotation in (int, float):
        value = annotation(text)
        if not math.isfinite(value):
            raise ValueError(f"expected a finite number, got {text!r}")
        return value
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        choices = typing.get_args(annotation)
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(map(str, choices))}, got {text!r}")
        return text
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if type(None) in typing.get_args(annotation) and text.lower() in ("none", "null", ""):
            return None  # before `str`, which would take the word itself
        for arg in typing.get_args(annotation):
            if arg is type(None):
                continue
            try:
                return _coerce(text, arg)
            except ValueError:
                continue
        raise ValueError(f"cannot read {text!r} as {annotation}")
    return text


def scheduler_option_types(cls: type[Scheduler]) -> dict[str, Any]:
    """Keyword options of a scheduler class with their types: annotated, else the default's
    (bool, int, float; `str | None` for a None default, so `none` gives None), else str."""
    hints = typing.get_type_hints(cls.__init__)
    return {name: hints.get(name, _default_type(p.default)) for name, p in keyword_options(cls).items()}


def _default_type(default: Any) -> Any:
    if default is None:
        return str | None
    if isinstance(default, bool | int | float):
        return type(default)
    return str


def create_scheduler(scheduler: str | type[Scheduler], options: Mapping[str, Any] | None = None) -> Scheduler:
    """Instantiate a scheduler by name (`scheduler_class`) or from its class (a Scheduler subclass,
    e.g. a user's own); string option values are converted to declared types, unknown and inert
    options refused (InputError)."""
    if isinstance(scheduler, type):
        if not issubclass(scheduler, Scheduler):
            raise TypeError(f"{scheduler.__name__} is not a schedlab Scheduler subclass")
        return _create(scheduler, vars(scheduler).get("name") or scheduler.__name__, options)
    return _create(scheduler_class(scheduler), scheduler, options)


def _create(cls: type[Scheduler], name: str, options: Mapping[str, Any] | None) -> Scheduler:
    types = scheduler_option_types(cls)
    kwargs: dict[str, Any] = {}
    for key, value in (options or {}).items():
        if key not in types:
            known = ", ".join(sorted(types)) or "none"
            raise InputError(f"unknown option {key!r} for scheduler {name!r} (known: {known})")
        try:
            kwargs[key] = _coerce(value, types[key]) if isinstance(value, str) else value
        except ValueError as exc:
            raise InputError(f"bad value for option {key!r} of scheduler {name!r}: {exc}") from None
    for key, (given, when) in inert_options_of(cls, kwargs).items():
        raise InputError(f"option {key}={kwargs[key]} has no effect with {given} (it acts only {when}); "
                         "drop one of them")
    try:
        with raised_by(cls, name, "__init__"):
            made = cls(**kwargs)
    except (ValueError, TypeError) as exc:
        raise InputError(f"bad options for scheduler {name!r}: {exc}") from None
    except InputError as exc:  # a file an option names (loaded at creation)
        raise option_named(exc, kwargs) from None
    declared = keyword_options(cls)
    for key, missing in cls.required_options.items():  # given, or a default other than ""
        value = kwargs.get(key, declared[key].default if key in declared else "")
        if isinstance(value, str) and not value:
            raise InputError(f"bad options for scheduler {name!r}: {missing}")
    return made


@contextlib.contextmanager
def raised_by(cls: type, name: str, where: str, *, bad_options: bool = True) -> Iterator[None]:
    """A user's scheduler's code (`where`: __init__, prepare, check_inputs) raising anything but our
    errors is that scheduler's failure (SchedulerFailure: exit 1, "scheduler X raised ... in
    __init__"), not a bug of schedlab's; `bad_options`: ValueError and TypeError pass through (in
    __init__ they are bad options). Ours raising stays a bug."""
    passing: tuple[type[BaseException], ...] = (SchedlabError, KeyboardInterrupt)
    if bad_options:
        passing += (ValueError, TypeError)
    try:
        yield
    except passing:
        raise
    except Exception as exc:
        if cls.__module__.startswith("schedlab."):
            raise
        failure = SchedulerFailure(f"scheduler {name!r} raised {type(exc).__name__}: {exc} in {where}")
        failure.scheduler_module, failure.names_its_scheduler = cls.__module__, True
        raise failure from exc


def inert_options(name: str, options: Mapping[str, Any]) -> set[str]:
    """The options of `options` that scheduler `name` would ignore with the others given (campaign
    grids drop them from such combinations); empty for an unknown name (said elsewhere)."""
    try:
        cls = scheduler_class(name)
    except InputError:
        return set()
    return set(inert_options_of(cls, options))


def option_named(error: InputError, options: Mapping[str, Any]) -> InputError:
    """An error in a file an option names, said with the option: `-O model=M.skops: no such file`."""
    path = getattr(error, "path", None)
    text = str(error)
    for key, value in options.items():
        if path and isinstance(value, str) and value.endswith(str(path)) and text.startswith(str(path)):
            named = InputError(f"-O {key}={value}{text[len(str(path)):]}")
            named.path, named.line = error.path, error.line
            return named
    return error


def parse_options(pairs: Sequence[str]) -> dict[str, str]:
    """`["k=v", ...]` from the command line -> dict (values stay strings until coerced). A key given
    twice is an error: which one was meant cannot be guessed."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"bad option {pair!r}: expected key=value")
        if key in options:
            raise InputError(f"option {key!r} given twice ({key}={options[key]} and {key}={value.strip()})")
        options[key] = value.strip()
    return options


@dataclass(frozen=True)
class OptionSpec:
    name: str
    choices: str  # what values it takes, for listings
    default: Any
    help: str = ""  # what it does, one sentence


def _choices_text(name: str, annotation: Any) -> str:
    if typing.get_origin(annotation) is typing.Literal:
        return " | ".join(map(str, typing.get_args(annotation)))
    if annotation is bool:
        return "true | false"
    if name == "queue_order":
        return "a queue policy (listed below)"
    return getattr(annotation, "__name__", str(annotation))


def scheduler_option_specs(cls: type[Scheduler]) -> list[OptionSpec]:
    """Each keyword option of a scheduler: its name, accepted values, default and sentence."""
    params = keyword_options(cls)
    told = merged_class_dict(cls, "option_choices")  # what a type cannot say (e.g. "default:SECONDS")
    helps = merged_class_dict(cls, "option_help")
    return [OptionSpec(name, told.get(name) or _choices_text(name, annotation), params[name].default,
                       helps.get(name, ""))
            for name, annotation in scheduler_option_types(cls).items()]
