"""Schedulers (decision processes), registered by name. Importing this package fills the registry."""

from schedlab.schedulers import diws, easy, easy_pp, fcfs, hybrid, plan_based  # noqa: F401  (registration side effect)
from schedlab.schedulers.base import SCHEDULERS, Scheduler, create_scheduler, register

__all__ = ["SCHEDULERS", "Scheduler", "create_scheduler", "register"]
