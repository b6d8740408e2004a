"""The hybrid plan/backfill scheduler (Naghshnejad & Singhal 2019), driven by prediction reliability.

Each job gets an online runtime prediction p^ at submission (runtimes.py; `runtime=` may replace it
by exact or perturbed run times) and, from a reliability model (predictors/reliability.py) retrained
every `retrain` seconds of simulated time on all completed jobs, an estimated accuracy; it is
**predictable** iff that estimate is >= `threshold`. Before the first model (the first retrain with
at least 5 completed jobs) every job is unpredictable. At each decision (submissions, completions, kills):

1. the predictable queue is planned with online-SVF (ascending p^ x cores, ties by submit time then
   submission order): each job gets the earliest slot of duration p^ in a profile where planned jobs
   never use more than floor(alpha m) cores at once; those planned for now start;
2. FCFS with EASY backfilling runs the unpredictable queue with **requested times**, on any core not
   used or reserved by step 1 (idle cores of the alpha share included): the head starts if it fits
   now, else gets a reservation at its earliest slot; later jobs start now if they fit around every
   reservation (tried in queue order, or shortest request first with `step2_order=sjbf`). So a
   backfilled job never delays a planned job or the head's reservation.

With `share_mode=soft` (ours; the study leaves the share's enforcement open, its section 8), a
third step lends the cores still idle after both steps to waiting predictable jobs, in online-SVF
order, each started only if it fits now for its requested time around every reservation (as a
backfilled job: it delays no planned job and no head) and counted outside the share. The default
`strict` keeps planned jobs within floor(alpha m) cores even when the rest idles.

A predictable job larger than floor(alpha m) is run by step 2. Once a job is the unpredictable head,
its reservation is made from the running jobs alone before step 1 at every later decision
(`protect_head`, default; EASY's rule), so planned jobs go around it instead of pushing it back. A
running planned job past p^ is replanned to its requested end (runtimes.py). Retraining is lazy but
exact: the first decision at or after a boundary b = t0 + k retrain trains on the completions at or
before b (a model trained at b would have seen exactly those); while jobs wait and alpha may change,
a CALL_ME_LATER at the next boundary lets a new share be used at once.

alpha (`alpha_rule`), updated at each retrain from the jobs submitted during the last `retrain`
seconds, re-classified by the new model: ratio = cores requested by predictable jobs / all cores
requested; `ema` (default): alpha <- (alpha + ratio) / 2; `paper`: alpha <- alpha x ratio (the
study's Eq. 1, which can only shrink alpha); `fixed`: alpha stays alpha0. Always clamped to
[0.1, 0.9]; no submission in the window: unchanged.

The reliability model (`reliability`) is by default the study's stochastic gradient boosting fitted
by xgboost's hist (`gbt-hist`, 100 depth-3 trees, 80% of the rows each; `gbt` is the same model in
scikit-learn, 10-20x slower to retrain). `train_last=N` retrains on the last N completions only (not
the study's rule: it keeps a retrain's cost flat on long traces).
"""

from __future__ import annotations

import itertools
import math
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

import numpy as np

from schedlab.model import Decision, Execute, Job, Platform
from schedlab.schedulers.base import register
from schedlab.schedulers.hybrid_queue import QueueSplit
from schedlab.schedulers.plan_based import PlanBased
from schedlab.schedulers.profile import AvailabilityProfile
from schedlab.schedulers.queue import Entry, calls_first
from schedlab.schedulers.runtimes import with_runtime_options

ALPHA_MIN, ALPHA_MAX = 0.1, 0.9


