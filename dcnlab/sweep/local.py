"""The local process pool of :func:`dcnlab.sweep.pool.fan_out`: fails fast, names a worker that died, keeps
the workers' output off stdout, stops its workers on every way out.

* The first task that raises ends the sweep at once, its exception going to the caller: the tasks not started
  are cancelled and the workers still in a task are stopped (SIGTERM, SIGKILL after :data:`STOP_GRACE`), not
  waited for. So do a Ctrl-C, a SIGTERM or a SIGHUP (:mod:`dcnlab.cli` turns them into ``KeyboardInterrupt``)
  and a caller that stops reading (closes the generator).
* A worker that dies in a task (a plug-in's ``os._exit``, the kernel's out-of-memory killer, a ``kill``) is one
  :class:`WorkerDied` naming the task, its plug-ins and how the worker ended, not a bare ``BrokenProcessPool``:
  each worker marks the task it runs in a shared array (:func:`_run`).
* A worker's stdout is its stderr, file descriptor 1 included (:func:`_init_worker`): what a task prints, a
  plug-in's ``print`` or a process it starts, never reaches the command's stdout, which may be ``--json``.

May import: the standard library and :mod:`dcnlab.topos`.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

from dcnlab.topos.errors import UserError

R = TypeVar("R")


def fan_out(fn: Callable[..., R], tasks: Sequence[tuple[Any, ...]], n: int) -> Iterator[tuple[int, R]]:
    """Run ``fn(*task)`` for every task on ``n`` local processes and yield ``(index, result)`` as each finishes
    (:func:`dcnlab.sweep.pool.fan_out`); fails fast (see the module doc)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    ctx = multiprocessing.get_context()
    started = ctx.RawArray("q", len(tasks))     # per task: the pid of the worker that runs it, -1 once done
    pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init_worker, initargs=(started,))
    finished = False
    try:
        futures = {pool.submit(_run, fn, i, *t): i for i, t in enumerate(tasks)}
        for fut in as_completed(futures):
            try:
                result = fut.result()
            except BrokenProcessPool:
                workers, manager = _workers(pool), getattr(pool, "_executor_manager_thread", None)
                stop_processes(workers.values())
                if manager is not None:     # it reaps the workers too: until it is done, an exit code read here
                    manager.join()          # may still be None (its waitpid got the status, ours ECHILD)
                raise WorkerDied(_who_died(fn, tasks, started, workers)) from None
            yield futures[fut], result
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:                   # a task raised, a signal, a reader that left: start nothing more, stop what runs
            workers, manager = _workers(pool), getattr(pool, "_executor_manager_thread", None)
            pool.shutdown(wait=False, cancel_futures=True)
            stop_processes(workers.values())
            if manager is not None:
                manager.join()


class WorkerDied(UserError):
    """A local worker process ended in the middle of a task: a plug-in called ``os._exit``, the kernel's
    out-of-memory killer or a ``kill`` ended it. The message names the task and how the worker ended."""


STOP_GRACE = 5.0
"""Seconds a worker has to end on SIGTERM before it is killed (SIGKILL)."""

_STARTED: Any = None
"""In a local worker: the sweep's shared array, task index -> pid of the worker running it (-1: done)."""


def _init_worker(started: Any) -> None:
    """Every local worker, once: its stdout is its stderr (file descriptor 1 too), so that nothing a task prints,
    a plug-in's ``print`` or a child process it starts, reaches the command's stdout; SIGTERM ends it (the way
    the parent stops it), Ctrl-C and a hang-up are the parent's to handle (it then stops its workers)."""
    global _STARTED
    _STARTED = started
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def _run(fn: Callable[..., R], index: int, *task: Any) -> R:
    """In a local worker: ``fn(*task)``, marking task ``index`` as running here until it returns."""
    if _STARTED is not None:
        _STARTED[index] = os.getpid()
    result = fn(*task)
    if _STARTED is not None:
        _STARTED[index] = -1
    return result


def _workers(pool: Any) -> dict[int, Any]:
    """The pool's worker processes by pid (``ProcessPoolExecutor._processes``, the same from Python 3.10 to
    3.13; empty once the pool is shut down or where it is not there)."""
    return dict(getattr(pool, "_processes", None) or {})


