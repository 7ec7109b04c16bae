"""The whole BMv2 experiment: the fabric brought up once, every scenario run in turn, a disturbed run repeated.

Decisions (ours: the paper's testbed is InfiniBand hardware, and none of this is in it):

* **Disturbed runs.** A CC run that lost more than 10% of its packets (:func:`disturbed`) measured a
  starved emulator, not the mechanism; it is run again (``attempts`` = 2 runs per scenario at most),
  and the rejected run's health data stays in the JSON (``rejected_runs``) and the printed summary.
"""

from __future__ import annotations

import logging
import os
import time

from dcnlab.reproduce.congestion.bmv2.checks import ExperimentResult, disturbed, health
from dcnlab.reproduce.congestion.bmv2.config import EmuConfig, Progress
from dcnlab.reproduce.congestion.bmv2.plans import plans
from dcnlab.reproduce.congestion.bmv2.runs import DRAIN_S, run_plan
from dcnlab.reproduce.congestion.bmv2.testbed import testbed

log = logging.getLogger(__name__)


def wait_for_quiet(max_load: float, timeout_s: float, say: Progress) -> float:
    """Wait until the 1-minute load average is below ``max_load`` (other work shares the machine, and the
    emulation is rate-sensitive), at most ``timeout_s``; return the load average then."""
    end = time.monotonic() + timeout_s
    load = os.getloadavg()[0]
    if load >= max_load:
        say(f"load average {load:.1f} >= {max_load:g}: waiting up to {timeout_s:.0f} s for a quieter machine")
    while load >= max_load and time.monotonic() < end:
        time.sleep(5)
        load = os.getloadavg()[0]
    return load


def run_experiment(cfg: EmuConfig = EmuConfig(), progress: Progress | None = None) -> ExperimentResult:
    """Bring the fabric up once, run every scenario of ``cfg``, tear down. A run that :func:`disturbed`
    rejects is repeated, up to ``cfg.attempts`` runs per scenario; the rejected ones are kept in
    ``ExperimentResult.rejected`` (and in the JSON)."""
    say = progress or (lambda m: log.info("%s", m))
    t0 = time.perf_counter()
    res = ExperimentResult(cfg)
    with testbed(cfg, progress) as tb:
        for plan in plans(cfg):
            for attempt in range(1, cfg.attempts + 1):
                if cfg.max_load is not None:
                    wait_for_quiet(cfg.max_load, cfg.quiet_wait_s, say)
                run = run_plan(tb, plan, progress)
                time.sleep(DRAIN_S)
                why = disturbed(run)
                if not why or attempt == cfg.attempts:
                    break
                say(f"{plan.name}: disturbed ({why}); running it again")
                res.rejected.append({"scenario": plan.name, "attempt": attempt, "why": why, **health(run)})
            res.runs.append(run)
    res.wall_s = time.perf_counter() - t0
    return res
