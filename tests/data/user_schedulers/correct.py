"""Correct but unusual schedulers `scheduler check` must pass (no false alarm), loaded by file
(`correct.py:CLASS`)."""

import math

from procset import ProcSet

from schedlab import CallMeLater, Execute, Scheduler


class Waiting(Scheduler):
    """What the three share: jobs waiting in submission order, the free resources, the running
    jobs (whatever each keeps of them), the lowest free ids taken for a start."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting, self.running, self.free = [], {}, ProcSet()

    def on_simulation_begins(self, platform, now):
        super().on_simulation_begins(platform, now)
        self.free = ProcSet((0, platform.nb_resources - 1))

    def on_job_submitted(self, job, now):
        self.waiting.append(job)

    def take(self, job):
        alloc = ProcSet(*self.free[:job.res])
        self.free -= alloc
        return alloc


class ConservativeBackfilling(Waiting):
    """Conservative backfilling over the first `window` waiting jobs: each gets a reservation, in
    submission order, in an availability profile built on walltimes (a job without one holds its
    resources forever); a job starts when its reservation is now. Later jobs wait their turn."""

    window = 32

    def on_job_completed(self, job_id, state, now):
        alloc, _ = self.running.pop(job_id)
        self.free |= alloc

    def decide(self, now):
        # the profile: breakpoints [time, free resources from then on]
        profile = [[now, len(self.free)]]
        for end, count in sorted((end, len(alloc)) for alloc, end in self.running.values()):
            if end == math.inf:
                continue
            if end > profile[-1][0]:
                profile.append([end, profile[-1][1]])
            profile[-1][1] += count  # a running job's end frees its resources from then on
        decisions = []
        for job in list(self.waiting[:self.window]):
            duration = math.inf if job.walltime_s is None else job.walltime_s
            start = self._earliest(profile, job.res, duration)
            if start == now:
                alloc = self.take(job)
                self.running[job.id] = (alloc, now + duration)
                self.waiting.remove(job)
                decisions.append(Execute(job.id, alloc))
            if start != math.inf:
                self._reserve(profile, start, start + duration, job.res)
        return decisions

    @staticmethod
    def _earliest(profile, res, duration):
        for i, (start, _) in enumerate(profile):
            end = start + duration
            if all(free >= res for time, free in profile[i:] if time < end):
                return start
        return math.inf

    @staticmethod
    def _reserve(profile, start, end, res):
        for point in (start, end):
            if point != math.inf and not any(time == point for time, _ in profile):
                before = max((entry for entry in profile if entry[0] < point), key=lambda e: e[0])
                profile.append([point, before[1]])
                profile.sort()
        for entry in profile:
            if start <= entry[0] < end:
                entry[1] -= res


class PeriodicBatchLearner(Waiting):
    """Decides only every 10 minutes: learns each user's mean run time from completions (the only
    run times it ever sees) and starts waiting jobs shortest predicted first."""

    def __init__(self) -> None:
        super().__init__()
        self.sums, self.call_pending = {}, False

    def on_job_completed(self, job_id, state, now):
        alloc, job, start = self.running.pop(job_id)
        self.free |= alloc
        total, count = self.sums.get(job.extra.get("user"), (0.0, 0))
        self.sums[job.extra.get("user")] = (total + now - start, count + 1)

    def on_requested_call(self, now):
        self.call_pending = False

    def predicted_s(self, job):
        total, count = self.sums.get(job.extra.get("user"), (0.0, 0))
        return total / count if count else (job.walltime_s or 3600.0)

    def decide(self, now):
        decisions = []
        if not self.call_pending:
            for job in sorted(self.waiting, key=lambda j: (self.predicted_s(j), j.id)):
                if job.res <= len(self.free):
                    alloc = self.take(job)
                    self.running[job.id] = (alloc, job, now)
                    decisions.append(Execute(job.id, alloc))
            started = {d.job_id for d in decisions}
            self.waiting = [job for job in self.waiting if job.id not in started]
            if self.waiting:
                self.call_pending = True
                decisions.append(CallMeLater(now + 600.0))
        return decisions


class PrintsProgress(Waiting):
    """FCFS that prints its progress to stdout with carriage returns and no final newline."""

    def __init__(self) -> None:
        super().__init__()
        self.done = 0

    def on_job_completed(self, job_id, state, now):
        self.free |= self.running.pop(job_id)
        self.done += 1
        print(f"\r{self.done} jobs done", end="", flush=True)

    def decide(self, now):
        decisions = []
        while self.waiting and self.waiting[0].res <= len(self.free):
            job = self.waiting.pop(0)
            alloc = self.take(job)
            self.running[job.id] = alloc
            decisions.append(Execute(job.id, alloc))
        return decisions
