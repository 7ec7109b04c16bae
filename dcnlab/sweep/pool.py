"""Where model rounds run: one fan-out for every sweep, on local processes or a Dask cluster.

Every command that fans out rounds (``reproduce all|aggregation|multicast|congestion`` on the model
backend, the readings of ``reproduce all``, ``bench aggregation`` and ``bench rounds``) hands its
tasks to :func:`fan_out`, which yields ``(index, result)`` as each task finishes, so that the
caller's progress display counts rounds finished across all workers. By default the tasks run on a
local :class:`~concurrent.futures.ProcessPoolExecutor` (``--workers`` processes, every core unless
told); with ``--cluster ADDRESS`` they run on a ``dask.distributed`` scheduler's workers
(:class:`Cluster`), the results coming back to the machine that runs ``dcnlab``, which writes the
report directory as usual.

Results do not depend on where a task runs: every round draws from its own seed (``(seed, part,
point, round)`` in :mod:`dcnlab.reproduce.aggregation.model`), never from the worker or the
order, and callers put the results back in task order (:func:`ordered`) before averaging them, so
that even a floating-point sum adds in the same order whatever finished first.

Failures: a task that raises is retried :data:`RETRIES` times (``client.map(..., retries=)``);
a task whose worker dies (killed, out of memory) is rescheduled by the scheduler on another worker
(Dask's ``distributed.scheduler.allowed-failures``, 3 by default), so a worker lost mid-sweep loses
no round. Tasks are submitted with ``pure=False``: two rounds with equal arguments are two tasks.

On the local pool (:mod:`~dcnlab.sweep.local`) a sweep fails fast: the first task that raises ends it at once;
what has not started never starts and the workers still in a task are stopped, not waited for. A worker that
dies in a task is one :class:`~dcnlab.sweep.local.WorkerDied` naming the task, and a worker's stdout is its
stderr (a plug-in's prints never reach a ``--json`` output).

Compiled engine: the aggregation rounds use numba kernels (:mod:`dcnlab.controller.aggregation.engine`,
``cache=True``). Locally they are compiled (or loaded from numba's on-disk cache) once in the parent
before the pool forks, as before. On a cluster :meth:`Cluster.warm` registers a worker plugin that
runs the same warm-up once in every worker process, now and in any worker that joins or is
restarted later, in a thread so that the worker keeps answering the scheduler; the kernels are then
written to the cache of the worker's ``dcnlab`` installation (numba falls back to a per-user cache
directory where ``site-packages`` is read-only), so the compile happens once per worker machine and
later workers only load it. Measured on this 2-core machine while a C++ build loaded both cores
(load average 5-7; LocalCluster workers with an empty ``NUMBA_CACHE_DIR``): a fresh compile took 90 s
for one worker and 86 s each for two compiling at once (about 40 s on idle cores, see the engine's
docstring); loading the cached kernels takes 0.7-1.4 s per worker process.

Overhead (``dcnlab bench rounds``, same machine and load, two local processes against a LocalCluster
of two single-threaded workers): 1.61 against 1.51 rounds/s for 1,000x1,000 shuffles (about 0.3 s of an idle core
each), 103 against 53 rounds/s for 100x100 ones (a few ms each): Dask adds about 15-20 ms per
task, nothing next to the paper-scale rounds.

Workers need only ``pip install 'dcnlab[cluster]'`` (the same version as the client: the tasks are
this package's functions, sent by reference). One thread per worker process
(``dask worker ADDRESS --nworkers N --nthreads 1``): the rounds are CPU-bound Python and numba code
that holds the GIL, so more threads in one process would not run more rounds.

``dask`` is imported only when ``--cluster`` is given: ``import dcnlab`` and the local pool never
need it.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from typing import Any, TypeVar

from dcnlab.sweep import local
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

R = TypeVar("R")

RETRIES = 3
"""Retries of a task that raises (a worker's death is handled by the scheduler, see the module doc)."""
CONNECT_TIMEOUT = 10.0
"""Seconds to reach the scheduler before ``--cluster`` is reported unreachable."""
INSTALL_HINT = "--cluster needs dask.distributed: pip install 'dcnlab[cluster]'"
_ADDRESS = re.compile(r"(?:tcp://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?):([0-9]{1,5})")
_ACTIVE: ContextVar[Cluster | None] = ContextVar("dcnlab_cluster", default=None)


def cluster_address(text: str) -> str:
    """The ``type=`` of ``--cluster``: ``tcp://HOST:PORT`` or ``HOST:PORT`` (port 1..65535), as ``tcp://HOST:PORT``.

    Raises ``argparse.ArgumentTypeError`` (a one-line usage error, exit status 2) otherwise."""
    import argparse

    m = _ADDRESS.fullmatch(text) if isinstance(text, str) else None
    if m is None or not 1 <= int(m.group(2)) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a Dask scheduler address; valid: tcp://HOST:PORT or HOST:PORT, port 1..65535 "
            f"(e.g. tcp://scheduler-host:8786, what 'dask scheduler' prints)")
    return f"tcp://{m.group(1)}:{int(m.group(2))}"


