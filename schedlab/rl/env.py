"""`SchedulingEnv`: a Gymnasium environment on schedlab's engine (`timing="ideal"`, or `"batsim"`:
real Batsim 4.2.1's jobs.csv on a platform file).

An episode is one workload (episodes.py) on one platform. The engine runs until the scheduler has a
choice (schedulers/agent.py: a waiting job that can start, or with `backfill` any visible job) and
pauses there, before `decide`; each `step(action)` applies one action, and a wait (or a pick that
took the reservation) lets the engine run on to the next choice. The environment steers the very
scheduler class `PolicyScheduler` runs, through the same calls: a policy gives the same jobs.csv
here and under `simulate`, `serve` or pybatsim (tested).

Rewards (`reward`: "bsld", "wait" or "utilisation"; mean bounded slowdown and mean waiting time
negated): `reward_mode="episodic"` gives the metric at the last step and 0 before;
`reward_mode="step"` gives at each step the change of that metric computed over the jobs that ended
so far, so the rewards of an episode add up to the episodic one. The last step's `info["metrics"]`
is summary.json's `metrics` for the same schedule.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

import gymnasium
import numpy as np

from schedlab.metrics import BSLD_TAU_S, compute_metrics
from schedlab.model import Platform
from schedlab.outputs import outcomes
from schedlab.rl.episodes import episode_source, synthetic
from schedlab.schedulers.agent import AgentScheduler, InvalidAction
from schedlab.workload import inputs_view

Reward = Literal["bsld", "wait", "utilisation"]
#: the summary.json metric each reward is, and its sign (a reward is maximised)
ENV_NAME = "schedlab/Scheduling-v0"
REWARD_METRICS = {"bsld": ("mean_bounded_slowdown", -1.0), "wait": ("mean_waiting_time_s", -1.0),
                  "utilisation": ("utilisation", 1.0)}


class SchedulingEnv(gymnasium.Env):
    """Which waiting job starts next (Discrete(K + 1): the first K waiting jobs, then wait), with the
    allowed actions in `info["action_mask"]`. See the module's docstring and docs/design.md."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, *, platform: str | Path | Platform | int = 256, workloads: Any = None,
                 timing: Literal["ideal", "batsim"] = "ideal", reward: Reward = "bsld",
                 reward_mode: Literal["episodic", "step"] = "episodic", max_queue: int = 32, backfill: bool = False,
                 model: str = "", horizons_s: str = "600,3600,14400,86400", time_scale_s: float = 3600.0,
                 day_start_s: float = 0.0, invalid_action: InvalidAction = "wait", queue_order: str = "fcfs") -> None:
        from schedlab.api import _platform

        if reward not in REWARD_METRICS:
            raise ValueError(f"reward must be one of {', '.join(REWARD_METRICS)}, got {reward!r}")
        if reward_mode not in ("episodic", "step"):
            raise ValueError(f"reward_mode must be episodic or step, got {reward_mode!r}")
        if timing not in ("ideal", "batsim"):
            raise ValueError(f"timing must be ideal or batsim, got {timing!r}")
        self.platform = _platform(platform)
        if timing == "batsim" and not (self.platform.source and Path(self.platform.source).is_file()):
            raise ValueError("timing='batsim' needs a platform file (a shipped name or an XML path)")
        self.episodes = episode_source(synthetic(nb_resources=self.platform.nb_resources) if workloads is None
                                       else workloads)
        self.timing, self.reward, self.reward_mode = timing, reward, reward_mode
        self.scheduler_options: dict[str, Any] = {"max_queue": max_queue, "backfill": backfill, "model": model,
                                  "horizons_s": horizons_s, "time_scale_s": time_scale_s, "day_start_s": day_start_s,
                                  "invalid_action": invalid_action, "queue_order": queue_order}
        self.scheduler = AgentScheduler(**self.scheduler_options)  # checks the options now
        layout = self.scheduler.layout
        low, high = layout.bounds()
        self.observation_space = gymnasium.spaces.Box(low, high, dtype=np.float32)
        self.action_space = gymnasium.spaces.Discrete(max_queue + 1)
        self.engine: Any = None
        self.workload: Any = None
        self._run: Any = None
        self._now = 0.0
        self._done = True
        self._ended_at_reset = False
        self._failed: str | None = None
        import multiprocessing

        if multiprocessing.parent_process() is not None:  # a vector environment's worker: made in the child
            from schedlab.interrupts import worker_process

            # it dies with its parent (a SIGTERM'd or killed training script), at once and quietly,
            # not at its next reply into a closed pipe with a traceback
            worker_process()

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """A new episode: the workload drawn from the seed (`options={"workload": W}` gives one)."""
        from schedlab.engine import make_engine

        super().reset(seed=seed)
        self.close()
        given = (options or {}).get("workload")
        self.workload = episode_source(given)(0) if given is not None else self.episodes(
            int(self.np_random.integers(2**31 - 1)))
        self.scheduler = AgentScheduler(**self.scheduler_options)
        self.scheduler.check_inputs(inputs_view(self.workload))  # e.g. a model trained on this workload's jobs
        self.engine = make_engine(self.platform, self.workload, self.scheduler, self.timing)
        self._run = self.engine.pausing_run()
        self._first_submit_s = min((job.submit_time_s for job in self.workload.jobs), default=0.0)
        self._seen = 0  # rows of engine.finished already counted
        self._sums = [0.0, 0.0, 0.0, 0]  # bsld, wait, area, jobs that ran
        self._last_finish_s = -math.inf
        self._value = 0.0  # the metric so far (signed), of the last step
        self._done, self._failed = False, None
        self._advance()
        self._ended_at_reset = self._done
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._failed is not None:
            raise RuntimeError(f"the episode stopped on an error ({self._failed}): call reset()")
        if self._run is None and not self._done:
            raise RuntimeError("the environment is closed: call reset()")
        if self._done:
            if self._ended_at_reset:  # no choice in the whole episode: this step only ends it
                self._ended_at_reset = False
                value = self._episode_value()
                return self._observation(), value, True, False, self._info()
            raise RuntimeError("the episode has ended: call reset()")
        if not self.scheduler.act(int(action), self._now):
            self._advance()
        value = self._episode_value() if self._done else (
            self._value_so_far() if self.reward_mode == "step" else 0.0)
        reward = value - self._value if (self.reward_mode == "step" or self._done) else 0.0
        self._value = value
        return self._observation(), float(reward), self._done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The mask as a boolean array (what sb3-contrib's MaskablePPO asks an environment for)."""
        return self._mask().astype(bool)

    def close(self) -> None:
        if self._run is not None:
            self._run.close()
            self._run = None

    # ------------------------------------------------------------------ the engine between choices
    def _advance(self) -> None:
        """Run until the scheduler has a choice (the engine paused before its `decide`), or the end."""
        scheduler = self.scheduler
        try:
            while True:
                self._now = next(self._run)
                scheduler.begin(self._now)
                if scheduler.has_choice():
                    return
        except StopIteration:
            self._done = True
            self._run = None
        except BaseException as exc:  # the engine or the scheduler failed: the episode cannot go on
            self._failed = f"{type(exc).__name__}: {exc}"
            self._run = None
            raise

    def _observation(self) -> np.ndarray:
        return self.scheduler.observe(self._now if not self._done else self.engine.now)

    def _mask(self) -> np.ndarray:
        if self._done:
            mask = np.zeros(self.scheduler.max_queue + 1, np.int8)
            mask[-1] = 1
            return mask
        return self.scheduler.action_mask()

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self._mask(), "now_s": float(self._now)}
        if self._done:
            info["metrics"] = self.metrics()
        return info

    def write(self, out_dir: str | Path) -> Path:
        """The episode's jobs.csv, schedule.csv and summary.json, as `schedlab simulate` writes them
        (an episode not ended yet: what finished, marked incomplete); returns where they went."""
        from schedlab.runs import write_run

        info = {"scheduler": "policy", "options": self.scheduler.options(), "workload": self.workload.source,
                "environment": ENV_NAME}
        error = self._failed or (None if self._done else "the episode has not ended")
        return write_run(self.engine, out_dir, run_info=info, simulation_time_s=0.0, error=error)[1]

    def metrics(self) -> dict[str, Any]:
        """summary.json's `metrics` of the schedule so far (the whole episode once it has ended)."""
        engine = self.engine
        return compute_metrics(outcomes(engine.records[job_id] for job_id in engine.finished),
                               engine.platform.nb_resources)

    # ------------------------------------------------------------------ rewards
    def _episode_value(self) -> float:
        name, sign = REWARD_METRICS[self.reward]
        value = self.metrics()[name]
        return 0.0 if value is None else sign * float(value)

    def _value_so_far(self) -> float:
        """The reward's metric over the jobs that ended so far (signed), updated from the new rows."""
        engine = self.engine
        finished, records = engine.finished, engine.records
        sums = self._sums
        for job_id in finished[self._seen:]:
            record = records[job_id]
            if record.start_s is None or record.finish_s is None:
                continue  # rejected
            submit, start, finish = record.job.submit_time_s, record.start_s, record.finish_s
            sums[0] += max((finish - submit) / max(finish - start, BSLD_TAU_S), 1.0)
            sums[1] += start - submit
            sums[2] += (finish - start) * record.job.res
            sums[3] += 1
            self._last_finish_s = max(self._last_finish_s, finish)
        self._seen = len(finished)
        if not sums[3]:
            return 0.0
        if self.reward == "bsld":
            return -sums[0] / sums[3]
        if self.reward == "wait":
            return -sums[1] / sums[3]
        span = self._last_finish_s - self._first_submit_s
        return sums[2] / (engine.platform.nb_resources * span) if span > 0 else 0.0
