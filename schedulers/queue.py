"""Shared state of list schedulers: a waiting queue in policy order, running jobs, free resources."""

from __future__ import annotations

import heapq
import itertools
import math
from bisect import bisect_left, insort
from collections.abc import Callable
from typing import Any, NamedTuple

from procset import ProcSet

from schedlab.model import TIME_TOLERANCE_S, CallMeLater, Decision, Execute, Job, JobState, Platform, Reject
from schedlab.resources import ResourceMask
from schedlab.schedulers.base import Scheduler
from schedlab.schedulers.policies import get_policy
from schedlab.schedulers.strategies import Correction, Estimate, Running
from schedlab.schedulers.wakeups import WakeupMargin


class Entry(NamedTuple):
    """A waiting job in the queue. Entries sort as tuples, by (score, submit, seq); seq is unique,
    so the fields after it never decide an order (a Job is never compared)."""

    score: Any  # the queue policy's score (a number, or a tuple for lexicographic policies)
    submit_s: float
    seq: int  # arrival order among the scheduler's entries, unique
    job: Job
    estimate_s: float  # the planning estimate given at submission (or revised)
    res: int
    planned_s: float  # the duration the plan holds the job if it starts now (planned_duration_s)


#: an Entry from a tuple of its fields without the generated `__new__`'s Python frame (made at each
#: submission and each re-scoring: `bench_overload.py`)
_new_entry = tuple.__new__


def calls_first(decisions: list[Decision]) -> list[Decision]:
    """The decisions with the CALL_ME_LATERs first, each kind in its order: Batsim receives a
    reply's decisions one message at a time, and a call must reach it before its time."""
    if CallMeLater in map(type, decisions):
        decisions.sort(key=lambda d: type(d) is not CallMeLater)
    return decisions


