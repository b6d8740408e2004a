"""The open-ended axes are registries: a shipped name lives where it is registered, and hand-kept
lists that follow from a registry fail here when they drift."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import tomllib

from tests.helpers.data import REPO


def _string_constants(path) -> set[str]:
    return {node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def test_the_shipped_scheduler_modules_table_is_what_the_modules_register():
    import schedlab.schedulers as package
    from schedlab.schedulers.interface import BUILTIN_MODULES, SCHEDULERS

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    registered = {name: cls.__module__.rpartition(".")[2] for name, cls in SCHEDULERS.items()
                  if cls.__module__.startswith("schedlab.schedulers.")}
    assert registered == BUILTIN_MODULES


def test_each_pybatsim_entry_file_names_a_shipped_scheduler():
    from schedlab.schedulers.interface import BUILTIN_MODULES

    entries = sorted((REPO / "schedlab" / "pybatsim_entry").glob("schedlab*.py"))
    assert entries
    for path in entries:
        (name,) = re.findall(r'pybatsim_scheduler\("([^"]+)"', path.read_text())
        assert name in BUILTIN_MODULES, path.name


def test_study_kinds_are_named_only_in_their_own_modules():
    """The command line, the report and the table of record reach a kind through the registry: no
    other module of the package holds its `kind` or its record file's name."""
    from schedlab.experiments.campaigns.kinds import all_study_kinds

    kinds = all_study_kinds()
    assert set(kinds) == {"policy-factory", "predictor-study", "hybrid-reliability"}
    own = {type(kind).__module__ for kind in kinds.values()}
    names = {text for kind in kinds.values() for text in (kind.kind, kind.record)}
    mentions = {}
    for folder in ("schedlab", "schedulers", "predictors", "workloads", "platforms"):
        for path in (REPO / folder).rglob("*.py"):
            module = ".".join(["schedlab", *path.relative_to(REPO / "schedlab" if folder == "schedlab" else REPO)
                               .with_suffix("").parts])
            if module in own:
                continue
            found = names & _string_constants(path)
            if found:
                mentions[str(path.relative_to(REPO))] = sorted(found)
    assert mentions == {}


def test_every_shipped_study_file_declares_a_registered_kind_or_none():
    from schedlab.experiments.campaigns.kinds import all_study_kinds

    kinds = all_study_kinds()
    declared = set()
    for path in (REPO / "experiments").rglob("*.toml"):
        kind = tomllib.loads(path.read_text(encoding="utf-8")).get("kind")
        if kind is not None:
            assert kind in kinds, path
            declared.add(kind)
    assert declared == set(kinds)  # each kind has a study of record


def _compared_constants(path) -> list[tuple[int, str]]:
    """(line, text) of every string constant in a comparison (`x == "a"`, `x in ("a", "b")`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            found += [(node.lineno, n.value) for n in ast.walk(node)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return found


def test_trace_formats_are_compared_only_by_their_readers():
    """Campaigns, studies and the command line reach a trace format through workloads/formats.py:
    no comparison with a format's key outside `workloads/`."""
    from schedlab.workloads.formats import all_trace_formats

    keys = set(all_trace_formats())
    assert keys == {"swf", "table"}
    # "table" also names a predictor study's tables: the campaign framework and the command line hold
    # neither key, and no module outside workloads/ compares with "swf"
    framework = [*(REPO / "schedlab" / "experiments" / "campaigns").glob("*.py"),
                 *(REPO / "schedlab" / "cli").glob("*.py")]
    found = {f"{path.relative_to(REPO)}:{line}": text for path in framework for line, text in _compared_constants(path)
             if text in keys}
    found |= {f"{path.relative_to(REPO)}:{line}": text for folder in ("schedlab", "schedulers", "predictors")
              for path in (REPO / folder).rglob("*.py") for line, text in _compared_constants(path) if text == "swf"}
    assert found == {}


def test_the_subcommands_of_workload_follow_the_trace_formats():
    from schedlab.cli.main import build_parser
    from schedlab.workloads.formats import all_trace_formats

    parser = build_parser()
    commands = {fmt.command for fmt in all_trace_formats().values()}
    assert commands == {"from-swf", "from-table"}
    for command in commands:
        assert parser.parse_args(["workload", command, "x", "-o", "y.json"]).func.__name__ == "cmd_workload_from_trace"


def test_model_kinds_are_the_only_list_of_models():
    """`predictor train --model`, predictor studies and the checks read the registry; predictors/
    holds no comparison with a model's name (each model's code is where it registers)."""
    from schedlab.predictors.models import MODEL_KINDS
    from schedlab.predictors.runtime import BASELINES, MODELS
    from schedlab.predictors.training import ALL_MODELS

    assert list(ALL_MODELS) == ["dt", "rf", "gb", "gb-xgb", "adaboost", "nn", "walltime", "user-last2",
                                "quantile-xgb", "aft", "aft-naive"]
    assert list(MODELS) == [n for n, k in MODEL_KINDS.items() if k.family != "distribution"]
    assert set(BASELINES) == {n for n, k in MODEL_KINDS.items() if k.family == "baseline"}
    other_meanings = {"walltime", "dt", "aft"}  # a correction, a reliability model, a censoring mode
    found = {f"{path.relative_to(REPO)}:{line}": text for path in (REPO / "predictors").rglob("*.py")
             for line, text in _compared_constants(path) if text in set(MODEL_KINDS) - other_meanings}
    assert found == {}


def test_the_learners_diws_takes_are_the_registered_models_and_the_oracle():
    import typing

    from schedlab.predictors.training import ALL_MODELS
    from schedlab.schedulers.diws import Learner

    assert sorted(typing.get_args(Learner)) == sorted([*ALL_MODELS, "exact"])
