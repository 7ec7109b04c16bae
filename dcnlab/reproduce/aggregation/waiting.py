"""BMv2 experiment: the word-count incast's shuffle+reduce completion, with M2 and without aggregation (000).

000's abstract says the "shuffle and reduce waiting time" is about 2/3 shorter with M2-based trees than
without in-network aggregation across network sizes, and about 3/4 shorter across sender counts
(Tables 1 and 2, whose values the text lacks). This experiment measures it on BMv2 with the job of
:mod:`dcnlab.reproduce.aggregation.bmv2` (word counts, windowed senders, exact results checked),
on one BCube, over several sender counts and several runs per count, so that every figure has a
spread: run ``i`` at ``m`` senders draws its receiver and senders with the seed ``(seed, m, i)`` and
runs the same incast once per algorithm, one job at a time.

*Completion* is from the common start to the receiver's last chunk (the shuffle and the reduce: the
receiver folds every chunk as it arrives). Beside every job the *model of the same job*
(:func:`dcnlab.controller.aggregation.waiting.link_seconds`): the busiest directed link's streams
(host links included) times one stream's chunks at the shaped link rate. Per sender count the report
gives the mean and the standard deviation over the runs of each algorithm's completion, of the saving
``1 - completion(M2) / completion(none)`` (per run, then averaged), and of the model's saving.

**Why 003's SRS shuffle was slower than no aggregation** on BCube(4,1) (2.13 s against 1.65 s in an
earlier run, while carrying 30% fewer bytes): completion follows the busiest link, not the total. In the
papers' example shuffle (senders v2 v5 v9 v10 v11 v14, group v0 v3 v8) SRS's trees carry 63 streams in
all against 96 without aggregation, but SRS sends 9 of them through one link (w2 -> v8: v8 takes the
other group members' results) where no aggregation's busiest link carries 7; 9/7 = 1.29, and the
measured ratio was 2.13/1.65 = 1.29. The same rule gives the incast: M2's busiest link carries 3
streams, no aggregation's 6 (the receiver's host link), a model saving of 50% against 51% measured
(0.69 s against 1.41 s). ``JobResult.busiest_units`` and ``model_completion_s`` report it for every job.

**Where the time of a job goes** (a full run once measured a saving of 37.10% against the
model's 69.27% of the same jobs). Each job's senders start at a common ``start_at``; the job's counters
(112 switches on BCube(4,2)) used to be read *after* that start was fixed, so on a loaded machine the last
sender began 0.37-0.79 s late (measured from its first chunk). Every M2 tree waits for its slowest
contributor, so M2 lost that lag in full (completion = the link-bound model + 0.45-0.85 s: 0.93 s against
0.48 at 4 senders, 1.57 against 0.72 at 16), while no aggregation's busiest link was still draining the
early senders' streams (3.99 against 3.87 at 16); savings 33, 45 and 61% against the model's 50, 75 and 81%.
The BMv2 processes used 1.1-2.2 CPU seconds in 2.6-6.3 s of wall time per job: the jobs were not
CPU-bound. Now the counters are read first and the start is fixed after them
(``bmv2.START_LEAD_S``); the last sender begins 0.00-0.20 s after the start (``WaitJob.start_skew_s``), and
with 3 runs per sender count on BCube(4,2) (load averages 15-26) BMv2 saved 42.0, 66.3 and 79.8% (4, 8,
16 senders; 62.7% overall, runs 23-83%) against the model's 42.3, 75.1 and 81.3% (66.2%); on BCube(4,1)
with 6 senders 50.0, 70.6, 52.2 and 52.2% against 50.0, 66.7, 50.0 and 50.0%. The runs still below the
model (54% against 75%) had their first result 0.3-0.55 s after the start with every sender on time: a
BMv2 node on the tree that the loaded machine did not schedule (these switches are not reniced).

Decisions: the largest BCube that fits one 2-core machine with its hosts and BMv2 processes
comfortably is BCube(4,2) (112 BMv2 nodes, 64 hosts; ``--quick``: BCube(4,1)). Links are shaped as in
the aggregation experiment (0.25 Mbit/s), since the papers' regime is the one where links, not the
switches' CPUs, limit a job.
"""