@register("hybrid")
class Hybrid(PlanBased):
    """Predictable jobs planned (online-SVF on an alpha share), the others EASY-backfilled."""

    per_job_records: ClassVar[tuple[str, ...]] = ("estimated_accuracy", "predictable")
    relative_cost: ClassVar[float] = 8.0  # Lublin 10,000 jobs, 256 resources: 3.8 s against EASY's 0.45 s

    option_choices = {"retrain": "SECONDS > 0", "alpha0": "0.1 .. 0.9", "threshold": "0 .. 1",
                      "train_last": "0 | JOBS >= 5"}
    option_help = {
        "alpha0": "the share of the machine planned jobs start with (at most floor(alpha m) cores at once)",
        "threshold": "a job is predictable iff its estimated prediction accuracy is at least this",
        "retrain": "simulated seconds between reliability retrains (alpha is updated at each)",
        "alpha_rule": "how alpha follows the predictable jobs' share of requested core-time: the mean of the "
                      "two (ema, ours), alpha x ratio (paper, the study's Eq. 1, which only shrinks), or fixed",
        "reliability": "the model that estimates each prediction's accuracy: stochastic gradient-boosted "
                       "depth-3 trees fitted by xgboost's hist (gbt-hist) or by scikit-learn on 64 "
                       "quantile bins (gbt, slower), xgboost with its defaults (gbt-xgb), or a decision tree",
        "protect_head": "an unpredictable head keeps its reservation against planned jobs (EASY's rule)",
        "step2_order": "the order step 2 tries backfilling candidates in: queue order, or shortest requested "
                       "time first (as the study's FCFS-BF1 baseline)",
        "share_mode": "strict: planned jobs never use more than floor(alpha m) cores; soft (ours): cores idle "
                      "after both steps are lent to waiting predictable jobs, backfilled with their requested times",
        "train_last": "each retrain learns from the last N completed jobs only (0: all of them, the study's rule; "
                      "a bound keeps retrains' cost flat on long traces)",
        "seed": "the seed of the reliability model's fits and of perturbed:A's coin"}
    #: no model from fewer completed jobs (80% row subsampling needs a few rows to leave out)
    MIN_TRAINING_ROWS = 5
    #: True: split the queue anew and walk all of step 2's entries at every decision (the reference
    #: the tests compare the kept split and its shape-by-shape search to: the same schedule)
    walks_whole_queue = False

    @with_runtime_options
    def __init__(self, *, alpha0: float = 0.6, threshold: float = 0.6, retrain: float = 86400.0,
                 alpha_rule: Literal["ema", "paper", "fixed"] = "ema",
                 reliability: Literal["gbt-hist", "gbt", "gbt-xgb", "dt"] = "gbt-hist", protect_head: bool = True,
                 step2_order: Literal["fcfs", "sjbf"] = "fcfs", train_last: int = 0,
                 share_mode: Literal["strict", "soft"] = "strict", **runtime: Any) -> None:
        super().__init__(queue_order="fcfs", **runtime)
        if not ALPHA_MIN <= alpha0 <= ALPHA_MAX:
            raise ValueError(f"alpha0 must be in [{ALPHA_MIN}, {ALPHA_MAX}], got {alpha0}")
        if not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be in [0, 1], got {threshold}")
        if not (retrain > 0 and math.isfinite(retrain)):
            raise ValueError(f"retrain must be a positive number of seconds, got {retrain}")
        if train_last < 0 or 0 < train_last < self.MIN_TRAINING_ROWS:
            raise ValueError(f"train_last must be 0 (all) or at least {self.MIN_TRAINING_ROWS} jobs, got {train_last}")
        self.step2_order, self.train_last, self.share_mode = step2_order, int(train_last), share_mode
        self.alpha0, self.threshold, self.retrain = float(alpha0), float(threshold), float(retrain)
        self.alpha_rule, self.reliability, self.protect_head = alpha_rule, reliability, protect_head
        self._head: tuple[str, float] | None = None  # the unpredictable head and its reservation
        self.alpha = self.alpha0
        self._model: Any = None
        self._next_boundary_s = math.inf
        self._trained_rows = -1  # training rows the current model saw
        # completed jobs in completion order: reliability rows and accuracies (the first
        # `_completed` rows of buffers that double when full: a retrain reads a view, not a copy
        # of Python lists) and ends
        self._completed_count = 0
        self._completed_rows = np.zeros((0, 0))
        self._completed_accuracy = np.zeros(0)
        self._completed_end_s: list[float] = []
        self._dropped = 0  # completions forgotten (train_last: never learned again)
        self._window: deque[tuple[float, int, list[float]]] = deque()  # (submit, res, reliability row)
        self._reliability_rows: dict[str, list[float]] = {}
        #: estimated accuracy of each job (NaN before the first model) and its class, at submission
        self.estimated_accuracy: dict[str, float] = {}
        self.predictable: dict[str, bool] = {}
        self.nb_classified = self.nb_classified_predictable = 0  # what the report says: counted, not kept
        self._planned: set[str] = set()  # running jobs started by step 1 (they count in the share)
        self._split: QueueSplit | None = None  # the queue as the two steps take it (hybrid_queue.py)
        self.nb_started_by_plan = 0  # jobs started by step 1, as predictable (summary.json says it)
        self.nb_lent = 0  # predictable jobs started on lent idle cores (share_mode=soft)
        self.retrain_times_s: list[float] = []
        #: completed jobs the model had learned from after each retrain (0: no model yet)
        self.training_rows: list[int] = []
        self.alpha_history: list[tuple[float, float]] = []
        #: each unpredictable head's reservation at the decision that gave it
        self.head_reservations_s: dict[str, float] = {}

    def run_report(self) -> dict[str, Any]:
        """What summary.json keeps of the run: how many jobs were planned as predictable (step 1)."""
        return {"nb_jobs_classified_predictable": self.nb_classified_predictable,
                "nb_jobs_planned_as_predictable": self.nb_started_by_plan, "nb_jobs_classified": self.nb_classified,
                "nb_retrains_with_a_model": sum(rows > 0 for rows in self.training_rows),
                **({"nb_jobs_started_on_lent_cores": self.nb_lent} if self.share_mode == "soft" else {})}

    def run_notes(self) -> list[str]:
        """A line when no job was planned as predictable: the schedule is then EASY's, and why."""
        if self.nb_started_by_plan or not self.nb_classified:
            return []
        if self.nb_requests_unknown == self.nb_requests:
            why = "no job has a requested time (walltime -1, no requested_time_s): predictions and the plan need one"
        elif not any(self.training_rows):
            why = (f"the reliability model never trained (it needs {self.MIN_TRAINING_ROWS} completed jobs before a "
                   f"retrain, every {self.retrain:g} s)")
        else:
            why = f"no job's estimated accuracy reached threshold {self.threshold:g}"
        return [f"hybrid: no job was planned as predictable, so the schedule is EASY's with requested times: {why}"]

    @property
    def predicts_online(self) -> bool:
        return True  # the history feeds the reliability features whatever `runtime` is

    @property
    def share(self) -> int:
        """Cores the planned jobs may use at once: floor(alpha m)."""
        return math.floor(self.alpha * self.nb_resources + 1e-9)

    @property
    def planned_cores_in_use(self) -> int:
        return sum(self._running[job_id].job.res for job_id in self._planned)

    # ------------------------------------------------------------------ learning
    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        super().on_simulation_begins(platform, now)
        self._next_boundary_s = now + self.retrain
        self.alpha_history.append((now, self.alpha))

    def learned(self, job: Job, runtime_s: float, now: float, history_row: list[float], requested_s: float) -> None:
        from schedlab.predictors.online import accuracy

        row = self._reliability_rows.pop(job.id)
        if self._completed_count == len(self._completed_rows):
            grown = max(1024, 2 * self._completed_count)
            rows, accuracies = np.zeros((grown, len(row))), np.zeros(grown)
            if self._completed_count:
                rows[:self._completed_count] = self._completed_rows
                accuracies[:self._completed_count] = self._completed_accuracy
            self._completed_rows, self._completed_accuracy = rows, accuracies
        self._completed_rows[self._completed_count] = row
        self._completed_accuracy[self._completed_count] = float(accuracy(row[-1], max(runtime_s, 1e-9)))
        self._completed_count += 1
        self._completed_end_s.append(now)

    def _drop_oldest(self, count: int) -> None:
        """Forget the first `count` completions: a later retrain (at a later boundary: at least as
        many completions before it) learns the last `train_last` of them, never these."""
        keep = self._completed_count - count
        rows = np.zeros((max(1024, 2 * keep), self._completed_rows.shape[1]))
        accuracies = np.zeros(len(rows))
        rows[:keep] = self._completed_rows[count:self._completed_count]
        accuracies[:keep] = self._completed_accuracy[count:self._completed_count]
        self._completed_rows, self._completed_accuracy = rows, accuracies
        del self._completed_end_s[:count]
        self._completed_count = keep
        self._dropped += count

    def _retrain(self, boundary_s: float) -> None:
        """The model a retrain at `boundary_s` gives (completions at or before it), then alpha."""
        from bisect import bisect_right

        from schedlab.predictors.reliability import ReliabilityModel

        self.retrain_times_s.append(boundary_s)
        rows = bisect_right(self._completed_end_s, boundary_s)  # rows kept: the first `_dropped` are gone
        if rows + self._dropped >= self.MIN_TRAINING_ROWS and rows + self._dropped != self._trained_rows:
            t0 = time.perf_counter()
            first = max(0, rows - self.train_last) if self.train_last else 0
            self._model = ReliabilityModel(kind=self.reliability, seed=self.seed).fit(
                self._completed_rows[first:rows], self._completed_accuracy[first:rows])
            self.training_time_s += time.perf_counter() - t0
            self._trained_rows = rows + self._dropped
        self.training_rows.append(max(self._trained_rows, 0))
        if self.train_last and rows - self.train_last > self.train_last:
            self._drop_oldest(rows - self.train_last)
        window = self._window
        while window and window[0][0] <= boundary_s - self.retrain:
            window.popleft()
        if self.alpha_rule == "fixed" or self._model is None:
            return
        recent = [entry for entry in window if entry[0] <= boundary_s]
        if not recent:
            return
        estimated = self._model.predict(np.array([row for _, _, row in recent]))
        cores = np.array([res for _, res, _ in recent], dtype=float)
        ratio = float(cores[estimated >= self.threshold].sum() / cores.sum())
        alpha = (self.alpha + ratio) / 2.0 if self.alpha_rule == "ema" else self.alpha * ratio
        self.alpha = min(max(alpha, ALPHA_MIN), ALPHA_MAX)
        self.alpha_history.append((boundary_s, self.alpha))
        self._released = True  # the share changed: a full plan

    def _classify(self, entries: list[Entry]) -> None:
        from schedlab.predictors.online import reliability_row

        if not entries:
            return
        rows = []
        for entry in entries:
            job = entry.job
            history_row, requested_s = self._history_rows[job.id]
            row = reliability_row(history_row, requested_s, self._estimates[job.id])
            self._reliability_rows[job.id] = row
            self._window.append((job.submit_time_s, job.res, row))
            rows.append(row)
        estimated = [math.nan] * len(rows) if self._model is None else self._model.predict_rows(rows)
        for entry, value in zip(entries, estimated, strict=True):
            self.estimated_accuracy[entry.job.id] = value
            predictable = self.predictable[entry.job.id] = value >= self.threshold  # NaN (no model): False
            self.nb_classified += 1
            self.nb_classified_predictable += predictable

    def decide(self, now: float) -> list[Decision]:
        while now >= self._next_boundary_s:
            self._retrain(self._next_boundary_s)
            self._next_boundary_s += self.retrain
        self._classify(self._new)
        decisions = super().decide(now)
        boundary = self._next_boundary_s
        if self._queue and self.alpha_rule != "fixed":
            # alpha may change there and waiting jobs may use the new share at once
            self._call_me_later(boundary, now, decisions)
        return calls_first(decisions)

    # ------------------------------------------------------------------ scheduling
    def job_finished(self, running: Any, state: Any, now: float) -> None:
        self._planned.discard(running.job.id)
        super().job_finished(running, state, now)

    def plan_profile(self, now: float) -> AvailabilityProfile:
        """Free cores from now on (running jobs to their planned ends), the share capped at
        floor(alpha m) minus the running planned jobs."""
        return self.running_profile(now, share=self.share, in_share=self._planned)

    def _queue_split(self, share: int) -> QueueSplit:
        """The queue split between the two steps, up to date: the new entries put in place, or made
        anew when the share changed or the queue changed otherwise (hybrid_queue.py)."""
        split = self._split
        if split is None or split.share != share or self.walks_whole_queue:
            predictable = self.predictable
            requested = self.requested_of_s
            split = self._split = QueueSplit(
                share, self._queue, step1=lambda e: e.res <= share and predictable[e.job.id],
                step2_key=(lambda e: e[:3]) if self.step2_order == "fcfs" else
                (lambda e: (requested[e.job.id], e.submit_s, e.seq)),
                duration_s=lambda e: requested[e.job.id])
        else:
            for entry in self._new:
                split.add(entry)
        assert len(split) == len(self._queue)  # every change of the queue is in the split
        return split

    def _dequeue(self, entry: Entry, index: int | None = None) -> None:
        super()._dequeue(entry, index)
        self._split = None  # (a revised estimate) made anew at the next decision

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        if not (self._released or self._new):
            return
        share, profile = self.share, self.plan_profile(now)
        split = self._queue_split(share)
        planned = split.planned  # step 1's jobs, in online-SVF order
        head = None
        if self.protect_head and self._head is not None:
            # once a head, its reservation depends on the running jobs only (EASY's rule): planned
            # jobs go around it, else a stream of predictable jobs would push it back forever. It
            # stays the head while it waits outside the plan, even when a smaller share sends
            # earlier predictable jobs to step 2 ahead of it: they go around it too (step 2)
            head = split.by_id.get(self._head[0])
        if head is not None:
            duration_s = self.requested_of_s[head.job.id]
            start_s = profile.earliest(head.res, duration_s)
            profile.reserve(start_s, start_s + duration_s, head.res)
            self._head = (head.job.id, start_s)
        else:
            self._head = None
        started_before = len(decisions)
        started: list[Entry] = []
        self.plan_queue(profile, planned, now, decisions, capped=True, started=started)
        self._planned.update(entry.job.id for entry in started)
        self.nb_started_by_plan += len(started)
        started += self._backfill(profile, split, head, now, decisions)
        if self.share_mode == "soft":
            started += self._lend(profile, planned, now, decisions[started_before:], decisions)
        queue = self._queue
        for entry in started:
            split.remove(entry)
            del queue[bisect_left(queue, entry)]

    def _lend(self, profile: AvailabilityProfile, planned: list[Entry], now: float, made: list[Decision],
              decisions: list[Decision]) -> list[Entry]:
        """Step 3 (share_mode=soft): idle cores lent to the predictable jobs still waiting, in
        online-SVF order, each for its requested time where it fits now around every reservation.
        Returns the entries started."""
        started = {d.job_id for d in made if isinstance(d, Execute)}
        requested = self.requested_of_s
        lent = []
        for entry in planned:
            if profile.free[0] == 0:
                break
            job = entry.job
            if job.id in started or job.res > profile.free[0]:
                continue
            duration_s = requested[job.id]
            if profile.fits_now(job.res, duration_s):
                profile.reserve(now, now + duration_s, job.res)
                self._start(job, now, decisions, duration_s)
                self.nb_lent += 1
                lent.append(entry)
        return lent

    def _backfill(self, profile: AvailabilityProfile, split: QueueSplit, kept: Entry | None, now: float,
                  decisions: list[Decision]) -> list[Entry]:
        """Step 2: FCFS + EASY for the unpredictable queue with requested times, around the plan:
        jobs start in queue order until one does not fit (the head: it reserves), then the others
        are tried in `step2_order`. `kept`: the head kept from an earlier decision, its reservation
        already in the profile. Returns the entries started."""
        requested = self.requested_of_s
        started: list[Entry] = []
        order: Iterable[Entry] = split.others
        if kept is not None and split.others[0] is not kept:
            # a smaller share sent earlier predictable jobs here, ahead of the kept head: the head
            # goes first, they follow in queue order (EASY: the protected job is served first)
            order = itertools.chain((kept,), (e for e in split.others if e is not kept))
        head = None  # the entry that stops the FCFS part (it holds a reservation)
        for entry in order:
            job = entry.job
            duration_s = requested[job.id]
            if entry is kept:  # the head, reserved before step 1
                if self._head is not None and self._head[1] <= now:  # its slot is now: it starts there
                    self._start(job, now, decisions, duration_s)
                    started.append(entry)
                    self._head = None  # and the next unpredictable job is the head
                    continue
                self.head_reservations_s[job.id] = self._head[1]  # type: ignore[index]
            elif job.res <= profile.free[0] and profile.fits_now(job.res, duration_s):
                profile.reserve(now, now + duration_s, job.res)
                self._start(job, now, decisions, duration_s)
                started.append(entry)
                continue
            else:
                shadow_s = profile.earliest(job.res, duration_s)
                profile.reserve(shadow_s, shadow_s + duration_s, job.res)
                self.head_reservations_s[job.id] = shadow_s
                if self.protect_head:
                    self._head = (job.id, shadow_s)
            head = entry
            break
        if head is None or profile.free[0] == 0:
            return started  # every job started, or nothing more starts now (the head has its reservation)
        # the others, shape by shape ((cores, requested time): hybrid_queue.py), in step2_order,
        # each started if it fits now for its requested time around every reservation
        failing: dict[float, int] = {}  # requested time -> fewest cores found not to fit within it

        def fits(cores: int, duration_s: float) -> bool:
            # a job that does not fit never fits later in this decision (starts only take room)
            if cores > profile.free[0]:
                return False
            least_failing = failing.get(duration_s)
            if least_failing is not None and cores >= least_failing:
                return False
            if profile.fits_now(cores, duration_s):
                return True
            failing[duration_s] = cores  # (below any failure known: see above)
            return False

        skipped = {id(entry) for entry in started}
        skipped.add(id(head))
        if self.walks_whole_queue:
            return started + self._walk_step2(profile, split, skipped, now, decisions)
        backfilled = []
        for entry in split.step2_in_order(fits, lambda e: id(e) in skipped):
            duration_s = requested[entry.job.id]
            profile.reserve(now, now + duration_s, entry.res)
            self._start(entry.job, now, decisions, duration_s)
            backfilled.append(entry)
        return started + backfilled

    def _walk_step2(self, profile: AvailabilityProfile, split: QueueSplit, skipped: set[int], now: float,
                    decisions: list[Decision]) -> list[Entry]:
        """Step 2's backfilling as a walk of every waiting entry (`walks_whole_queue`: the
        reference the tests compare the shape-by-shape search to)."""
        requested = self.requested_of_s
        rest = [entry for entry in split.others if id(entry) not in skipped]
        if self.step2_order == "sjbf":
            rest.sort(key=lambda e: (requested[e.job.id], e.submit_s, e.seq))
        backfilled = []
        for entry in rest:
            free_now = profile.free[0]
            if free_now == 0:
                break  # nothing more starts now, and the head has its reservation
            job = entry.job
            duration_s = requested[job.id]
            if job.res <= free_now and profile.fits_now(job.res, duration_s):
                profile.reserve(now, now + duration_s, job.res)
                self._start(job, now, decisions, duration_s)
                backfilled.append(entry)
        return backfilled