def stop_processes(processes: Iterable[Any], grace: float = STOP_GRACE) -> None:
    """End ``multiprocessing`` processes this process started: SIGTERM, then SIGKILL to any still there after
    ``grace`` seconds; each is joined (reaped)."""
    procs = list(processes)
    for p in procs:
        if p.exitcode is None:
            p.terminate()
    deadline = time.monotonic() + grace
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.exitcode is None:
            p.kill()
            p.join()


def how_ended(exitcode: int | None) -> str:
    """A process's end in words, from ``multiprocessing``'s ``exitcode``."""
    if exitcode is None:
        return "ended"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"was killed by {name}" + (" (out of memory, or kill -9)" if exitcode == -signal.SIGKILL else "")
    return f"exited with status {exitcode}"


def _who_died(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], started: Any,
              workers: Mapping[int, Any]) -> str:
    """The message of a :class:`WorkerDied`: the task(s) whose worker died and how it ended. Once one worker
    dies the pool ends the others with SIGTERM, and so do we: a task whose worker ended otherwise is the one."""
    running = [(i, int(started[i])) for i in range(len(tasks)) if started[i] > 0]
    ended = {i: getattr(workers.get(pid), "exitcode", None) for i, pid in running}
    culprits = [i for i in ended if ended[i] != -signal.SIGTERM] or list(ended)
    if not culprits:
        return (f"a worker process of the sweep ended before it took a task ({len(tasks)} tasks of "
                f"{_name(fn)}); no task ran")
    what = "; ".join(f"{describe_task(fn, tasks[i])}" for i in culprits[:3])
    more = f" (and {len(culprits) - 3} more)" if len(culprits) > 3 else ""
    how = how_ended(ended[culprits[0]]) if len({ended[i] for i in culprits}) == 1 else "ended"
    return (f"a worker process {how} while running {what}{more}; the sweep stopped, its other tasks were "
            f"cancelled")


TASK_TEXT = 160
"""Characters of a task's arguments kept in a message."""


def describe_task(fn: Callable[..., Any], task: tuple[Any, ...]) -> str:
    """A task in one line for a message: its function and its arguments' names and numbers (flattened from
    tuples, lists and dataclasses, e.g. a part's name, a pattern), then the plug-ins (``package.module:name`` or
    ``file.py:name`` references) among them."""
    from dcnlab.topos.inputs import escape

    leaves = [str(x) for x in _leaves(task, 4)]
    refs = list(dict.fromkeys(x for x in leaves if _is_reference(x)))
    args = ", ".join(x for x in leaves if x not in refs)
    if len(args) > TASK_TEXT:
        args = args[:TASK_TEXT] + "..."
    text = f"task {_name(fn)}({args})"
    if refs:
        text += (" with plug-ins " if len(refs) > 1 else " with plug-in ") + ", ".join(refs)
    return escape(" ".join(text.split()))


def _is_reference(text: str) -> bool:
    """``package.module:name`` or ``file.py:name`` (a fabric spec or a pattern, ``bcube:n=4``, is not one)."""
    target, colon, attr = text.rpartition(":")
    if not colon or not all(p.isidentifier() for p in attr.split(".")):
        return False
    return target.endswith(".py") or "/" in target or all(p.isidentifier() for p in target.split("."))


def _name(obj: Any) -> str:
    return str(getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__)


def _leaves(obj: Any, depth: int) -> Iterator[Any]:
    """The strings and numbers in ``obj`` (tuples, lists, dataclasses, to ``depth`` levels), callables by name."""
    if isinstance(obj, (str, int, float)) and not isinstance(obj, bool):
        yield obj
    elif callable(obj) and not is_dataclass(obj):
        yield _name(obj)
    elif depth <= 0:
        return
    elif is_dataclass(obj) and not isinstance(obj, type):
        for f in fields(obj):
            yield from _leaves(getattr(obj, f.name, None), depth - 1)
    elif isinstance(obj, (tuple, list)):
        for x in obj[:16]:
            yield from _leaves(x, depth - 1)