from __future__ import annotations

import logging
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)
Progress = Callable[[str], None]
ALGORITHMS = ("m2", "none")
PLOT = "aggregation-waiting.png"


@dataclass(frozen=True)
class WaitConfig:
    spec: str = "bcube:n=4,k=2"
    senders: tuple[int, ...] = (4, 8, 16)
    runs: int = 4
    algorithms: tuple[str, ...] = ALGORITHMS
    keys: int = 1024
    bw_mbps: float = 0.25
    seed: int = 1
    timeout: float = 60.0

    def validate(self, hosts: int) -> None:
        if not 1 <= self.runs <= 100:
            raise UserError(f"runs={self.runs} is out of range; valid: 1..100")
        if not self.senders or min(self.senders) < 2 or max(self.senders) > hosts - 1:
            raise UserError(f"senders={','.join(map(str, self.senders))}: valid: 2..{hosts - 1} on {self.spec}")
        if "m2" not in self.algorithms or "none" not in self.algorithms:
            raise UserError("algorithms: valid: a list that holds m2 and none")


QUICK = WaitConfig(spec="bcube:n=4,k=1", senders=(6,), runs=2, keys=512)


@dataclass(frozen=True)
class WaitJob:
    senders: int
    run: int
    algorithm: str
    completion_s: float | None
    model_s: float
    busiest_units: int
    exact: bool
    resent: int = 0
    """Chunks the job's senders sent again (a frame lost in BMv2 or a host socket, recovered after ``rto``)."""
    start_skew_s: float = 0.0
    """How long after the common start the job's last sender began (``JobResult.start_skew_s``)."""


def _stats(xs: Sequence[float]) -> tuple[float, float]:
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    if not xs:
        return math.nan, math.nan
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