def add_cluster_option(p: Any, what: str = "rounds") -> None:
    """``--cluster ADDRESS`` on an argparse parser (every command that fans out rounds)."""
    p.add_argument("--cluster", type=cluster_address, metavar="ADDRESS",
                   help=f"run the {what} on a Dask cluster: the scheduler's address, tcp://HOST:PORT (needs "
                        "pip install 'dcnlab[cluster]' here and on the workers; default: local processes)")


def import_distributed() -> Any:
    """``distributed`` (dask's), or the UserError that says how to install it."""
    try:
        import distributed
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return distributed


class Cluster:
    """A connection to a ``dask.distributed`` scheduler, as a context manager.

    Inside ``with Cluster(address):`` every :func:`fan_out` without an explicit ``cluster`` runs on it
    (the readings of ``reproduce all`` fan out several times). Closing it closes the connection, not
    the cluster."""

    def __init__(self, address: str, timeout: float | None = None) -> None:
        self.address = address
        self.timeout = CONNECT_TIMEOUT if timeout is None else timeout
        self.client: Any = None
        self.warm_seconds: dict[str, float] = {}
        """Per worker address: seconds its first warm-up took (see :meth:`warm`)."""
        self._warmed: set[str] = set()
        self._token: Any = None

    def connect(self) -> Cluster:
        distributed = import_distributed()
        try:
            self.client = distributed.Client(self.address, timeout=self.timeout, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise UserError(f"--cluster {self.address}: no Dask scheduler answered within {self.timeout:g} s "
                            f"({type(e).__name__}); start one with 'dask scheduler' and give the address it "
                            "prints") from None
        if not self.client.nthreads():
            log.warning("the Dask scheduler at %s has no workers yet: the tasks wait until some join "
                        "(dask worker %s --nthreads 1)", self.address, self.address)
        return self

    def __enter__(self) -> Cluster:
        if self.client is None:
            self.connect()
        self._token = _ACTIVE.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
        if self.client is not None:
            self.client.close()
            self.client = None

    @property
    def workers(self) -> int:
        """Worker threads now connected (one per worker process with ``--nthreads 1``)."""
        return sum(int(n) for n in self.client.nthreads().values())

    def describe(self) -> str:
        return f"Dask cluster {self.address} ({self.workers} worker threads)"

    def warm(self, fn: Callable[[], object]) -> dict[str, float]:
        """Run ``fn`` (a module-level function) once in every worker process, now and in workers that join
        later; returns the seconds it took on each worker (its first run there)."""
        name = f"dcnlab-warm:{fn.__module__}.{fn.__qualname__}"
        if name not in self._warmed:
            t0 = time.perf_counter()
            from dcnlab.sweep.warm_plugin import WarmUp

            self.client.register_plugin(WarmUp(fn, name), name=name)
            self._warmed.add(name)
            log.info("warm-up %s on the workers: %.1f s", name, time.perf_counter() - t0)
        from dcnlab.sweep.warm_plugin import warm_seconds

        secs = {w: float(s) for w, s in self.client.run(warm_seconds, name).items() if s is not None}
        self.warm_seconds.update(secs)
        return secs

    def map(self, fn: Callable[..., R], tasks: Sequence[tuple[Any, ...]]) -> Iterator[tuple[int, R]]:
        """``fn(*task)`` for every task on the workers, in submission order (the first submitted run first);
        yields ``(index, result)`` as each finishes."""
        distributed = import_distributed()
        if not tasks:
            return
        futures = self.client.map(_apply, list(tasks), _fn=fn, pure=False, retries=RETRIES)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut, result in distributed.as_completed(futures, loop=self.client.loop, with_results=True):
                yield index[fut.key], result
                fut.release()
        finally:
            self.client.cancel([f for f in futures if not f.done()])


def _apply(task: tuple[Any, ...], _fn: Callable[..., Any]) -> Any:
    return _fn(*task)


def local_cluster(n_workers: int) -> Any:
    """A ``LocalCluster`` of ``n_workers`` single-threaded worker processes (``bench rounds`` without
    ``--cluster``, the tests). Everything it opens listens on 127.0.0.1 only: the scheduler, the workers, and
    the scheduler's HTTP routes (health, metrics; no dashboard) on a free port rather than the fixed 8787.
    Close it (it is a context manager)."""
    distributed = import_distributed()
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                    dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})


