"""A content cache of model task results, so that a second ``dcnlab reproduce all`` runs in seconds.

:func:`fan_out` is :func:`dcnlab.sweep.pool.fan_out` with a cache in front: a task whose result is stored
is not run again, the others run on the pool (or the cluster) and their results are stored as they come back.
A result is found by a key that hashes

* **the code**: every source file of the installed ``dcnlab`` package (``*.py``, ``*.json``, ``*.p4``; edit one
  and every key changes) and the versions of Python, numpy, numba, scipy and networkx (:func:`code_version`);
* **the task**: the function and its arguments as pickled (functions and classes by module and name; the
  seeds, points and rounds are the arguments, so a task keyed here is one pure function of its key).

Only dcnlab's own tasks are cached: a task that names any function or class from outside ``dcnlab``
(a plug-in's reproduction, a user's algorithm object) always runs, since its code is not in the key. Every
model task of dcnlab's reproductions is deterministic (each round draws from its own seed); the timings some
results carry (a round's seconds, a route computation's wall and CPU time) are those of the run that
computed them.

Where: ``$DCNLAB_CACHE_DIR`` or ``$XDG_CACHE_HOME/dcnlab/tasks`` (``~/.cache/dcnlab/tasks``), one directory
per code version (the :data:`KEEP` most recently used are kept; older ones, written by this module, are
removed), one pickle per result, written atomically. Off with ``DCNLAB_NO_CACHE=1`` (``reproduce all
--no-cache`` sets it); deleting the directory is always safe.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import pickle
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger(__name__)

R = TypeVar("R")

OFF_ENV = "DCNLAB_NO_CACHE"
DIR_ENV = "DCNLAB_CACHE_DIR"
KEEP = 4
"""Code versions kept in the cache directory (the most recently used)."""
PREFIX = "v-"
"""Name prefix of a version directory (only those are ever removed)."""
TRUSTED = ("dcnlab", "builtins", "numpy", "collections", "copyreg", "_codecs", "fractions", "decimal", "enum",
           "pathlib", "datetime")
"""Modules whose functions and classes a cached task may name (their code is in :func:`code_version` or is
the interpreter's)."""
SOURCES = (".py", ".json", ".p4")


def enabled() -> bool:
    """Whether results are cached (not with ``DCNLAB_NO_CACHE`` set to anything but ``0`` or empty)."""
    return os.environ.get(OFF_ENV, "") in ("", "0")


def root() -> Path:
    """The cache directory (:data:`DIR_ENV`, else the XDG cache home)."""
    if os.environ.get(DIR_ENV):
        return Path(os.environ[DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dcnlab" / "tasks"


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of the ``dcnlab`` package's sources and the versions of the libraries its results depend on."""
    from importlib import metadata

    import dcnlab

    h = hashlib.sha256()
    pkg = Path(dcnlab.__file__).resolve().parent
    for path in sorted(p for p in pkg.rglob("*") if p.suffix in SOURCES and "__pycache__" not in p.parts):
        h.update(path.relative_to(pkg).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    h.update(sys.version.encode())
    for dist in ("numpy", "numba", "scipy", "networkx"):
        try:
            h.update(f"{dist}={metadata.version(dist)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist}=none".encode())
    return h.hexdigest()


class _Pickler(pickle.Pickler):
    """Pickles a task and notes the modules of every function and class it names."""

    def __init__(self, buf: io.BytesIO) -> None:
        super().__init__(buf, protocol=4)
        self.modules: set[str] = set()

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type) or callable(obj):
            self.modules.add(getattr(obj, "__module__", None) or "?")
        self.modules.add(type(obj).__module__)
        return NotImplemented


def task_key(fn: Callable[..., Any], task: Sequence[Any]) -> str | None:
    """The key of ``fn(*task)`` (None: not cacheable: it names code from outside :data:`TRUSTED`, or does
    not pickle)."""
    buf = io.BytesIO()
    p = _Pickler(buf)
    try:
        p.dump((fn, tuple(task)))
    except Exception:       # noqa: BLE001 - an unpicklable task simply runs
        return None
    if not all(m.split(".")[0] in TRUSTED for m in p.modules):
        return None
    return hashlib.sha256(code_version().encode() + buf.getvalue()).hexdigest()


class Store:
    """The results of one code version: ``root()/v-<version>/<key[:2]>/<key>.pkl``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.dir = base / (PREFIX + code_version()[:24])

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.pkl"

    def get(self, key: str) -> tuple[bool, Any]:
        """(True, the result) when stored and readable, else (False, None)."""
        try:
            with open(self.path(key), "rb") as f:
                return True, pickle.load(f)
        except FileNotFoundError:
            return False, None
        except Exception as e:      # noqa: BLE001 - a damaged entry is recomputed (and rewritten)
            log.debug("task cache: unreadable %s: %s", self.path(key), e)
            return False, None

    def put(self, key: str, result: Any) -> None:
        """Store ``result`` (atomically; a failure to write only costs the next run the time)."""
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(result, f, protocol=4)
            os.replace(tmp, path)
        except Exception as e:      # noqa: BLE001
            log.debug("task cache: cannot write %s: %s", path, e)

    def touch_and_prune(self) -> None:
        """Mark this version used now; remove the version directories beyond the :data:`KEEP` most recent."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            os.utime(self.dir, (time.time(), time.time()))
            versions = sorted((d for d in self.base.iterdir() if d.is_dir() and d.name.startswith(PREFIX)),
                              key=lambda d: d.stat().st_mtime, reverse=True)
            for old in versions[KEEP:]:
                shutil.rmtree(old, ignore_errors=True)
        except OSError as e:
            log.debug("task cache: %s", e)


def fan_out(fn: Callable[..., R], tasks: Sequence[tuple[Any, ...]], workers: int | None = None,
            cluster: Any = None, warm: Callable[[], object] | None = None) -> Iterator[tuple[int, R]]:
    """:func:`dcnlab.sweep.pool.fan_out` (same arguments, ``(index, result)`` as each is ready), the stored
    results first, then the others from the pool; with the cache off (:func:`enabled`) exactly ``pool.fan_out``."""
    from dcnlab.sweep import pool

    if not enabled() or not tasks:
        yield from pool.fan_out(fn, tasks, workers, cluster, warm)
        return
    store = Store(root())
    store.touch_and_prune()
    keys = [task_key(fn, t) for t in tasks]
    missing = []
    for i, key in enumerate(keys):
        found, result = store.get(key) if key is not None else (False, None)
        if found:
            yield i, result
        else:
            missing.append(i)
    if not missing:
        return
    for j, result in pool.fan_out(fn, [tasks[i] for i in missing], workers, cluster, warm):
        i = missing[j]
        key = keys[i]
        if key is not None:
            store.put(key, result)
        yield i, result