@dataclass
class WaitResult:
    config: WaitConfig
    nodes: int
    hosts: int
    bringup_s: float
    jobs: list[WaitJob] = field(default_factory=list)
    seconds: float = 0.0

    def _pairs(self, m: int) -> list[tuple[WaitJob, WaitJob]]:
        by = {(j.run, j.algorithm): j for j in self.jobs if j.senders == m}
        return [(by[r, "m2"], by[r, "none"]) for r in range(self.config.runs) if (r, "m2") in by and (r, "none") in by]

    def timed_runs(self, m: int) -> set[int]:
        """The runs at ``m`` senders whose jobs (both algorithms) finished without a resend. A resend waits
        for the receiver's ``rto`` (2 s), which is the testbed's loss recovery, not the waiting time the
        model and the paper describe, so those runs are left out of the times (and counted in the table).
        If every run had one, all are kept."""
        clean = {a.run for a, b in self._pairs(m) if a.completion_s and b.completion_s and not a.resent
                 and not b.resent}
        return clean or {a.run for a, _ in self._pairs(m)}

    def point(self, m: int) -> dict[str, Any]:
        """Mean and standard deviation over the loss-free runs at ``m`` senders (:meth:`timed_runs`)."""
        runs = self.timed_runs(m)
        out: dict[str, Any] = {"senders": m, "runs_timed": len(runs),
                               "runs_with_resends": sum(1 for a, b in self._pairs(m) if a.resent or b.resent)}
        for a in self.config.algorithms:
            js = [j for j in self.jobs if j.senders == m and j.algorithm == a and j.run in runs]
            out[a] = dict(zip(("mean_s", "sd_s"), _stats([j.completion_s for j in js if j.completion_s])))
            out[a]["model_s"] = statistics.fmean(j.model_s for j in js) if js else math.nan
        pairs = [(a, b) for a, b in self._pairs(m) if a.completion_s and b.completion_s and a.run in runs]
        out["saving"], out["saving_sd"] = _stats([100 * (1 - a.completion_s / b.completion_s)  # type: ignore[operator]
                                                  for a, b in pairs])
        out["model_saving"] = _stats([100 * (1 - a.model_s / b.model_s) for a, b in self._pairs(m)
                                      if a.run in runs])[0]
        return out

    def checks(self) -> dict[str, bool]:
        return {"exact": all(j.exact for j in self.jobs),
                "completed": all(j.completion_s is not None for j in self.jobs),
                "m2_faster": all(self.point(m)["saving"] > 0 for m in self.config.senders)}

    @property
    def ok(self) -> bool:
        return all(self.checks().values())

    def to_json(self) -> dict[str, Any]:
        pts = [self.point(m) for m in self.config.senders]
        saving = _stats([p["saving"] for p in pts])
        return {"spec": self.config.spec, "nodes": self.nodes, "hosts": self.hosts, "bringup_s": self.bringup_s,
                "senders": list(self.config.senders), "runs": self.config.runs, "config": asdict(self.config),
                "points": pts, "saving": saving[0],
                "saving_sd": statistics.fmean(p["saving_sd"] for p in pts),
                "model_saving": statistics.fmean(p["model_saving"] for p in pts),
                "jobs": [asdict(j) for j in self.jobs], "checks": self.checks(), "seconds": self.seconds}

    def summary_lines(self) -> list[str]:
        from dcnlab.results.tables import MAX_WIDTH, Column, table

        lines = [f"{self.config.spec}: {self.nodes} BMv2 nodes, {self.hosts} hosts, up in {self.bringup_s:.1f} s; "
                 f"{self.config.runs} runs per sender count"]
        rows = []
        for m in self.config.senders:
            p = self.point(m)
            rows.append((m, p["runs_timed"], p["runs_with_resends"],
                         *(f"{p[a]['mean_s']:.2f} ± {p[a]['sd_s']:.2f} ({p[a]['model_s']:.2f})"
                           for a in ("m2", "none")),
                         f"{p['saving']:.1f} ± {p['saving_sd']:.1f}", f"{p['model_saving']:.1f}"))
        lines += ["  " + line for line in table(
            [Column("senders", "count", ">"), Column("timed", "runs", ">"), Column("resent", "runs", ">"),
             Column("M2", "s ± sd (model)", ">"),
             Column("no aggregation", "s ± sd (model)", ">"), Column("saving", "% ± sd", ">"),
             Column("model saving", "%", ">")], rows, label_columns=1, max_width=MAX_WIDTH - 2).splitlines()]
        lines.append("checks: " + ", ".join(f"{k} {'ok' if v else 'FAILED'}" for k, v in self.checks().items())
                     + f"; {self.seconds:.0f} s in all")
        return lines


def _members(fabric: Any, m: int, run: int, seed: int) -> tuple[str, tuple[str, ...]]:
    import numpy as np

    names = [f"v{i}" for i in range(fabric.num_hosts())]
    pick = np.random.default_rng([seed, m, run]).choice(len(names), size=m + 1, replace=False)
    return names[pick[0]], tuple(names[i] for i in pick[1:])


