"""The Dask worker plugin that compiles (or loads) the engine's kernels once per worker process.

Imported only with ``--cluster`` (:class:`dcnlab.sweep.pool.Cluster`), since it needs
``dask.distributed``. The warm-up runs in a thread, so that the worker keeps answering the scheduler's
heartbeats during a fresh numba compile (about 40 s on a 2-core machine); its duration is kept in the
worker process and read back by :func:`warm_seconds` (``client.run``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from distributed import WorkerPlugin

_SECONDS: dict[str, float] = {}
"""In a worker process: seconds the first warm-up of each plugin took there."""


class WarmUp(WorkerPlugin):
    """Runs ``fn`` (a module-level function) once in every worker process, now and in workers that join or
    are restarted later (the scheduler sends registered plugins to every new worker)."""

    idempotent = False

    def __init__(self, fn: Callable[[], object], name: str) -> None:
        self.fn, self.name = fn, name

    async def setup(self, worker: Any) -> None:
        if self.name in _SECONDS:
            return
        t0 = time.perf_counter()
        await asyncio.to_thread(self.fn)
        _SECONDS[self.name] = time.perf_counter() - t0


def warm_seconds(name: str) -> float | None:
    """In a worker process: the seconds of the first warm-up ``name`` there (None: not run)."""
    return _SECONDS.get(name)
