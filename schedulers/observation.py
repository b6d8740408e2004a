"""What a learned scheduler sees at a decision: the observation's layout, one vector of numbers.

Built only from what the scheduler was told (submissions, starts, ends): a job's run time is never
in it (its requested time, a prediction made at submission and its user's past run times are). The
layout is documented feature by feature (`ObservationLayout.names`), so a policy trained on it can
be read, ported and checked; docs/design.md sets it beside RLScheduler's and GridGym's.

    [ job 0: JOB_FEATURES ] ... [ job K-1: JOB_FEATURES ]   the first K waiting jobs, in queue order
    [ free_now, free_at_<h> for each horizon, queued_jobs, running_jobs ]   the machine
    [ day_sin, day_cos ]                                     the time of day

Times are seconds / `time_scale_s`, resources a share of the platform, counts as they are; absent
jobs (a queue shorter than K) are rows of zeros.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: per waiting job: 1 for a job (0: padding); time waited; requested resources; requested time
#: (walltime); the prediction made at submission (model=, else the requested time); the mean of the
#: user's last two run times (jobs that ended; the requested time until one ended); the user's
#: running jobs; 1 if it fits in the free resources now
JOB_FEATURES = ("present", "wait", "res", "requested_time", "prediction", "user_last2_runtime",
                "user_running_jobs", "fits_now")
PRESENT, WAIT, RES, REQUESTED, PREDICTION, USER_LAST2, USER_RUNNING, FITS = range(len(JOB_FEATURES))
DAY_S = 86400.0
#: the upper bound of the features with no natural one (times, counts): finite, as Gymnasium advises
UNBOUNDED = 1e9


@dataclass(frozen=True)
class ObservationLayout:
    """The observation's shape: `max_queue` jobs (K), the availability profile's horizons."""

    max_queue: int = 32
    horizons_s: tuple[float, ...] = (600.0, 3600.0, 14400.0, 86400.0)
    time_scale_s: float = 3600.0

    def __post_init__(self) -> None:
        if self.max_queue < 1:
            raise ValueError(f"max_queue must be >= 1, got {self.max_queue}")
        if not (self.time_scale_s > 0 and math.isfinite(self.time_scale_s)):
            raise ValueError(f"time_scale_s must be a number > 0, got {self.time_scale_s}")
        if any(not (h > 0 and math.isfinite(h)) for h in self.horizons_s) or list(self.horizons_s) != sorted(
                set(self.horizons_s)):
            raise ValueError(f"horizons must be increasing numbers of seconds > 0, got {self.horizons_s}")

    @property
    def nb_job_features(self) -> int:
        return len(JOB_FEATURES)

    @property
    def machine_start(self) -> int:
        return self.max_queue * len(JOB_FEATURES)

    @property
    def size(self) -> int:
        return self.machine_start + 1 + len(self.horizons_s) + 2 + 2

    def names(self) -> list[str]:
        """Each number's name, in order (`job3.wait`, `free_at_3600s`, ...)."""
        jobs = [f"job{i}.{feature}" for i in range(self.max_queue) for feature in JOB_FEATURES]
        machine = ["free_now", *(f"free_at_{h:g}s" for h in self.horizons_s), "queued_jobs", "running_jobs"]
        return [*jobs, *machine, "day_sin", "day_cos"]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Each number's (low, high): the Box of the environment's observation space."""
        low = np.zeros(self.size, np.float32)
        high = np.full(self.size, UNBOUNDED, np.float32)
        jobs = high[:self.machine_start].reshape(self.max_queue, len(JOB_FEATURES))
        jobs[:, PRESENT] = jobs[:, FITS] = jobs[:, RES] = 1.0
        high[self.machine_start:self.machine_start + 1 + len(self.horizons_s)] = 1.0
        low[-2:] = -1.0
        high[-2:] = 1.0
        return low, high

    def as_dict(self) -> dict[str, object]:
        return {"max_queue": self.max_queue, "horizons_s": list(self.horizons_s), "time_scale_s": self.time_scale_s}


def parse_horizons(text: str) -> tuple[float, ...]:
    """"600,3600" -> (600.0, 3600.0) (a scheduler option's text form)."""
    try:
        return tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"horizons_s: expected seconds separated by commas, got {text!r}") from None


class JobTable:
    """Each waiting or running job's numbers, by slot, in growable arrays: an observation gathers
    the visible jobs' rows with one index array instead of a loop per feature. Values are stored as
    the observation gives them (time features / `time_scale_s`, resources as a share). An ended
    job's slot is given to a later job, so the table holds the live jobs, not the trace."""

    #: columns of `rows`: present (1), res share, requested time, prediction, submit time (seconds)
    COLUMNS = (PRESENT, RES, REQUESTED, PREDICTION)

    def __init__(self, nb_resources: int, time_scale_s: float) -> None:
        self.nb_resources, self.time_scale_s = max(nb_resources, 1), time_scale_s
        self.size = 0
        self.rows = np.zeros((64, 4))
        self.submit_s = np.zeros(64)
        self.user = np.zeros(64, np.int64)
        self.slot: dict[str, int] = {}
        self.free_slots: list[int] = []  # the slots of ended jobs
        # per user (index 0: jobs without a user): the last two run times, their mean scaled (NaN
        # until one ended), the running jobs
        self.users: dict[object, int] = {None: 0}
        self.last_runs: list[list[float]] = [[]]
        self.user_mean = np.full(8, np.nan)
        self.running = np.zeros(8)

    def add(self, job_id: str, submit_s: float, res: int, requested_s: float, prediction_s: float,
            user: object) -> None:
        if self.free_slots:
            self._fill(self.free_slots.pop(), job_id, submit_s, res, requested_s, prediction_s, user)
            return
        if self.size == len(self.submit_s):
            self.rows = np.concatenate([self.rows, np.zeros_like(self.rows)])
            self.submit_s = np.concatenate([self.submit_s, np.zeros_like(self.submit_s)])
            self.user = np.concatenate([self.user, np.zeros_like(self.user)])
        self._fill(self.size, job_id, submit_s, res, requested_s, prediction_s, user)
        self.size += 1

    def _fill(self, slot: int, job_id: str, submit_s: float, res: int, requested_s: float, prediction_s: float,
              user: object) -> None:
        index = self.users.get(user)
        if index is None:
            index = self.users[user] = len(self.users)
            self.last_runs.append([])
            if index == len(self.running):
                self.user_mean = np.concatenate([self.user_mean, np.full_like(self.user_mean, np.nan)])
                self.running = np.concatenate([self.running, np.zeros_like(self.running)])
        self.slot[job_id] = slot
        scale = self.time_scale_s
        # no walltime (Batsim's -1) is an infinite request: shown as the bound, inside the Box
        self.rows[slot] = (1.0, res / self.nb_resources, min(requested_s / scale, UNBOUNDED),
                           min(prediction_s / scale, UNBOUNDED))
        self.submit_s[slot], self.user[slot] = submit_s, index

    def started(self, job_id: str) -> None:
        self.running[self.user[self.slot[job_id]]] += 1

    def ended(self, job_id: str, runtime_s: float) -> None:
        """A job ended after `runtime_s` (told at its end, the only moment it is known)."""
        slot = self.slot.pop(job_id)
        self.free_slots.append(slot)
        user = int(self.user[slot])
        self.running[user] -= 1
        runs = self.last_runs[user]
        runs.append(runtime_s)
        if len(runs) > 2:
            del runs[0]
        self.user_mean[user] = min(sum(runs) / len(runs) / self.time_scale_s, UNBOUNDED)
