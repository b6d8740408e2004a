"""Running a campaign: each run in a worker (a local process pool by default, or Dask), its outputs
in DIR/runs/ID/, one row per run in DIR/results.parquet.

A run's directory appears only when the run is over (written under a temporary name, then renamed),
so an interrupted campaign resumes by skipping the runs whose summary says complete. Workers receive
plain data (paths, names, options) and cache what they load, so a worker reads each workload once,
however many runs use it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from schedlab import __version__, abilities
from schedlab.errors import OutputError
from schedlab.experiments.campaigns.plan import Run, option_values
from schedlab.host import SchedulerHooks


@lru_cache(maxsize=8)
def _workload(path: str, sha256: str):
    """Keyed by content too: a long-lived (Dask) worker must not reuse a file edited since."""
    from schedlab.workload import load_workload

    return load_workload(path)


@lru_cache(maxsize=8)
def _platform(path: str, sha256: str):
    from schedlab.platform import load_platform

    return load_platform(path)


def jittered(workload, jitter_s: float, seed: int | None, repetition: int):
    """The workload with every submit time shifted by U[0, jitter_s), seeded by (seed, repetition)."""
    import numpy as np

    rng = np.random.default_rng([seed or 0, repetition, 0x5EED])
    shifts = rng.uniform(0.0, jitter_s, len(workload.jobs))
    jobs = sorted((replace(job, submit_time_s=job.submit_time_s + float(shift))
                   for job, shift in zip(workload.jobs, shifts, strict=True)), key=lambda j: (j.submit_time_s, j.id))
    return replace(workload, jobs=tuple(jobs))


def run_info(run: Run) -> dict[str, Any]:
    keys = ("id", "campaign", "workload", "window", "instance", "platform", "scheduler", "seed", "jitter_s",
            "repetition", "timing")
    return {"run": {k: getattr(run, k) for k in keys}, "scheduler": run.scheduler_name, "options": run.options,
            "workload": {"path": run.workload_path}, "platform": {"path": run.platform_path}}


def execute_run(run: Run, runs_dir: str) -> dict[str, Any]:
    """Run one simulation (in a worker); returns its results row. A failed run is recorded, not
    raised; Ctrl-C is raised (what it interrupted leaves nothing behind)."""
    from schedlab.runs import RunSpec

    final = Path(runs_dir) / run.id
    temporary = Path(runs_dir) / f".{run.id}.{os.getpid()}.part"
    shutil.rmtree(temporary, ignore_errors=True)
    t0 = time.perf_counter()

    def amend(summary: dict[str, Any], files: Path) -> dict[str, Any]:
        """The worker's wall time, and the metrics after the warm-up (from the staged jobs.csv)."""
        more: dict[str, Any] = {"timing": {**summary["timing"], "wall_time_s": time.perf_counter() - t0},
                                "versions": _versions()}  # what made it (a resumed campaign reuses it)
        if run.warmup_share or run.warmup_jobs:
            more.update(after_warmup(files, summary, run.warmup_share, run.warmup_jobs))
        planned = prediction_metrics(scheduler, workload, files, run.warmup_share, run.warmup_jobs)
        if planned is not None:
            more["prediction_metrics"] = planned
        return more

    try:
        platform = _platform(run.platform_path, run.platform_sha256)
        workload = _workload(run.workload_path, run.workload_sha256)
        scheduler = checked_scheduler(run, workload)  # before the jitter: an oracle holds the workload as written
        from schedlab.predictors.training import REPORTED_LEVELS

        abilities.records_quantiles(scheduler, REPORTED_LEVELS)  # a distribution's, for its calibration
        if run.repetition is not None:
            assert run.jitter_s is not None  # a jittered copy has its jitter (plan.expand)
            workload = jittered(workload, run.jitter_s, run.seed, run.repetition)
        spec = RunSpec(platform=platform, workload=workload, scheduler=scheduler, name=run.scheduler_name,
                       options=run.options, timing=run.timing, out=temporary, run_info=run_info(run),
                       amend_summary=amend, check_scheduler_inputs=False)
        result = spec.prepare().execute()
        if isinstance(result.exception, KeyboardInterrupt):
            raise result.exception
        summary = result.summary
    except KeyboardInterrupt:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    except OutputError as exc:  # the machine's failure (a full disk), not the run's: the campaign stops
        shutil.rmtree(temporary, ignore_errors=True)
        raise OutputError(str(exc).replace(str(temporary), str(final))) from None
    except Exception as exc:  # a failed run is recorded, the campaign goes on
        from schedlab.errors import SchedlabError

        temporary.mkdir(parents=True, exist_ok=True)
        # a bad input or a user's scheduler's failure says itself; anything else is our bug
        error = str(exc) if isinstance(exc, SchedlabError) else f"internal error: {type(exc).__name__}: {exc}"
        summary = {"complete": False, "error": error, **run_info(run), "metrics": {},
                   "timing": {"wall_time_s": time.perf_counter() - t0}, "schedlab_version": __version__}
        (temporary / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    if not summary.get("complete"):
        done = finished_row(run, Path(runs_dir))
        if done is not None:  # done already, by a worker that took over this one's batch (this one was lost
            shutil.rmtree(temporary, ignore_errors=True)  # and failed as its folder went): kept
            return done
    shutil.rmtree(final, ignore_errors=True)
    os.replace(temporary, final)
    return row(run, summary)


def checked_scheduler(run: Run, workload: Any) -> Any:
    """The run's scheduler ("@history" and "@workload" standing for their files), its files checked
    against `workload` (`Scheduler.check_inputs`; a history the planner made from the same trace
    needs none); a user's scheduler raising there is its failure."""
    from schedlab.experiments.campaigns.campaign import HISTORY
    from schedlab.experiments.campaigns.plan import resolve_history
    from schedlab.schedulers.base import create_scheduler, raised_by
    from schedlab.workload import inputs_view

    options = resolve_history({**run.options, **(run.files or {})}, run.history_path,
                              run.workload_path)
    scheduler = create_scheduler(run.scheduler_name, option_values(options))
    if HISTORY not in run.options.values():
        with raised_by(type(scheduler), run.scheduler_name, "check_inputs", bad_options=False):
            scheduler.check_inputs(inputs_view(workload))  # never the run times
    return scheduler


def check_run_inputs(runs: list[Any]) -> None:
    """Before any run (exit 2, nothing written): each configuration whose options name a file of the
    user's (an oracle, a model, a history; not the campaign's own "@workload" or "@history") checked
    against each workload it runs on (`checked_scheduler`, as `simulate` checks it)."""
    from schedlab.errors import InputError
    from schedlab.experiments.campaigns.campaign import HISTORY, WORKLOAD
    from schedlab.paths import files_in_option

    timed = sorted({run.platform_path for run in runs if run.timing == "batsim"})
    for path in timed:  # what Batsim timing does not model is refused before any run
        from schedlab.engine.batsim_network import message_routes

        try:
            message_routes(path)
        except InputError as exc:
            raise InputError(f'timing = "batsim": {exc}') from None  # the platform's file and line are in it
    seen = set()
    for run in runs:
        given = {k: v for k, v in run.options.items() if v not in (HISTORY, WORKLOAD)}
        if run.repetition is not None or not any(files_in_option(v) for v in given.values()):
            continue
        key = (run.scheduler_name, json.dumps(run.options, sort_keys=True, default=str), run.workload_path)
        if key in seen:
            continue
        seen.add(key)
        try:
            checked_scheduler(run, _workload(run.workload_path, run.workload_sha256))
        except InputError as exc:
            raise InputError(f"run {run.key!r}: {exc}") from None


def submission_order(job_id: str, submit_s: float) -> tuple[float, int, str]:
    """The order warm-ups count jobs in: submission time, then the job number (ids with or without
    the workload's prefix)."""
    name = job_id.rpartition("!")[2]
    return submit_s, int(name) if name.isdigit() else -1, name


def after_warmup(run_dir: Path, summary: dict[str, Any], share: float, jobs: int = 0) -> dict[str, Any]:
    """Metrics without the first `share` (or the first `jobs`) of the jobs by submission (a warm-up:
    the machine starts empty, learning predictors start blind), from the run's jobs.csv."""
    import math

    from schedlab.metrics import compute_metrics, read_jobs_csv

    # jobs.csv lists jobs as they ended: by submission, ties by job number (the same jobs for every scheduler)
    outcomes = sorted(read_jobs_csv(run_dir / "jobs.csv"), key=lambda o: submission_order(o.job_id, o.submit_s))
    skipped = min(jobs, len(outcomes)) if jobs else math.ceil(share * len(outcomes))
    metrics = compute_metrics(outcomes[skipped:], summary["metrics"].get("nb_resources"),
                              summary["metrics"].get("scheduling_time_s"))
    return {"metrics_after_warmup": metrics,
            "warmup": {"share": share, **({"jobs": jobs} if jobs else {}), "nb_jobs_left_out": skipped}}


def prediction_metrics(scheduler: SchedulerHooks, workload: Any, run_dir: Path, warmup_share: float = 0.0,
                       warmup_jobs: int = 0) -> dict[str, Any] | None:
    """The `pred_*` columns of a run whose scheduler planned with predictions (`predictions_s`):
    its planning estimates against the run times the jobs ran (jobs.csv), and the calibration of
    the quantiles it recorded, without the warm-up's jobs (as the schedule metrics); None for
    other schedulers. Computed after the run, from its output: the scheduler never sees the run
    times."""
    import math

    import numpy as np

    from schedlab.metrics import read_jobs_csv
    from schedlab.predictors.evaluate import planning_metrics

    planned = abilities.predictions_s(scheduler)
    if not planned:
        return None
    ran = {o.job_id.rpartition("!")[2]: o.finish_s - o.start_s for o in read_jobs_csv(run_dir / "jobs.csv")
           if o.start_s is not None and o.finish_s is not None}  # jobs.csv names jobs without the workload
    jobs = sorted(workload.jobs, key=lambda job: submission_order(job.id, job.submit_time_s))  # as after_warmup
    skipped = min(warmup_jobs, len(jobs)) if warmup_jobs else math.ceil(warmup_share * len(jobs))
    # a plan without an estimate (no walltime and no prediction: inf) says nothing of its accuracy
    jobs = [job for job in jobs[skipped:]
            if job.id.rpartition("!")[2] in ran and job.id in planned and math.isfinite(planned[job.id])]
    levels, recorded = abilities.recorded_quantiles(scheduler)
    # a job predicted before a distribution was fitted (walltimes until the first refit) has none: NaN
    quantiles = (np.array([recorded.get(job.id, [math.nan] * len(levels)) for job in jobs], dtype=float)
                 if jobs and levels and recorded else None)
    return planning_metrics(np.array([ran[job.id.rpartition("!")[2]] for job in jobs], dtype=float),
                            np.array([planned[job.id] for job in jobs], dtype=float),
                            np.array([np.inf if job.walltime_s is None else job.walltime_s for job in jobs]),
                            np.array([job.res for job in jobs], dtype=float), quantiles, levels)


def execute_runs(runs: list[Run], runs_dir: str) -> list[dict[str, Any]]:
    """A batch of runs sharing a workload, in one task: the worker loads it once."""
    return [execute_run(run, runs_dir) for run in runs]


def batches(runs: list[Run], workers: int) -> list[list[Run]]:
    """Runs grouped by workload file, groups cut so that there are about 4 tasks per worker (the
    pool stays busy to the end) and no task mixes workloads; the tasks longest expected first
    (`expected_cost`): a long run dispatched last would end alone, the other workers idle. The
    order changes no result (each run is its own; rows come back in plan order)."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.workload_path, []).append(run)
    size = max(1, math.ceil(len(runs) / (4 * workers)))
    costs = {run.id: expected_cost(run) for run in runs}
    tasks = []
    for group in groups.values():
        group = sorted(group, key=lambda run: -costs[run.id])  # the long runs of a workload together
        tasks += [group[i:i + size] for i in range(0, len(group), size)]
    return sorted(tasks, key=lambda task: -sum(costs[run.id] for run in task))


def expected_cost(run: Run) -> float:
    """A run's expected time, relative: its workload file's size (the jobs) times its scheduler's
    `relative_cost` (measured by benchmarks/bench_cores.py). Only the dispatch order uses it."""
    from schedlab.schedulers.base import scheduler_class

    try:
        size = os.path.getsize(run.workload_path)
    except OSError:
        size = 1
    try:
        weight = float(scheduler_class(run.scheduler_name).relative_cost)
    except Exception:  # a scheduler that cannot be looked up here fails in its own run, said there
        weight = 1.0
    return size * weight


@lru_cache(maxsize=1)
def metric_names() -> tuple[str, ...]:
    """The scalar metrics a run reports (the columns an incomplete run leaves NaN)."""
    from schedlab.metrics import compute_metrics

    return tuple(k for k, v in compute_metrics([], 1, 0.0).items() if not isinstance(v, dict))


def row(run: Run, summary: dict[str, Any]) -> dict[str, Any]:
    """One line of results.parquet: identity, options, versions, metrics, timing. An incomplete
    run's metrics are NaN (what it finished would rank a crashed scheduler best: a mean wait of
    the few jobs that ran); its partial figures are kept as JSON in `partial_metrics`."""
    source = summary.get("metrics_after_warmup") or summary.get("metrics", {})  # the campaign's metrics
    complete = bool(summary.get("complete"))
    metrics = {k: v for k, v in source.items() if not isinstance(v, dict)}
    partial = None
    if not complete:
        partial = json.dumps(metrics, sort_keys=True) if metrics else None
        metrics = dict.fromkeys((*metric_names(), *metrics), math.nan)
    if run.metrics:
        metrics = {k: v for k, v in metrics.items() if k in run.metrics}
    states = (source.get("jobs_per_state") or {}) if complete else {}
    timing = summary.get("timing", {})
    return {
        "run_id": run.id, "campaign": run.campaign, "workload": run.workload, "window": run.window,
        "instance": run.instance,
        "platform": run.platform, "scheduler": run.scheduler, "scheduler_name": run.scheduler_name,
        "options": json.dumps(run.options, sort_keys=True),
        **{f"opt_{k}": str(v) for k, v in run.options.items()},
        "seed": run.seed, "jitter_s": run.jitter_s, "repetition": run.repetition, "timing": run.timing,
        "complete": complete, "error": summary.get("error"),
        **metrics, **((summary.get("prediction_metrics") or {}) if complete else {}),
        "jobs_per_state": json.dumps(states, sort_keys=True), "partial_metrics": partial,
        "scheduling_time_s": timing.get("scheduling_time_s"), "simulation_time_s": timing.get("simulation_time_s"),
        "training_time_s": timing.get("training_time_s"),
        "wall_time_s": timing.get("wall_time_s"),
        "workload_path": run.workload_path, "workload_sha256": run.workload_sha256,
        "platform_path": run.platform_path, "platform_sha256": run.platform_sha256,
        "schedlab_version": summary.get("schedlab_version", __version__), **(summary.get("versions") or _versions()),
    }


def finished_row(run: Run, runs_dir: Path) -> dict[str, Any] | None:
    """The row of a run already done (its summary says complete), else None."""
    path = runs_dir / run.id / "summary.json"
    try:
        summary = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return row(run, summary) if summary.get("complete") else None


def _ignore_sigint() -> None:
    """Pool workers leave Ctrl-C to the parent, which stops them (and their runs) itself, die of
    SIGTERM and SIGHUP (the parent's handler, forked with them, is the parent's business) and with
    the parent however it dies; and compute with one thread each (cluster.ONE_THREAD)."""
    from schedlab.experiments.campaigns.cluster import one_thread_per_worker
    from schedlab.interrupts import worker_process

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker_process()
    one_thread_per_worker()


def _execute_batch(arguments: tuple[list[Run], str]) -> list[dict[str, Any]]:
    return execute_runs(*arguments)


def _completed_batches(todo: list[Run], runs_dir: Path, workers: int, dask: str | None,
                       connection: tuple[Any, list[Callable[[], None]]] | None = None):
    """Rows of finished batches as they come, from a process pool or a Dask cluster (`connection`:
    one made already, as (client, closers): its caller closes it)."""
    if dask is None and connection is None:
        import multiprocessing

        pool = multiprocessing.get_context().Pool(workers, initializer=_ignore_sigint)
        try:
            yield from pool.imap_unordered(_execute_batch, [(b, str(runs_dir)) for b in batches(todo, workers)])
            pool.close()
        finally:
            pool.terminate()  # on Ctrl-C or an error: no worker goes on writing runs
            pool.join()
        return
    from distributed import as_completed

    from schedlab.experiments.campaigns.cluster import dask_client

    if connection is None:
        assert dask is not None  # the pool served the case without either
        client, closers = dask_client(dask, workers)
    else:  # the caller's connection: the caller closes it
        client, closers = connection[0], []
    try:
        slots = workers if dask == "local" else max(sum(client.nthreads().values()), 1)
        futures = [client.submit(execute_runs, batch, str(runs_dir), pure=False) for batch in batches(todo, slots)]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            client.cancel(futures)
    finally:
        for closer in closers:
            closer()


class CampaignInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, SIGHUP: `stop`) during a campaign, after results.parquet was written for
    the runs that finished."""

    def __init__(self, finished: int, total: int, stop: KeyboardInterrupt | None = None) -> None:
        super().__init__(f"{finished} of {total} runs finished")
        self.finished, self.total = finished, total
        self.stop = stop if stop is not None else KeyboardInterrupt()