def run_waiting(cfg: WaitConfig, progress: Progress | None = None) -> WaitResult:
    """Bring up ``cfg.spec`` and run every (sender count, run, algorithm) job on it."""
    from dcnlab.controller.aggregation.dataplane import AggregationDataplane
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.p4src.sizing import sizing_for
    from dcnlab.reproduce.aggregation import bmv2 as ab
    from dcnlab.topos.bcube import BCube
    from dcnlab.topos.spec import parse_spec

    say = progress or (lambda msg: log.info("%s", msg))
    fabric = parse_spec(cfg.spec)
    if not isinstance(fabric, BCube):
        raise UserError(f"spec {cfg.spec}: valid: a BCube (bcube:n=N,k=K), where servers aggregate")
    cfg.validate(fabric.num_hosts())
    job_cfg = ab.EmuConfig(specs=(cfg.spec,), keys=cfg.keys, bw_mbps=cfg.bw_mbps, seed=cfg.seed, timeout=cfg.timeout)
    t0 = time.perf_counter()
    net = FabricNetwork(fabric, NetOptions(bw_mbps=cfg.bw_mbps, queue_depth=job_cfg.queue_depth), progress=say)
    with net:
        dp = AggregationDataplane(fabric, net.controller, capacity=sizing_for(fabric).AGG_SLOTS)
        r, s = _members(fabric, min(cfg.senders), 0, cfg.seed + 1000)
        ab.run_job(net, dp, ab.Scenario("incast", (r,), s, ("m2",)), "m2", replace(job_cfg, keys=64),
                   lambda msg: None)                                      # warm-up, not reported
        res = WaitResult(cfg, len(net.switches), fabric.num_hosts(), net.timings.total())
        for m in cfg.senders:
            for run in range(cfg.runs):
                r, s = _members(fabric, m, run, cfg.seed)
                sc = ab.Scenario("incast", (r,), s, cfg.algorithms)
                for algo in cfg.algorithms:
                    j = ab.run_job(net, dp, sc, algo, job_cfg, say)
                    res.jobs.append(WaitJob(m, run, algo, j.completion_s, j.model_completion_s, j.busiest_units,
                                            j.exact, j.retransmitted, j.start_skew_s))
        net.check_switches()
    res.seconds = time.perf_counter() - t0
    return res


def plot(result: WaitResult, path: Path) -> None:
    """Completion against senders: BMv2 mean ± sd per algorithm, and the link-bound model of the same jobs."""
    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    fig, ax = plt.subplots(figsize=(9.5, 4.6), layout="constrained")
    xs = list(result.config.senders)
    algos = result.config.algorithms
    styles = plotstyle.series_styles(2 * len(algos))
    names = {"m2": "M2-based", "none": "no aggregation", "irs": "IRS-based"}
    for i, a in enumerate(algos):
        pts = [result.point(m)[a] for m in xs]
        ax.errorbar(xs, [p["mean_s"] for p in pts], yerr=[p["sd_s"] for p in pts], capsize=4,
                    label=f"{names.get(a, a)}: BMv2, mean ± sd of {result.config.runs} runs", **styles[2 * i])
        ax.plot(xs, [p["model_s"] for p in pts], label=f"{names.get(a, a)}: link-bound model of the same jobs",
                **styles[2 * i + 1])
    plotstyle.legend_outside(ax)
    ax.set_title(plotstyle.title("000", "Tables 1-2 (values missing)", f"word-count incasts on BMv2, "
                                 f"{result.config.spec}, links {result.config.bw_mbps:g} Mbit/s:\n"
                                 f"shuffle+reduce completion"), fontsize=10)
    ax.set_xlabel("senders (count)")
    ax.set_ylabel("completion (s)")
    ax.set_xticks(xs)
    ax.grid(alpha=0.3)
    plotcheck.save(fig, path, dpi=120)


def run_and_write(quick: bool, seed: int | None, out: Path, progress: Progress | None = None) -> WaitResult:
    """The experiment at its default (or ``--quick``) setting, its plot and JSON written into ``out``."""
    import json

    from dcnlab.results.outputs import writing

    cfg = QUICK if quick else WaitConfig()
    if seed is not None:
        cfg = replace(cfg, seed=int(seed))
    res = run_waiting(cfg, progress)
    with writing(out, "--out"):
        plot(res, out / PLOT)
        (out / "aggregation-waiting.json").write_text(json.dumps(res.to_json(), indent=1, default=str) + "\n")
    return res
