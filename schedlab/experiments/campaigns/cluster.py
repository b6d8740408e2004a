"""Dask for campaigns that outgrow one machine.

`--dask local` starts a LocalCluster of processes here; `--dask tcp://HOST:PORT` joins a running
Dask scheduler; `--dask slurm` / `--dask pbs` start workers as batch jobs through dask-jobqueue,
configured the dask way (`~/.config/dask/jobqueue.yaml`, or DASK_CONFIG pointing at a folder that
holds one; see experiments/jobqueue.yaml). Workers need schedlab installed and the
campaign's output folder on a shared file system.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from schedlab.errors import InputError

JOBQUEUE = {"slurm": "SLURMCluster", "pbs": "PBSCluster"}


#: what a campaign's worker process computes with: one thread (the workers are the parallelism;
#: BLAS, OpenMP and numba pools the size of the machine in each worker oversubscribe it, e.g. the
#: hybrid's reliability model: 7.8 s with 2 threads, 4.6 s with one, beside another run; the same
#: schedule either way). A value the user set in the environment is kept.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


#: a local cluster's own work kept out of the runs' way: each worker's statistical profiler (a stack
#: sample of the running task every 10 ms), and the ticks and monitors that wake its event loop, take
#: the GIL and the cores the runs compute on. Measured on 2 cores, 8 hybrid runs on 2 workers: 31.9 s
#: with Dask's defaults, 27.8 s with these, the process pool 27.5 s (same results).
QUIET_LOCAL = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
               "distributed.worker.memory.monitor-interval": "1s", "distributed.admin.system-monitor.interval": "5s",
               "distributed.admin.system-monitor.gil.enabled": False}


def one_thread_per_worker() -> None:
    """In a worker process: one thread for the libraries loaded now (threadpoolctl) and later (the
    environment they read when they load)."""
    for key, value in ONE_THREAD.items():
        os.environ.setdefault(key, value)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # scikit-learn brings it; without it the environment still serves later loads
        return
    threadpool_limits(limits=1)


#: lines every batch job's script runs before its worker starts, after the configuration's own
#: prologue. A batch job starts in the folder it was submitted from, and `python -m` puts that folder
#: first on sys.path: submitted from a source checkout, the worker imported the checkout's
#: `schedlab/` (without its subpackages, which live beside it) instead of the installed package, and
#: every run failed. PYTHONSAFEPATH (Python 3.11+) leaves that folder off sys.path, wherever the job
#: starts. A thread count the configuration set is kept.
WORKER_PROLOGUE = ["export PYTHONSAFEPATH=1",
                   *(f"export {key}=${{{key}:-{value}}}" for key, value in ONE_THREAD.items())]


def import_jobqueue():
    """dask_jobqueue, with Ctrl-C left as it was: importing it sets a SIGINT handler that exits with
    status 0 (its runner module's, for processes it starts), so Ctrl-C on a campaign ended it
    silently, with no results.parquet for the runs that had finished."""
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    try:
        import dask_jobqueue
    except ImportError:
        return None
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGINT, previous)
    return dask_jobqueue


def jobqueue_cluster(kind: str):
    """A dask-jobqueue cluster object from the dask configuration (no job is submitted yet)."""
    dask_jobqueue = import_jobqueue()
    if dask_jobqueue is None:
        raise InputError(f"--dask {kind} needs dask-jobqueue (pip install 'schedlab[cluster]')")
    import dask.config
    # the configuration's own lines first (`env-extra`: their name before dask-jobqueue 0.8, which
    # ignores it once job_script_prologue is passed)
    prologue = list(dask.config.get(f"jobqueue.{kind}.job-script-prologue", default=None)
                    or dask.config.get(f"jobqueue.{kind}.env-extra", default=None) or [])
    return getattr(dask_jobqueue, JOBQUEUE[kind])(job_script_prologue=[*prologue, *WORKER_PROLOGUE])


def dask_client(target: str, workers: int) -> tuple[Any, list[Callable[[], None]]]:
    """A distributed Client for `target` and the callables that close what was started."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError("--dask needs dask's distributed scheduler (pip install 'schedlab[dask]')") from None
    if target == "local":
        import dask.config

        with dask.config.set(QUIET_LOCAL):  # the workers' processes are given the configuration of their start
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   env={key: os.environ.get(key, value) for key, value in ONE_THREAD.items()})
        client = Client(cluster)
        def close_cluster() -> None:
            cluster.close()

        return client, [client.close, close_cluster]
    if target in JOBQUEUE:
        cluster = jobqueue_cluster(target)
        cluster.scale(jobs=workers)
        client = Client(cluster)
        return client, [client.close, cluster.close]
    if not target.startswith(("tcp://", "tls://", "ucx://")):
        raise InputError(f"--dask {target!r}: expected local, slurm, pbs or a scheduler address (tcp://HOST:PORT)")
    if target.startswith("tcp://"):  # a refused or unroutable address is said at once, not after Dask's retries
        import socket

        host, _, port = target[len("tcp://"):].rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
        except (OSError, ValueError) as exc:
            raise InputError(f"--dask {target}: cannot reach the Dask scheduler: {exc}") from None
    try:
        client = Client(target, timeout="10s")
    except OSError as exc:
        raise InputError(f"--dask {target}: cannot reach the Dask scheduler: {exc}") from None
    return client, [client.close]