class QueueScheduler(Scheduler):
    """Waiting jobs sorted by a queue policy; too-large jobs rejected; lowest free ids allocated.

    Subclasses implement `_schedule(now, decisions)`. Extension points for prediction-driven
    schedulers (the walltime stays the kill time):
    - `estimate_s(job)`: the planning duration given at submission (here: the walltime);
    - `planned_duration_s(job, estimate_s)`: how long the plan holds the job once started (here:
      its estimate; a correction that fires at the start makes it longer). Backfilling tests this
      duration, so a started job never holds the plan longer than the test assumed;
    - `revise_estimate(job_id, estimate_s, now)`: a waiting job's estimate changes (its queue
      position follows when the policy uses estimates);
    - `revise_expected_end(job_id, end_s, now)`: a running job's planned end changes;
    - `overrun_end_s(running, now)`: the new planned end of a running job found past its planned
      end (here: start + walltime, when Batsim would kill it). A plan never holds an end in the past,
      and an expected end before the kill time gets a CALL_ME_LATER, so the plan is revised when the
      estimate expires even if nothing else happens;
    - `job_finished(running, state, now)`: a job of ours ended (completed or killed); the only place
      where its run time (`now - running.start_s`) becomes known, so online learners update here.
    """

    #: How long before its planned end a running job's estimate is revised (`overrun_end_s` is asked
    #: then, and a CALL_ME_LATER is requested for then): 0 = at its end; corrections use 60 s.
    revision_lead_s: float = 0.0
    #: a rule's refusal of a job at submission (EASY's machines rule: no walltime), or None
    _admission: Callable[[Job], Reject | None] | None = None
    #: the composed strategies (`compose`): None plans with walltimes and replans an overdue job to
    #: its walltime end, QueueScheduler's own rules
    _estimate: Estimate | None = None
    _correction: Correction | None = None
    TIME_TOLERANCE_S = TIME_TOLERANCE_S  # a call computed as end - lead may come back a few ulps off

    option_help = {"queue_order": "the order waiting jobs are considered in: a named policy, a regression-obtained "
                                  "one (lin, qdr, cub, qua) or FILE#NAME fitted by `schedlab policy fit`"}

    def __init__(self, *, queue_order: Any = "fcfs") -> None:
        """`queue_order`: a policy's name (policies.get_policy) or a QueuePolicy."""
        super().__init__()
        self._policy = get_policy(queue_order)
        self.queue_order = queue_order if isinstance(queue_order, str) else self._policy.name
        self._queue: list[Entry] = []  # ascending
        self._new: list[Entry] = []  # entries submitted since the last decide
        self._running: dict[str, Running] = {}
        self._ends: list[tuple[float, int, int]] = []  # (estimated end, seq, res) of running jobs, ascending
        self._by_end: dict[tuple[float, int, int], Running] = {}  # each running job by its end key
        self._resources = ResourceMask(0)
        self._released = True  # resources were freed, or a planned end that matters moved, since the last decide
        self._completed = False  # a job completed since the last decide
        self._seq = 0
        self._pending: list[Decision] = []
        self._calls: set[float] = set()  # times a CALL_ME_LATER was asked for, not yet come
        self._call_times: list[tuple[float, float]] = []  # (time asked at, time for), a heap
        self.wakeup_margin = WakeupMargin()

    # ------------------------------------------------------------------ composed strategies
    def compose(self, *, estimate: Estimate | None = None, correction: Correction | None = None) -> None:
        """Plan with `estimate` (schedulers/strategies.py: decided at each job's submission, learned
        at each end) and revise underestimates with `correction`, in place of the walltime rules."""
        if estimate is not None:
            estimate.bind(self)
            self._estimate = estimate
            self._arrivals: list[tuple[Job, float]] = []  # submitted since the last decision
        if correction is not None:
            self._correction = correction
            self.revision_lead_s = correction.revision_lead_s

    @property
    def estimate(self) -> Estimate | None:
        """The composed Estimate (None: walltimes)."""
        return self._estimate

    def check_inputs(self, workload: Any) -> None:
        super().check_inputs(workload)
        if self._estimate is not None:
            self._estimate.check_inputs(workload)

    def prepare(self) -> None:
        super().prepare()
        if self._estimate is not None:
            self._estimate.prepare()

    def predict_runtimes_s(self, jobs: list[Job]) -> Any:
        """The composed estimate's run times of jobs submitted at one instant (extension point)."""
        assert self._estimate is not None  # asked only when one is composed
        return self._estimate.predict_runtimes_s(jobs)

    def corrections_of(self, job_id: str) -> int:
        """How many times a running job's planned duration was corrected."""
        return 0 if self._correction is None else self._correction.corrections_of(job_id)

    def forget_job(self, job_id: str) -> None:
        super().forget_job(job_id)
        if self._estimate is not None:
            self._estimate.forget_job(job_id)

    def _estimate_arrivals(self) -> None:
        """The jobs submitted since the last decision, estimated together (one model call per
        distinct feature row) and queued in their submission order."""
        estimate = self._estimate
        assert estimate is not None
        arrivals, self._arrivals = self._arrivals, []
        jobs = [job for job, _ in arrivals]
        estimate.arrived(jobs, self.predict_runtimes_s(jobs).tolist())
        for job, submitted in arrivals:
            self._accept(job, submitted)

    # ------------------------------------------------------------------ planning duration
    def estimate_s(self, job: Job) -> float:
        """The planning duration a job gets at submission: the composed estimate's, else its
        walltime (inf without one). The walltime stays the kill time."""
        if self._estimate is not None:
            return self._estimate.estimate_s(job)
        return math.inf if job.walltime_s is None else job.walltime_s

    def planned_duration_s(self, job: Job, estimate_s: float) -> float:
        """The duration the plan gives `job` if it starts now with `estimate_s`."""
        if self._correction is not None:
            return self._correction.planned_duration_s(job, estimate_s)
        return estimate_s

    def overrun_end_s(self, running: Running, now: float) -> float:
        """Planned end of a job found running at or past its planned end (minus `revision_lead_s`):
        the composed correction's, else its walltime end, the latest it can end (`overrun=walltime`);
        unknown (infinite) without a walltime."""
        walltime = running.job.walltime_s
        latest_s = running.start_s + walltime if walltime is not None else math.inf
        if self._correction is not None:
            return self._correction.overrun_end_s(running, now, latest_s)
        return latest_s

    def job_finished(self, running: Running, state: JobState, now: float) -> None:
        """Called once per job of ours that ended, after its resources are released: the composed
        strategies learn and forget it here (subclasses extending it call this)."""
        if self._correction is not None:
            self._correction.finished(running.job.id)
        if self._estimate is not None:
            self._estimate.finished(running, state, now)

    def waiting_estimate_s(self, job_id: str) -> float:
        """The planning duration a waiting job has now (its estimate, as revised)."""
        return self._queue[self._waiting_index(job_id)].estimate_s

    def expected_end_s(self, job_id: str) -> float:
        """When the plan expects a running job of ours to end."""
        return self._running[job_id].end_key[0]

    def revise_estimate(self, job_id: str, estimate_s: float, now: float) -> None:
        """A waiting job's planning duration changes; the next decision plans with it."""
        index = self._waiting_index(job_id)
        old = self._queue[index]
        self._dequeue(old, index)
        job = old.job
        entry = Entry(self._policy.score(job, estimate_s, now), old.submit_s, old.seq, job, estimate_s, old.res,
                      self.planned_duration_s(job, estimate_s))
        self._enqueue(entry)
        self._new = [entry if e is old else e for e in self._new]
        self._released = True

    def revise_expected_end(self, job_id: str, end_s: float, now: float) -> None:
        """A running job's planned end changes (never to a time before `now`)."""
        running = self._running[job_id]
        old_end = running.end_key[0]
        del self._ends[bisect_left(self._ends, running.end_key)]
        del self._by_end[running.end_key]
        self._seq += 1
        running.end_key = (max(end_s, now), self._seq, running.job.res)
        insort(self._ends, running.end_key)
        self._by_end[running.end_key] = running
        self._ask_call(running, now, self._pending)
        if self.end_change_matters(old_end, running.end_key[0]):
            self._released = True

    def end_change_matters(self, old_end_s: float, new_end_s: float) -> bool:
        """Whether a running job's planned end moving from `old_end_s` to `new_end_s` can change
        the next decision (then it is a full pass, as when resources are freed). Here: always."""
        return True

    def _waiting_index(self, job_id: str) -> int:
        for index, entry in enumerate(self._queue):
            if entry.job.id == job_id:
                return index
        raise KeyError(f"job {job_id!r} is not waiting")

    def _ask_call(self, running: Running, now: float, out: list[Decision]) -> None:
        """Be called when a planned end that comes before the kill time is due for revision (an
        estimate that may expire): at the end, or `revision_lead_s` before it."""
        end = running.end_key[0]
        if not self.call_wanted(end):
            return
        at = end - self.revision_lead_s
        walltime = running.job.walltime_s
        if now < at and end < (math.inf if walltime is None else running.start_s + walltime):
            self._call_me_later(at, now, out)

    def _call_me_later(self, at_s: float, now: float, out: list[Decision]) -> None:
        """Ask to be called at `at_s` (once per time), or as soon as Batsim surely accepts it:
        `wakeups.WakeupMargin` from now (calls come first in their reply: `decide`)."""
        if at_s in self._calls:
            return
        asked_s = max(at_s, now + self.wakeup_margin.margin_s)
        self._calls.add(at_s)
        heapq.heappush(self._call_times, (asked_s, at_s))
        out.append(CallMeLater(asked_s))

    def call_wanted(self, end_s: float) -> bool:
        """Whether a planned end needs a CALL_ME_LATER for its revision (here: every one); one
        without is revised at the next decision, before anything is planned with it."""
        return True

    def _revise_overdue(self, now: float) -> None:
        """Jobs still running at or past their planned end (they have not completed: completions
        come before decisions) get a later one from `overrun_end_s`: planning them to end now would
        count resources as free that are not."""
        due = now + self.revision_lead_s + self.TIME_TOLERANCE_S
        overdue = list(itertools.takewhile(lambda key: key[0] <= due, self._ends))
        for key in overdue:
            running = self._by_end[key]
            end = self.overrun_end_s(running, now)
            if end > key[0]:
                self.revise_expected_end(running.job.id, end, now)

    # ------------------------------------------------------------------ hooks
    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        super().on_simulation_begins(platform, now)
        self._resources = ResourceMask(platform.nb_resources)
        self.wakeup_margin.platform_s = platform.message_time_s
        if self._estimate is not None:  # a host prepares it first; hooks driven without one too
            self.prepare()

    def on_job_submitted(self, job: Job, now: float) -> None:
        if self._estimate is not None:  # estimated together at the decision (`_estimate_arrivals`)
            self._arrivals.append((job, now))
            return
        self._accept(job, now)

    def _accept(self, job: Job, now: float) -> None:
        """A submitted job rejected (too large, or refused by a rule) or queued with its estimate."""
        if job.res > self.nb_resources:
            self._pending.append(Reject(job.id, f"requests {job.res} resources, platform has "
                                                f"{self.nb_resources}"))
            return
        if self._admission is not None:
            rejection = self._admission(job)
            if rejection is not None:
                self._pending.append(rejection)
                return
        self._seq += 1
        estimate = self.estimate_s(job)
        entry = _new_entry(Entry, (self._policy.score(job, estimate, now), job.submit_time_s, self._seq, job, estimate,
                                   job.res, self.planned_duration_s(job, estimate)))
        self._enqueue(entry)
        self._new.append(entry)

    def _enqueue(self, entry: Entry) -> None:
        """Put `entry` in the waiting queue at its place (subclasses that index the queue extend
        this and `_dequeue`: see EASY)."""
        insort(self._queue, entry)

    def _dequeue(self, entry: Entry, index: int | None = None) -> None:
        """Take `entry` (at `index` when known) out of the waiting queue."""
        del self._queue[self._queue.index(entry) if index is None else index]

    def _dequeue_head(self, nb: int) -> list[Entry]:
        """Take the first `nb` entries out of the waiting queue at once (one slice, not `nb`
        shifts of a list); returns them."""
        started = list(self._queue[:nb])
        del self._queue[:nb]
        return started

    def on_job_completed(self, job_id: str, state: JobState, now: float) -> None:
        running = self._running.pop(job_id, None)
        if running is None:
            return  # a job we rejected, or not ours
        self._resources.release(running.alloc, running.job.res)
        index = bisect_left(self._ends, running.end_key)
        del self._ends[index]
        del self._by_end[running.end_key]
        self._released = True
        self._completed = True
        self.job_finished(running, state, now)
        if not self.keeps_records:
            self.forget_job(job_id)

    def on_requested_call(self, now: float) -> None:
        # every call due by now (Batsim may deliver one a little late): none is asked twice or kept.
        # A call frees nothing: the revisions it is for (in `decide`) say whether the plan changed.
        due = now + self.TIME_TOLERANCE_S
        while self._call_times and self._call_times[0][0] <= due:
            self._calls.discard(heapq.heappop(self._call_times)[1])

    # ------------------------------------------------------------------ decisions
    def decide(self, now: float) -> list[Decision]:
        if self._estimate is not None:
            self._estimate.refit_if_due(now)  # the model that estimates this instant's submissions
            if self._arrivals:
                self._estimate_arrivals()
        margin = self.wakeup_margin
        observing = margin.platform_s is None  # a known message time needs no bound from replies
        if observing:
            margin.request(now)
        if self._ends and self._ends[0][0] <= now + self.revision_lead_s + self.TIME_TOLERANCE_S:
            self._revise_overdue(now)
        decisions, self._pending = self._pending, []
        if self._policy.dynamic and self._queue:
            self._queue = self._rescored(now)
            self._released = True
        if self._queue:
            self._schedule(now, decisions)
        self._new.clear()
        self._released = self._completed = False
        # a rejection's reason is one more message (`serve` sends it first, as metadata)
        if observing:
            margin.replied(now, len(decisions) + sum(1 for d in decisions if type(d) is Reject and d.reason))
        return calls_first(decisions)

    #: queues at least this long are re-scored with the policy's array form, when it has one
    VECTOR_QUEUE_MIN = 64

    def _rescored(self, now: float) -> list[Entry]:
        """The queue of a dynamic policy sorted by (score at `now`, submit, seq)."""
        queue, vector = self._queue, self._policy.vector
        if vector is None or len(queue) < self.VECTOR_QUEUE_MIN:
            return sorted(_new_entry(Entry, (self._policy.score(e.job, e.estimate_s, now), *e[1:])) for e in queue)
        import numpy as np

        n = len(queue)
        submit = np.fromiter((e.submit_s for e in queue), float, n)
        scores = vector(submit, np.fromiter((e.estimate_s for e in queue), float, n),
                        np.fromiter((e.res for e in queue), float, n), now)
        order = np.lexsort((np.fromiter((e.seq for e in queue), np.int64, n), submit, scores))
        # the entries keep their stored scores: a dynamic queue is re-sorted before every use
        return [queue[i] for i in order.tolist()]

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        raise NotImplementedError

    def _start_head_jobs(self, now: float, decisions: list[Decision]) -> list[Entry]:
        """Start queue-head jobs while they fit (the FCFS part of every list scheduler); returns
        their entries."""
        resources = self._resources
        nb = 0
        for entry in self._queue:  # an iterator: a SortedList's indexing is Python code
            if entry.res > resources.nb_free:
                break
            self._start(entry.job, now, decisions, entry.estimate_s)
            nb += 1
        return self._dequeue_head(nb) if nb else []

    def _start(self, job: Job, now: float, decisions: list[Decision], estimate_s: float | None = None,
               alloc: ProcSet | None = None) -> None:
        """Start `job` now on `alloc` (default: the lowest free ids)."""
        if alloc is None:
            alloc = self._resources.take_lowest(job.res)
        else:
            self._resources.take(alloc, job.res)
        if estimate_s is None:
            estimate_s = self.estimate_s(job)
        if self._correction is not None:
            estimate_s = self._correction.started(job, estimate_s)
        self._seq += 1
        end_key = (now + estimate_s, self._seq, job.res)
        insort(self._ends, end_key)
        running = self._running[job.id] = self._by_end[end_key] = Running(job, alloc, now, end_key)
        decisions.append(Execute(job.id, alloc))
        self._ask_call(running, now, decisions)

    # ------------------------------------------------------------------ introspection (tests, tools)
    @property
    def queue(self) -> list[Job]:
        """The waiting jobs: in policy order, except under FCFS with a policy scored by wait
        (WFP3, UNICEF), whose queue is kept by group (group_heads.py) and listed unordered."""
        return [entry.job for entry in self._queue]

    @property
    def free_resources(self) -> ProcSet:
        return self._resources.free_set()

    @property
    def nb_free(self) -> int:
        return self._resources.nb_free
