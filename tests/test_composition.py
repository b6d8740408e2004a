"""The house's second floor: schedulers compose strategies rather than inherit chains, and what hosts
a scheduler is typed (mypy checks the Protocols)."""

from __future__ import annotations

import ast

from schedlab.schedulers.base import Scheduler, all_schedulers
from tests.helpers.data import REPO


def depth(cls: type) -> int:
    """Levels below Scheduler: the longest chain of Scheduler subclasses among its bases."""
    if cls is Scheduler:
        return 0
    return 1 + max(depth(base) for base in cls.__bases__ if issubclass(base, Scheduler))


def test_no_shipped_scheduler_is_more_than_three_levels_below_scheduler():
    depths = {name: depth(cls) for name, cls in all_schedulers(plugins=False).items()}
    assert {name: d for name, d in depths.items() if d > 3} == {}
    assert depths["easy-prob"] == depths["diws"] == depths["easy-pp"] == 3  # EASY composing their strategies


def test_the_depth_measure_counts_chains_not_mixins():
    class Mixin:
        pass

    class A(Scheduler):
        pass

    class B(Mixin, A):
        pass

    assert (depth(A), depth(B)) == (1, 2)


def test_no_scheduler_is_typed_any():
    """A parameter or attribute named `scheduler` is typed (a Protocol of schedlab.host, a class), so
    mypy checks what is asked of it."""
    found = []
    for path in (REPO / "schedlab").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = (node.arg if isinstance(node, ast.arg) else
                     node.target.id if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) else None)
            annotation = node.annotation if isinstance(node, ast.arg | ast.AnnAssign) else None
            if named == "scheduler" and isinstance(annotation, ast.Name) and annotation.id == "Any":
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


def test_the_reservation_rule_is_composed_not_a_class_made_at_creation():
    from schedlab.schedulers.base import create_scheduler
    from schedlab.schedulers.easy import EasyBackfilling
    from schedlab.schedulers.easy_machines import MachineReservation

    easy = create_scheduler("easy", {"reservation": "machines"})
    assert type(easy) is EasyBackfilling and isinstance(easy._machines, MachineReservation)
    assert create_scheduler("easy")._machines is None
    assert "__new__" not in vars(EasyBackfilling)


def test_no_scheduler_or_engine_is_probed_outside_the_abilities_registry():
    """`getattr`/`hasattr` on an object named like a scheduler or an engine appears only in
    schedlab/abilities.py: an optional ability is declared there, once."""
    found = []
    for folder in ("schedlab", "schedulers"):
        for path in (REPO / folder).rglob("*.py"):
            if path == REPO / "schedlab" / "abilities.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in ("getattr", "hasattr") and node.args):
                    target = ast.unparse(node.args[0])
                    if "scheduler" in target or "engine" in target:
                        found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
