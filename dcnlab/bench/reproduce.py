"""``dcnlab bench reproduce``: what the model parts of ``dcnlab reproduce all --quick`` (``--full``: the full run)
cost, part by part and task kind by task kind, against the goal.

Every reproduction's model tasks for the mode (:meth:`~dcnlab.reproduce.protocol.Reproduction.tasks`, dcnlab's
and the installed plug-ins') run as ``reproduce all`` runs them: one process pool on ``--workers`` processes
(default every core), the longest first, the task cache off (:mod:`dcnlab.sweep.cache`: this measures the
computing, not a replay). Each task's CPU seconds are measured in its worker, so the figures hold on a busy
machine; the wall time is the machine's of the moment (its load average is printed beside it). Not measured
here: the parts' outputs (plots, JSON), the readings, the CIST construction timing that runs alone
afterwards and BMv2.

The goal is on 2 idle cores: ``reproduce all --quick`` within :data:`GOALS` ``["quick"]`` seconds of
wall time for the model parts, the full model run within :data:`GOALS` ``["full"]``. The wall time on 2 idle
cores is estimated from the tasks' CPU seconds, scheduled longest first on 2 workers as the pool does (a
list-scheduling makespan, plus the workers' warm-up), and judged ``ok`` or ``MISS`` (:func:`dcnlab.results.
goals.verdict`).
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from dcnlab.results.goals import verdict

GOALS = {"quick": 60.0, "full": 600.0, "smoke": 60.0}
"""Wall seconds of the model parts on :data:`IDLE_CORES` idle cores, per mode."""
IDLE_CORES = 2


def timed(run: Callable[[Any], Any], arg: Any) -> float:
    """The CPU seconds of ``run(arg)`` in this (worker) process; the result is dropped (not sent back)."""
    c0 = time.process_time()
    run(arg)
    return time.process_time() - c0


@dataclass
class Kind:
    """One task kind of a part: its tasks, their CPU seconds (sum and longest) and the estimates."""

    part: str
    kind: str
    tasks: int = 0
    cpu_s: float = 0.0
    longest_s: float = 0.0
    estimated_s: float = 0.0


@dataclass
class Part:
    """One reproduction's model part: its tasks, their CPU seconds and when its last task ended (wall, from the
    start of the fan-out)."""

    name: str
    tasks: int = 0
    cpu_s: float = 0.0
    done_at_s: float = 0.0
    kinds: list[Kind] = field(default_factory=list)


def makespan(seconds: Sequence[float], workers: int) -> float:
    """Wall seconds of tasks of ``seconds`` started longest first on ``workers`` (each to the first free one)."""
    free = [0.0] * max(workers, 1)
    for s in sorted(seconds, reverse=True):
        heapq.heappush(free, heapq.heappop(free) + s)
    return max(free)


def run(mode: str, workers: int | None, say: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Every reproduction's model tasks of ``mode`` on ``workers`` processes: parts, kinds, totals and the goal."""
    from dcnlab.reproduce import registry
    from dcnlab.sweep import cache, pool

    n = workers or os.cpu_count() or 1
    reps = [registry.get(name, "bench reproduce") for name in registry.names()]
    jobs = [(rep, t) for rep in reps for t in rep.tasks(mode, None)]
    jobs.sort(key=lambda j: -j[1].seconds)
    parts = {rep.name: Part(rep.name) for rep in reps}
    kinds: dict[tuple[str, str], Kind] = {}
    left = {rep.name: 0 for rep in reps}
    cpus = [0.0] * len(jobs)
    for rep, t in jobs:
        left[rep.name] += 1
        k = kinds.setdefault((rep.name, t.kind), Kind(rep.name, t.kind))
        k.estimated_s += t.seconds
    say(f"bench reproduce: {len(jobs)} {mode} model tasks of {', '.join(parts)} on {n} processes")
    before = os.environ.get(cache.OFF_ENV)
    os.environ[cache.OFF_ENV] = "1"
    r0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        warm_s = 0.0
        for rep in reps:
            if rep.warm_up is not None:     # once here, before the pool forks, as reproduce all does
                w0 = time.process_time()
                rep.warm_up()
                warm_s += time.process_time() - w0
        for j, cpu in pool.fan_out(timed, [(rep.run_task, t.arg) for rep, t in jobs], n):
            rep, t = jobs[j]
            cpus[j] = cpu
            p, k = parts[rep.name], kinds[(rep.name, t.kind)]
            p.tasks += 1
            p.cpu_s += cpu
            k.tasks += 1
            k.cpu_s += cpu
            k.longest_s = max(k.longest_s, cpu)
            left[rep.name] -= 1
            if not left[rep.name]:
                p.done_at_s = time.perf_counter() - t0
                say(f"  {rep.name}: {p.tasks} tasks, {p.cpu_s:.1f} CPU s, done at {p.done_at_s:.1f} s")
    finally:
        if before is None:
            os.environ.pop(cache.OFF_ENV, None)
        else:
            os.environ[cache.OFF_ENV] = before
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    all_cpu = sum(b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime for a, b in zip(r0, r1))
    for k in kinds.values():
        parts[k.part].kinds.append(k)
    task_cpu = sum(p.cpu_s for p in parts.values())
    idle = makespan(cpus, IDLE_CORES) + warm_s
    goal = GOALS[mode]
    return {"mode": mode, "workers": n, "tasks": len(jobs), "wall_s": wall, "task_cpu_s": task_cpu,
            "cpu_s": all_cpu, "warm_up_s": warm_s, "idle_cores": IDLE_CORES, "idle_wall_s": idle,
            "goal_s": goal, "ok": idle <= goal, "load_average": os.getloadavg(), "cpus": os.cpu_count(),
            "parts": [asdict(p) for p in parts.values()]}


def lines(res: dict[str, Any]) -> list[str]:
    """The printed report: one line per part, one per task kind under it, the totals and the goal."""
    out = [(f"reproduce all --{res['mode']}, model parts: {res['tasks']} tasks on {res['workers']} processes "
           f"(load average {res['load_average'][0]:.1f} on {res['cpus']} cores)"),
           f"{'part / task kind':<34} {'tasks':>6} {'CPU s':>8} {'longest s':>9} {'done at s':>9}"]
    for p in res["parts"]:
        out.append(f"{p['name']:<34} {p['tasks']:>6} {p['cpu_s']:>8.1f} {'':>9} {p['done_at_s']:>9.1f}")
        for k in sorted(p["kinds"], key=lambda k: -k["cpu_s"]):
            out.append(f"  {k['kind']:<32} {k['tasks']:>6} {k['cpu_s']:>8.1f} {k['longest_s']:>9.2f}")
    goal = f"<= {res['goal_s']:.0f} s"
    out += [(f"total: {res['task_cpu_s']:.1f} CPU s in the tasks, {res['cpu_s']:.1f} CPU s in all processes "
            f"(warm-up {res['warm_up_s']:.1f} s); wall {res['wall_s']:.1f} s on {res['workers']} processes "
            "on this machine now"),
            (f"on {res['idle_cores']} idle cores (the tasks' CPU seconds, longest first): about "
            f"{res['idle_wall_s']:.0f} s: {verdict(res['ok'], goal)}")]
    return out


def cmd_bench_reproduce(args: argparse.Namespace) -> int:
    mode = "smoke" if args.smoke else ("full" if args.full else "quick")
    say = (lambda s: None) if args.json else (lambda s: print(s, file=sys.stderr, flush=True))
    res = run(mode, args.workers, say)
    print(json.dumps(res) if args.json else "\n".join(lines(res)))
    return 0
