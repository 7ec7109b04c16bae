"""``dcnlab bench rounds``: model rounds per second on the local process pool and on a Dask cluster, side by side.

The rounds are ``reproduce aggregation``'s 003-size rounds (one m x n shuffle on BCube(8,5), every
method; m = n = ``--size``, 1,000 by default: about 0.3 s of one core each), run twice through
:func:`dcnlab.sweep.pool.fan_out`: on ``--workers`` local processes, then on the cluster at
``--cluster ADDRESS``. Without ``--cluster`` the command starts a ``LocalCluster`` of its own on this
machine (one single-threaded worker process per local worker, bound to 127.0.0.1, no dashboard) and
closes it at the end, so that the two columns compare the pool with Dask's overhead on the same cores.

The engine's warm-up is timed apart from the rounds: locally once in this process, on the cluster
once per worker process (:meth:`dcnlab.sweep.pool.Cluster.warm`; the slowest worker's is
shown). Every round draws from its own seed, so the two runs must give the same traffic, round for
round; the last line says whether they did (exit status 1 if not).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from dcnlab.sweep.pool import import_distributed, local_cluster

log = logging.getLogger(__name__)

DEFAULT_ROUNDS = 40
DEFAULT_SIZE = 1000
SEED = 11
COMPARED = ("traffic", "links", "aggregators", "receiver_input")
"""What must match round for round (times differ, of course)."""


def tasks(rounds: int, size: int) -> list[tuple[str, Any, int, int]]:
    """``rounds`` rounds of the 003-size point ``size`` (:mod:`dcnlab.reproduce.aggregation.model`'s task tuples)."""
    return [("003-size", size, rnd, SEED) for rnd in range(rounds)]


def _same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(x[:3] == y[:3] and all(x[3][k] == y[3][k] for k in COMPARED)
                                    for x, y in zip(a, b))


def run(rounds: int, size: int, n_local: int, address: str | None, progress: bool,
        say: Any = lambda s: None) -> dict[str, Any]:
    """Both runs: rows (backend, workers, rounds, wall, rounds/s, warm-up) and whether the results match."""
    from dcnlab.controller.aggregation import engine
    from dcnlab.reproduce.aggregation.model import run_tasks
    from dcnlab.sweep.pool import Cluster

    work = tasks(rounds, size)
    t0 = time.perf_counter()
    engine.warm_up()
    warm_local = time.perf_counter() - t0
    say(f"local pool: {rounds} rounds on {n_local} processes")
    t0 = time.perf_counter()
    local = run_tasks(work, n_local, progress=progress)
    wall_local = time.perf_counter() - t0
    rows = [{"backend": "local process pool", "workers": n_local, "rounds": rounds, "wall_s": wall_local,
             "rounds_per_s": rounds / wall_local, "warm_up_s": warm_local}]
    own: AbstractContextManager[Any] = nullcontext()
    started = 0.0
    if address is None:
        say(f"no --cluster given: starting a Dask LocalCluster of {n_local} worker processes on 127.0.0.1")
        t0 = time.perf_counter()
        import_distributed()
        logging.getLogger("distributed").setLevel(logging.CRITICAL)     # its start and shutdown chatter is not ours
        own = local_cluster(n_local)
        started = time.perf_counter() - t0
    with own as lc:
        where = address or lc.scheduler_address
        with Cluster(where) as cluster:
            n = cluster.workers
            t0 = time.perf_counter()
            warm = cluster.warm(engine.warm_up)
            warm_s = time.perf_counter() - t0
            say(f"{cluster.describe()}: {rounds} rounds")
            t0 = time.perf_counter()
            remote = run_tasks(work, None, progress=progress, cluster=cluster)
            wall = time.perf_counter() - t0
    rows.append({"backend": "Dask cluster" if address else "Dask LocalCluster (started here)", "address": where,
                 "workers": n, "rounds": rounds, "wall_s": wall, "rounds_per_s": rounds / wall,
                 "warm_up_s": warm_s, "warm_up_per_worker_s": warm, "cluster_start_s": started})
    return {"size": size, "rows": rows, "identical": _same(local, remote), "cpus": os.cpu_count(),
            "load_average": os.getloadavg()}


def cmd_bench_rounds(args: argparse.Namespace) -> int:
    n_local = args.workers or os.cpu_count() or 1
    res = run(args.rounds, args.size, n_local, args.cluster, progress=not args.json,
              say=(lambda s: None) if args.json else (lambda s: print(s, file=sys.stderr, flush=True)))
    if args.json:
        print(json.dumps(res))
        return 0 if res["identical"] else 1
    print(f"{args.rounds} rounds of a {args.size}x{args.size} shuffle on BCube(8,5), every method "
          f"(reproduce aggregation's 003-size rounds)")
    print(f"{'backend':<34} {'workers':>7} {'rounds':>6} {'wall s':>7} {'rounds/s':>8} {'warm-up s':>9}")
    for r in res["rows"]:
        warm = max(r.get("warm_up_per_worker_s", {}).values(), default=r["warm_up_s"])
        print(f"{r['backend']:<34} {r['workers']:>7} {r['rounds']:>6} {r['wall_s']:>7.1f} {r['rounds_per_s']:>8.2f} "
              f"{warm:>9.1f}")
    cl = res["rows"][-1]
    if cl.get("cluster_start_s"):
        print(f"  the LocalCluster took {cl['cluster_start_s']:.1f} s to start (not counted above)")
    print("  wall s: the rounds only, from submitting the first to the last result (the local pool's includes "
          "starting its processes)")
    print(f"  warm-up: compiling or loading the engine's kernels, once per process (on the cluster: the slowest "
          f"worker); load average {res['load_average'][0]:.1f} on {res['cpus']} cores")
    print(f"results identical round for round: {'yes' if res['identical'] else 'NO'}")
    return 0 if res["identical"] else 1