def run_campaign(runs: list[Run], out_dir: Path, *, workers: int = 1, dask: str | None = None,
                 progress: Callable[[int, int, int], None] | None = None,
                 connection: tuple[Any, list[Callable[[], None]]] | None = None,
                 say: Callable[[str], None] | None = None, run_bytes: int = 0) -> list[dict[str, Any]]:
    """Run what is not finished yet; returns every run's row (finished earlier or now), in plan order.
    `progress(done, total, failed)` is called as runs finish. `connection`: a Dask (client,
    closers) made by the caller. Ctrl-C writes results.parquet for the runs finished so far, then
    raises CampaignInterrupted (a rerun resumes)."""
    runs_dir = out_dir.resolve() / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(runs_dir)
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for run in runs:
        done = finished_row(run, runs_dir)
        if done is None:
            todo.append(run)
        else:
            rows[run.id] = done

    def report() -> None:
        if progress is not None:
            progress(len(rows), len(runs), sum(not row["complete"] for row in rows.values()))

    report()
    if dask is None and connection is None and todo:
        workers = _pool_size(workers, len(todo), run_bytes, say)
    try:
        if todo and workers == 1 and dask is None and connection is None:  # in this process: no pool to start
            for run in todo:
                rows[run.id] = execute_run(run, str(runs_dir))
                report()
        elif todo:
            for results in _completed_batches(todo, runs_dir, workers, dask, connection):
                for result in results:
                    rows[result["run_id"]] = result
                report()
    except OutputError:  # a full disk: what finished is kept for the rerun, said if it still can be
        if dask is None and connection is None:  # the pool is stopped: its runs cut short are not kept
            _remove_leftovers(runs_dir)
        finished = [rows[run.id] for run in runs if run.id in rows]
        with contextlib.suppress(OutputError):
            write_results(finished, out_dir / "results.parquet")
        raise
    except KeyboardInterrupt as stop:
        if dask is None and connection is None:  # the pool is stopped: its runs cut short are not kept
            _remove_leftovers(runs_dir)
        for run in runs:  # runs a worker finished in a batch that had not come back yet are on disk
            if run.id not in rows:
                done = finished_row(run, runs_dir)
                if done is not None:
                    rows[run.id] = done
        finished = [rows[run.id] for run in runs if run.id in rows]
        write_results(finished, out_dir / "results.parquet")
        raise CampaignInterrupted(len(finished), len(runs), stop) from None
    ordered = [rows[run.id] for run in runs]
    if dask is None and connection is None:  # a pool's workers have all ended (a Dask worker whose job was
        _remove_leftovers(runs_dir)          # cancelled may still be writing: the next run removes its folder)
    write_results(ordered, out_dir / "results.parquet")
    return ordered