def active() -> Cluster | None:
    """The cluster of the innermost ``with Cluster(...)`` block, if any."""
    return _ACTIVE.get()


def connect(address: str | None) -> AbstractContextManager[Cluster | None]:
    """``with connect(args.cluster) as cluster:``: a :class:`Cluster` for an address, nothing for None (local)."""
    return Cluster(address) if address else nullcontext(None)


def fan_out(fn: Callable[..., R], tasks: Sequence[tuple[Any, ...]], workers: int | None = None,
            cluster: Cluster | None = None, warm: Callable[[], object] | None = None) -> Iterator[tuple[int, R]]:
    """Run ``fn(*task)`` for every task and yield ``(index, result)`` as each finishes.

    ``cluster`` (default: :func:`active`) runs them on a Dask cluster; else ``workers`` local processes
    (default every core; 1: in this process). Tasks are started in the order given (put the longest
    first). ``warm`` (a module-level function, e.g. the engine's ``warm_up``) runs first: in this process
    before the local pool forks, or once in every worker process of the cluster. ``fn`` and the tasks
    must be picklable; ``fn`` a module-level function."""
    cluster = cluster or active()
    if cluster is not None:
        if warm is not None:
            cluster.warm(warm)
        yield from cluster.map(fn, tasks)
        return
    if warm is not None:
        warm()
    n = min(workers or os.cpu_count() or 1, len(tasks))
    if n <= 1:
        for i, t in enumerate(tasks):
            yield i, fn(*t)
        return
    yield from local.fan_out(fn, tasks, n)


def run_all(fn: Callable[..., R], tasks: Sequence[tuple[Any, ...]], workers: int | None = None,
            cluster: Cluster | None = None, warm: Callable[[], object] | None = None,
            done: Callable[[int, R], None] | None = None) -> list[R]:
    """:func:`fan_out`, the results in task order; ``done(index, result)`` is called as each finishes."""
    return ordered(fan_out(fn, tasks, workers, cluster, warm), len(tasks), done)


def ordered(results: Iterable[tuple[int, R]], n: int, done: Callable[[int, R], None] | None = None) -> list[R]:
    """``(index, result)`` pairs (any order) as a list in index order."""
    out: list[Any] = [None] * n
    for i, r in results:
        out[i] = r
        if done is not None:
            done(i, r)
    return out


def describe(workers: int | None, cluster: Cluster | None = None) -> str:
    """Where the rounds ran, in words (for the final line of a command)."""
    cluster = cluster or active()
    if cluster is not None:
        return cluster.describe()
    return f"{workers or os.cpu_count() or 1} workers"
