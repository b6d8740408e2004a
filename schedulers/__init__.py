"""Schedulers (decision processes), registered by name. Modules load on demand: `create_scheduler`
imports the one asked for, `all_schedulers()` every shipped one."""

from schedlab.schedulers.base import SCHEDULERS, Scheduler, all_schedulers, create_scheduler, register

__all__ = ["SCHEDULERS", "Scheduler", "all_schedulers", "create_scheduler", "register"]
