"""Fixed policies over schedlab's observation (schedulers/observation.py), for the tests: run as
`-s policy -O policy=tests/data/policies.py:NAME`, or steered through the Gymnasium environment."""

import numpy as np

from schedlab.schedulers.observation import JOB_FEATURES, REQUESTED


def shortest_requested(observation, mask):
    """The allowed job of smallest requested time (the first of equals); wait when none is allowed."""
    k = len(mask) - 1
    allowed = np.flatnonzero(mask[:k])
    if not len(allowed):
        return k
    requested = observation[:k * len(JOB_FEATURES)].reshape(k, len(JOB_FEATURES))[allowed, REQUESTED]
    return int(allowed[int(np.argmin(requested))])


def first_allowed(observation, mask):
    """The first allowed action (a job before waiting)."""
    return int(np.flatnonzero(mask)[0])


def head_or_wait(observation, mask):
    """The queue's head if allowed, else wait: FCFS without backfill, EASY with it."""
    return 0 if mask[0] else len(mask) - 1
