"""Faulty and cheating schedulers for `scheduler check`, one per way researchers get it wrong, loaded
by file (`faulty.py:CLASS`). Each starts from `Greedy` (first fit in an order, no reservation), which
is correct, and which the tests also specialise by its order; what each adds is the fault its
docstring names. The checker must catch every one by
default (given the user's workload with -w, as a user gives it anyway) and name the right cause."""

import gc
import inspect
import json
import os
import re
import sys

from procset import ProcSet

from schedlab import CallMeLater, Execute, Kill, Reject, Scheduler


class Greedy(Scheduler):
    """Starts every waiting job that fits now, in `order` (submission order); no reservation."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting, self.running, self.free = {}, {}, ProcSet()

    def on_simulation_begins(self, platform, now):
        super().on_simulation_begins(platform, now)
        self.free = ProcSet((0, platform.nb_resources - 1))

    def on_job_submitted(self, job, now):
        self.waiting[job.id] = job

    def on_job_completed(self, job_id, state, now):
        self.free |= self.running.pop(job_id)

    def order(self, now):
        return list(self.waiting.values())

    def allocate(self, job):
        return ProcSet(*self.free[:job.res])

    def room(self, now):
        """How many resources a job may take now: every free one."""
        return len(self.free)

    def start(self, job):
        alloc = self.allocate(job)
        self.free -= alloc
        self.running[job.id] = alloc
        del self.waiting[job.id]
        return Execute(job.id, alloc)

    def decide(self, now):
        return [self.start(job) for job in self.order(now) if job.res <= self.room(now)]


def _engine_on_stack():
    """The host engine, found in the frames up the stack (what no scheduler should do)."""
    frame = inspect.currentframe()
    while frame is not None and not hasattr(frame.f_locals.get("self"), "workload"):
        frame = frame.f_back
    return frame.f_locals["self"]


# ------------------------------------------------------------------ information from outside the engine


def _run_times_of(path):
    """Real run time by job name, from a Batsim workload file."""
    with open(path) as handle:
        doc = json.load(handle)
    return {str(job["id"]): doc["profiles"][job["profile"]]["delay"] for job in doc["jobs"]}


def _workload_in(words):
    for i, word in enumerate(words[:-1]):
        if word in ("-w", "--workload"):
            return words[i + 1]
    return None


class ShortestRealFirst(Greedy):
    """Shortest real run time first, the run times from wherever `truth_file` finds the workload."""

    def truth_file(self):
        return None

    def on_simulation_begins(self, platform, now):
        super().on_simulation_begins(platform, now)
        path = self.truth_file()
        self.truth = _run_times_of(path) if path and os.path.exists(path) else {}

    def order(self, now):
        return sorted(self.waiting.values(), key=lambda job: (self.truth.get(job.name, 0), job.id))


class ArgvReader(ShortestRealFirst):
    """Reads the workload file named after -w in sys.argv."""

    def truth_file(self):
        return _workload_in(sys.argv)


class ProcCmdlineReader(ShortestRealFirst):
    """Reads the workload file named in /proc/self/cmdline, else in its parent's."""

    def truth_file(self):
        for pid in ("self", str(os.getppid())):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    words = handle.read().decode().split("\0")
            except OSError:
                continue
            found = _workload_in(words)
            if found:
                return found
        return None


class EnvReader(ShortestRealFirst):
    """Reads the workload file an environment variable names (MY_WORKLOAD)."""

    def truth_file(self):
        return os.environ.get("MY_WORKLOAD")


class UserModelOnWholeWorkload(Greedy):
    """Trains a per-user mean run time on `history`, which the user sets to the simulated workload
    itself, and starts the shortest predicted first."""

    def __init__(self, *, history: str = "") -> None:
        super().__init__()
        self.history = history
        self.mean_s = {}

    def prepare(self):
        if not self.history:
            return
        with open(self.history) as handle:
            doc = json.load(handle)
        sums = {}
        for job in doc["jobs"]:
            total, count = sums.get(job.get("user"), (0.0, 0))
            sums[job.get("user")] = (total + doc["profiles"][job["profile"]]["delay"], count + 1)
        self.mean_s = {user: total / count for user, (total, count) in sums.items()}

    def order(self, now):
        return sorted(self.waiting.values(), key=lambda job: (self.mean_s.get(job.extra.get("user"), 0.0), job.id))


class ProfileReader(Greedy):
    """Shortest real run time first, read from the host engine's workload profiles (frames up the
    stack), never from the job."""

    def order(self, now):
        profiles = _engine_on_stack().workload.profiles
        return sorted(self.waiting.values(), key=lambda job: (profiles[job.profile].delay_s, job.id))


class ProfileNameParser(Greedy):
    """Shortest first by the run time a profile's name tells (`delay_3600`)."""

    def order(self, now):
        def told(job):
            found = re.search(r"(\d+(?:\.\d+)?)", job.profile)
            return float(found.group(1)) if found else 0.0
        return sorted(self.waiting.values(), key=lambda job: (told(job), job.id))


# ------------------------------------------------------------------ future arrivals


