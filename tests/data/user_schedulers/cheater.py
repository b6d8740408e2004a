"""Test schedulers for `scheduler check`, loaded by file (`cheater.py:CLASS`): `FirstFit`, a minimal
scheduler the tests specialise by its order, and `ProfileReader`, which cheats: shortest real run
time first, read from the host engine's workload profiles (frames up the stack), never from the job."""

import inspect

from procset import ProcSet

from schedlab import Execute, Scheduler
from schedlab.engine import Engine


class FirstFit(Scheduler):
    """Starts every waiting job that fits now, in `order` (here: submission order); no reservation."""

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

    def decide(self, now):
        decisions = []
        for job in self.order(now):
            if job.res <= len(self.free):
                alloc = ProcSet(*self.free[:job.res])
                self.free -= alloc
                self.running[job.id] = alloc
                del self.waiting[job.id]
                decisions.append(Execute(job.id, alloc))
        return decisions


class ProfileReader(FirstFit):
    """Shortest real run time first (it reads the profiles' delays: look-ahead)."""

    def _delay_s(self, job):
        frame = inspect.currentframe()
        while frame is not None and not isinstance(frame.f_locals.get("self"), Engine):
            frame = frame.f_back
        return frame.f_locals["self"].workload.profiles[job.profile].delay_s

    def order(self, now):
        return sorted(self.waiting.values(), key=lambda j: (self._delay_s(j), j.id))