def _pool_size(workers: int, nb_todo: int, run_bytes: int, say: Callable[[str], None] | None) -> int:
    """No more pool workers than runs to do (idle processes cost their start: 1,000 of them over a
    minute) nor than the memory holds runs of `run_bytes` (schedlab.memory's estimate); said."""
    from schedlab.memory import workers_that_fit

    nb_workers, why = workers, ""
    if nb_todo < nb_workers:
        nb_workers, why = nb_todo, f"{nb_todo} run{'s' if nb_todo > 1 else ''} to do"
    if run_bytes > 0:
        nb_fit, why_fit = workers_that_fit(run_bytes)
        if nb_fit < nb_workers:
            nb_workers, why = nb_fit, why_fit
    if nb_workers < workers and say is not None:
        say(f"note: --workers {workers}: {why}, so {nb_workers} worker{'s' if nb_workers > 1 else ''}")
    return nb_workers


def _remove_leftovers(runs_dir: Path) -> None:
    """Runs cut short by a kill (never complete: they start again), when no worker is writing."""
    for leftover in runs_dir.glob(".*.part"):
        shutil.rmtree(leftover, ignore_errors=True)


def write_results(rows: Iterable[dict[str, Any]], path: Path) -> None:
    """results.parquet replaced as a whole; a failure to write it (a full disk) is an OutputError
    naming it, the partial file removed and the earlier results.parquet kept."""
    import pandas as pd

    from schedlab.paths import writing

    frame = pd.DataFrame(list(rows))
    temporary = path.with_suffix(".parquet.part")
    try:
        with writing(path):
            frame.to_parquet(temporary, index=False)
            os.replace(temporary, path)
    except OutputError as exc:
        temporary.unlink(missing_ok=True)
        kept = "the earlier one is kept" if path.is_file() else "the runs' own files are complete: a rerun writes it"
        raise OutputError(f"{exc} ({kept})") from exc.__cause__
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _versions() -> dict[str, str]:
    from schedlab.experiments.campaigns.versions import library_versions

    return library_versions()