class GcFutureReserver(Greedy):
    """Finds the engine through the garbage collector and keeps free the resources of the widest job
    to be submitted in the next 10 minutes."""

    engine = None

    def upcoming(self, now):
        if self.engine is None:
            self.engine = next(o for o in gc.get_objects() if type(o).__name__.endswith("Engine")
                               and getattr(o, "scheduler", None) is self)
        return [job for job in self.engine.workload.jobs if now < job.submit_time_s <= now + 600]

    def decide(self, now):
        self.keep = max((job.res for job in self.upcoming(now)), default=0)
        return super().decide(now)

    def room(self, now):
        return len(self.free) - self.keep


class FrameFutureReader(Greedy):
    """Walks up the stack to the engine and starts nothing while more jobs will arrive in the next
    5 minutes than are waiting now (it waits for them, to pick the best)."""

    def decide(self, now):
        engine = _engine_on_stack()
        coming = sum(1 for job in engine.workload.jobs if now < job.submit_time_s <= now + 300)
        if coming > len(self.waiting):
            return []
        return super().decide(now)


# ------------------------------------------------------------------ conditions small workloads never reach


class ForgetsAfter400(Greedy):
    """After its 400th start it forgets to mark the resources it allocates as busy."""

    started = 0

    def decide(self, now):
        free_before = ProcSet(self.free)
        decisions = super().decide(now)
        self.started += len(decisions)
        if self.started > 400:
            self.free = free_before - ProcSet(*[r for d in decisions for r in list(d.alloc)[:1]])
        return decisions


class OffByOneOnWideJobs(Greedy):
    """Jobs of more than half the machine get one resource less than they asked for."""

    def allocate(self, job):
        count = job.res - 1 if job.res > self.nb_resources // 2 else job.res
        return ProcSet(*self.free[:count])


class AssumesWalltime(Greedy):
    """Orders by requested time; a job without walltime (Batsim's -1, None here) breaks it."""

    def order(self, now):
        return sorted(self.waiting.values(), key=lambda job: (job.walltime_s * job.res, job.id))


# ------------------------------------------------------------------ no progress


class PollsForever(Greedy):
    """Never starts a job as wide as the machine; asks to be called a second later while one waits."""

    def order(self, now):
        return [job for job in self.waiting.values() if job.res < self.nb_resources]

    def decide(self, now):
        decisions = super().decide(now)
        if self.waiting:
            decisions.append(CallMeLater(now + 1.0))
        return decisions


class StallsAfterAKill(Greedy):
    """Stops deciding after the first job killed at its walltime (it waits for a completion it
    mistracks)."""

    stalled = False

    def on_job_completed(self, job_id, state, now):
        super().on_job_completed(job_id, state, now)
        if state.name == "COMPLETED_WALLTIME_REACHED":
            self.stalled = True

    def decide(self, now):
        return [] if self.stalled else super().decide(now)


# ------------------------------------------------------------------ legal under Batsim, but suspicious


class KillsLongJobs(Greedy):
    """Kills every job still running 100 s after its start (Batsim allows it)."""

    def __init__(self) -> None:
        super().__init__()
        self.started_s, self.calls = {}, set()

    def on_job_completed(self, job_id, state, now):
        super().on_job_completed(job_id, state, now)
        self.started_s.pop(job_id, None)

    def decide(self, now):
        decisions = super().decide(now)
        for decision in list(decisions):
            self.started_s[decision.job_id] = now
            if now + 100 not in self.calls:
                self.calls.add(now + 100)
                decisions.append(CallMeLater(now + 100))
        late = tuple(job_id for job_id, start in self.started_s.items() if now - start >= 100)
        if late:
            decisions.append(Kill(late))
            for job_id in late:
                del self.started_s[job_id]
        return decisions


class WakesTooSoon(Greedy):
    """Looks at each job 10 ms after its start (a CALL_ME_LATER): legal in the ideal engine, but a
    wake-up closer than one message time reaches Batsim after its time on a slow master."""

    def decide(self, now):
        decisions = super().decide(now)
        if decisions:
            decisions.insert(0, CallMeLater(now + 0.01))
        return decisions


class RejectsWideJobs(Greedy):
    """Rejects every job of more than half the machine, though it fits (Batsim allows it)."""

    def decide(self, now):
        wide = [job for job in self.waiting.values() if job.res > self.nb_resources // 2]
        for job in wide:
            del self.waiting[job.id]
        return [Reject(job.id, "too wide for my taste") for job in wide] + super().decide(now)


# ------------------------------------------------------------------ speed


class QuadraticGreedy(Greedy):
    """Correct, but every decision walks every job ever submitted: time grows with the square of
    the workload."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = []

    def on_job_submitted(self, job, now):
        super().on_job_submitted(job, now)
        self.seen.append(job)

    def order(self, now):
        area = 0.0
        for _ in range(3):
            for job in self.seen:
                area += job.res
        return super().order(now)


# ------------------------------------------------------------------ not deterministic (not look-ahead)


class UnseededTieBreak(Greedy):
    """Breaks ties between jobs of one size at random, unseeded: runs differ by themselves."""

    def order(self, now):
        import random

        return sorted(self.waiting.values(), key=lambda job: (job.res, random.random()))


class WallClockBudget(Greedy):
    """Backfills only while a wall-clock budget of 20 microseconds per decision lasts."""

    def decide(self, now):
        import time

        started = time.perf_counter()
        decisions = []
        for job in self.order(now):
            if time.perf_counter() - started > 20e-6 and decisions:
                break
            if job.res <= self.room(now):
                decisions.append(self.start(job))
        return decisions
