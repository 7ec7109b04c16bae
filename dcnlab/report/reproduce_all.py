"""``dcnlab reproduce all``: the five papers in one run and one report (:mod:`dcnlab.results.papers` names them).

The model parts of the four reproductions (000 and 003 through ``aggregation``, 001 ``multicast``,
002 ``congestion``, 004 ``cist``) become one list of tasks for one process pool on every core
(``--workers``), or on the workers of a Dask cluster (``--cluster ADDRESS``, :mod:`dcnlab.sweep.pool`),
the longest first, under one progress display. As soon as a part's tasks are done
its outputs are written to ``OUT/<mechanism>/``, exactly what ``dcnlab reproduce <mechanism>`` writes
(JSON, PNG plots, ``summary.json``). Then, with ``--emulate auto`` where root and the P4 toolchain
are present (or ``--emulate on``), the four BMv2 experiments run one after the other (each is the BMv2 part of
``reproduce <mechanism> --emulate on``), their outputs in the same directories. Last come
``OUT/summary.json`` (every headline of the five papers, :mod:`dcnlab.results.summary`),
``OUT/report.md`` and a self-contained ``OUT/report.html`` (every PNG embedded). The report also shows, per
paper, the settings its text leaves open and the search that chose the one each reproduction runs
(:mod:`dcnlab.report.search`: the committed table, or a newer ``dcnlab reproduce search``'s in
``OUT/search/``); the search itself is not run here, it takes tens of CPU minutes.

``--quick`` keeps every headline, with fewer rounds (and not fewer points) only where the full run takes long
(:data:`QUICK_ROUNDS`: the cheap parts run the full rounds, so that their verdicts are the full run's; a verdict that
still differs from the full run's, the committed search's, is marked in the report). The multicast
runs are deterministic, so the quick run has every pattern of the full run with the three algorithms
the headlines need (MR4LMS-like on the 4-ppn patterns is most of its time).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dcnlab.report.parts import PartRun, Task
from dcnlab.report.write import write_report
from dcnlab.results.outputs import writing
from dcnlab.results.summary import Headline

log = logging.getLogger(__name__)

DEFAULT_OUT = "results/reproduce-all"
PARTS = ("aggregation", "multicast", "congestion", "cist")
MODES = ("full", "quick", "smoke")
"""``smoke`` (hidden ``--smoke``): a few seconds per part, for tests; every headline is still a record."""
QUICK_ROUNDS = {"003-k": 100, "003-size": 5, "003-delta": 20, "000-k": 100, "000-size": 3}
"""Rounds per point of ``--quick`` (every point of the full run; the gap part keeps its own quick plan): the full
run's rounds where they are cheap (003-k, 003-delta and 000-k take seconds: their figures, spreads and verdicts are
the full run's), fewer in the two large sweeps (a wider spread there; where a verdict still differs from the full
run's, the report marks it, :func:`dcnlab.report.search_tables.mark_full_run`)."""
QUICK_MC_ALGOS = ("cmr4lms-fixed", "cmr4lms-dynamic", "mr4lms")
QUICK_MC_GROUP = ("64x32x16", "32x32x32")
"""Quick multicast: the paper's three algorithms on every pattern, our group-scope variant where a reading
names it."""


# -- what each part runs ---------------------------------------------------------------------------------------


def run_task(task: Task) -> tuple[Task, Any]:
    """Run one task (in a worker process)."""
    if task.mechanism == "aggregation":
        from dcnlab.reproduce.aggregation import model as am
        return task, am._task(*task.arg)
    if task.mechanism == "multicast":
        from dcnlab.reproduce.multicast import model as mm
        return task, mm.run_task(task.arg)
    if task.mechanism == "congestion":
        from dcnlab.reproduce.congestion import model as cc
        return task, cc._run_one(task.arg)
    from dcnlab.reproduce.cist import model as cist_model
    spec, rounds, seed = task.arg
    return task, cist_model.model_case(spec, rounds, 1, seed)


def aggregation_plans(mode: str) -> dict[str, Any]:
    from dcnlab.reproduce.aggregation import model as am

    full = am.plans(False, None)
    if mode == "full":
        return full
    if mode == "quick":
        out = {part: am.Plan(part, full[part].points, QUICK_ROUNDS[part]) for part in QUICK_ROUNDS}
        out["gap"] = am.plans(True, None)["gap"]
        return out
    return {"003-k": am.Plan("003-k", (2, 3), 1), "003-size": am.Plan("003-size", (50, 100), 1),
            "003-delta": am.Plan("003-delta", (250,), 1), "000-k": am.Plan("000-k", (2, 3), 1),
            "000-size": am.Plan("000-size", (100, 200), 1)}


def _aggregation_seconds(part: str, point: Any) -> float:
    """Rough seconds of one round (measured on one core of the reference machine)."""
    p = float(point)
    return {"003-k": 0.012 * p, "003-size": 0.67 * (p / 1500) ** 2, "003-delta": 0.62 * (p / 1000) ** 2,
            "000-k": 0.006 * p, "000-size": 0.74 * p / 4000}.get(part, 0.05 * (p % 100))


def multicast_tasks(mode: str) -> list[Any]:
    from dcnlab.reproduce.multicast import model as mm

    if mode == "full":
        return mm.tasks_for(False)
    if mode == "quick":
        return mm.with_draws([mm.Task(p, a) for p in mm.PATTERNS_1PPN + mm.PATTERNS_4PPN for a in mm.ALGOS
                              if a in QUICK_MC_ALGOS or (a == "cmr4lms-dynamic/group" and p in QUICK_MC_GROUP)],
                             mm.QUICK_DRAWS)
    return [mm.Task("64x32x16", a) for a in ("cmr4lms-fixed", "cmr4lms-dynamic")]


MC_SECONDS = {("mr4lms", "100x50x26:ppn=4"): 36.0, ("mr4lms", "256x32x16:ppn=4"): 31.0,
              ("mr4lms", "128x32x32:ppn=4"): 17.0, ("mr4lms", "random:1000:ppn=4"): 16.0,
              ("mr4lms", "25x50x26"): 4.3}


def congestion_scenarios(mode: str) -> list[Any]:
    from dcnlab.reproduce.congestion import model as cc

    out = cc.build_scenarios(mode != "full")
    return out if mode != "smoke" else [s for s in out if not s.name.startswith("large_")]


def cist_cases(mode: str) -> tuple[tuple[str, ...], int]:
    from dcnlab.reproduce.cist import model as cist_model

    if mode == "full":
        return cist_model.MODEL_SPECS, 20
    return (cist_model.QUICK_MODEL_SPECS, 5) if mode == "quick" else (cist_model.MODEL_SPECS[:1], 2)


def plan_parts(mode: str, out: Path, seed: int | None) -> list[PartRun]:
    """The four parts and their tasks; ``seed`` None: each command's default (aggregation 1, cist 0)."""
    parts = [PartRun(m, out / m) for m in PARTS]
    agg, mc, cong, cist = parts
    pl = aggregation_plans(mode)
    agg.context = {"plans": pl, "parts": list(pl)}
    agg.tasks = [Task("aggregation", (part, p, rnd, 1 if seed is None else seed), _aggregation_seconds(part, p))
                 for part in pl for p in pl[part].points for rnd in range(pl[part].rounds)]
    mc.tasks = [Task("multicast", t, MC_SECONDS.get((t.algo, t.pattern), 1.5 if "ppn=4" in t.pattern else 0.4))
                for t in multicast_tasks(mode)]
    scenarios = congestion_scenarios(mode)
    cong.context = {"scenarios": scenarios}
    cong.tasks = [Task("congestion", s, 1.0 + len(s.flows) * s.duration_s / 20) for s in scenarios]
    specs, rounds = cist_cases(mode)
    cist.context = {"specs": specs, "rounds": rounds}
    cist.tasks = [Task("cist", (spec, rounds, 0 if seed is None else seed), 0.5) for spec in specs]
    return parts


def finish(part: PartRun, quick: bool) -> None:
    """Write the part's outputs, as its own ``reproduce`` command does (``summary.json`` included)."""
    from dcnlab.reproduce.multicast import reproduce as mm_reproduce
    out, m = part.out, part.mechanism
    if m == "aggregation":
        from dcnlab.reproduce.aggregation import model as am
        from dcnlab.reproduce.aggregation import reproduce as am_reproduce
        results = am.collect(part.context["parts"], part.context["plans"], part.results)
        seed = part.context.get("seed")
        meta = {"quick": quick, "seed": 1 if seed is None else seed, "workers": part.context.get("workers"),
                "wall_seconds": round(part.seconds, 1), "load_average": os.getloadavg(),
                "run_by": "dcnlab reproduce all"}
        part.files = am_reproduce.write_outputs(out, results, meta)
        part.model = results
    elif m == "multicast":
        from dcnlab.reproduce.multicast import model as mm
        order = {p: i for i, p in enumerate(mm.PATTERNS_1PPN + mm.PATTERNS_4PPN)}
        rows = sorted(part.results, key=lambda r: (order[r["pattern"]], mm.ALGOS.index(r["algo"])))
        _, part.files = mm_reproduce.write_outputs(out, rows, quick, part.seconds)
        part.model = rows
    elif m == "congestion":
        from dcnlab.reproduce.congestion import reproduce as cc
        results = {name: (res, sec) for name, res, sec in part.results}
        summary = cc.model_outputs(out, part.context["scenarios"], results, quick, "run by dcnlab reproduce all",
                                   part.seconds)
        part.files = [Path(f) for f in summary["files"]]
        part.model = {k: v for k, v in summary.items() if k != "files"}
    else:
        from dcnlab.reproduce.cist import plots as cist_plots
        from dcnlab.reproduce.cist import reproduce as cist_reproduce
        by = {c["spec"]: c for c in part.results}
        from dcnlab.topos.spec import parse_spec
        cases = [by[parse_spec(s).spec] for s in part.context["specs"]]
        with writing(out, "--out"):
            cist_plots.plot_model(cases, out / "model-sweep.png")
            (out / "model.json").write_text(json.dumps(cases, indent=1))
        # Theorems 5-7 (construction time vs N) are timed later, by time_cist_scaling, on an idle machine
        part.files = [out / "model-sweep.png", out / "model.json", cist_reproduce.write_summary(out, cases, None, quick)]
        part.model = cases


def time_cist_scaling(parts: list[PartRun], quick: bool) -> None:
    """Time CIST construction against N (Theorems 5-7) once the model and readings pools are shut: CPU time
    per call grows with the working set when the other core's worker shares the caches (a quick run timed
    beside the model tasks fitted 1.19 where an idle one fits 1.05)."""
    from dcnlab.reproduce.cist import reproduce as cist_reproduce

    for part in parts:
        if part.mechanism == "cist" and part.done:
            _, files = cist_reproduce.scaling_outputs(part.out, quick)
            part.files[-1:-1] = files


def write_part_summary(part: PartRun, quick: bool) -> Path:
    """(Re)write the part's ``summary.json`` with its BMv2 results, or the reason it has none."""
    from dcnlab.reproduce.multicast import reproduce as mm_reproduce
    emu, why = part.emulation, part.emulation_why
    if part.mechanism == "aggregation":
        from dcnlab.reproduce.aggregation import reproduce as am_reproduce
        return am_reproduce.write_summary(part.out, part.model, quick, emu, why)
    if part.mechanism == "multicast":
        return mm_reproduce.write_summary(part.out, part.model, quick, emu is not None, why)
    if part.mechanism == "congestion":
        from dcnlab.reproduce.congestion import reproduce as cc
        return cc.write_summary(part.out, part.model, emu, why, quick)
    from dcnlab.reproduce.cist import reproduce as cist_reproduce
    return cist_reproduce.write_summary(part.out, part.model, emu, quick, why)


# -- BMv2 --------------------------------------------------------------------------------------------------------

def emulate(part: PartRun, quick: bool, say: Callable[[str], None]) -> None:
    """Run the part's BMv2 experiment (its command's BMv2 part) into ``part.out``."""
    {"aggregation": _emulate_aggregation, "multicast": _emulate_multicast, "congestion": _emulate_congestion,
     "cist": _emulate_cist}[part.mechanism](part, quick, say)


def _emulate_aggregation(part: PartRun, quick: bool, say: Callable[[str], None]) -> None:
    from dcnlab.reproduce.aggregation import bmv2 as ab
    from dcnlab.reproduce.aggregation import reproduce as ab_reproduce
    from dcnlab.reproduce.aggregation import waiting as aw

    res = ab.run_experiment(ab_reproduce.config_from_args(argparse.Namespace(quick=quick, seed=None, topo=None)), say)
    with writing(part.out, "--out"):
        part.files += list(ab.write_outputs(res, part.out))
    waited = aw.run_and_write(quick, None, part.out, say)
    part.files.append(part.out / aw.PLOT)
    part.emulation = res.to_json() | {"waiting": waited.to_json()}
    part.emulation_why = (f"{ab.emulation_note(res)}; waiting time: {len(waited.jobs)} incasts on "
                          f"{waited.config.spec} ({waited.seconds:.0f} s)")
    part.emulation_ok = res.ok and waited.ok


def _emulate_multicast(part: PartRun, quick: bool, say: Callable[[str], None]) -> None:
    from dcnlab.reproduce.multicast import bmv2 as mf

    res = mf.run_experiment(mf.quick(mf.EmuConfig()) if quick else mf.EmuConfig(), progress=say)
    with writing(part.out, "--out"):
        part.files += list(mf.write_outputs(res, part.out))
    part.emulation, part.emulation_why, part.emulation_ok = res.to_json(), mf.emulation_note(res), res.ok()


def _emulate_congestion(part: PartRun, quick: bool, say: Callable[[str], None]) -> None:
    from dcnlab.reproduce.congestion import bmv2 as bp
    from dcnlab.reproduce.congestion import reproduce as cc

    cfg = cc.bmv2_config(quick)
    res = bp.run_experiment(cfg, progress=say)
    with writing(part.out, "--out"):
        part.files += bp.write_outputs(res, part.out)
    summary = res.summary()
    part.emulation, part.emulation_ok = summary, res.ok
    part.emulation_why = f"ran on BMv2 ({cfg.spec}, {summary['wall_s']:.0f} s)"


def _emulate_cist(part: PartRun, quick: bool, say: Callable[[str], None]) -> None:
    from dcnlab.reproduce.cist import bmv2 as cd

    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    results = []
    for cfg in [cd.quick(cd.SMALL)] if quick else [cd.SMALL, cd.LARGE]:
        res = cd.run_experiment(cfg, progress=say)
        with writing(part.out, "--out"):
            part.files += list(cd.write_outputs(res, part.out))
        results.append(res)
    part.emulation = [r.to_json() for r in results]
    part.emulation_ok = all(r.ok for r in results)
    part.emulation_why = "ran on BMv2: broadcasts under failures on " + ", ".join(r.spec for r in results)


# -- the run -----------------------------------------------------------------------------------------------------

def run_model(parts: list[PartRun], n_workers: int, quick: bool, bar: Any, cluster: Any = None) -> None:
    """Every part's tasks in one fan-out (longest first) on ``n_workers`` processes or a Dask ``cluster``
    (:func:`dcnlab.sweep.pool.fan_out`); each part is finished as soon as its last task is, its results
    in the order of its tasks (so that its averages add up in the same order wherever the tasks ran)."""
    from dcnlab.controller.aggregation import engine
    from dcnlab.sweep.pool import fan_out

    slots = sorted(((p, i, t) for p in parts for i, t in enumerate(p.tasks)), key=lambda s: -s[2].seconds)
    got: dict[str, dict[int, Any]] = {p.mechanism: {} for p in parts}
    t0 = time.perf_counter()
    for j, (task, result) in fan_out(run_task, [(t,) for _, _, t in slots], n_workers, cluster,
                                     warm=engine.warm_up):     # compile or load the kernels once
        part, pos, _ = slots[j]
        got[part.mechanism][pos] = result
        bar.update()
        bar.set_postfix(task.mechanism)
        if len(got[part.mechanism]) == len(part.tasks):
            part.results = [got[part.mechanism][i] for i in range(len(part.tasks))]
            part.seconds = time.perf_counter() - t0
            finish(part, quick)
            bar.write(f"{part.mechanism}: {len(part.tasks)} tasks done in {part.seconds:.1f} s; wrote {part.out}/")


def emulation_plan(mode: str, missing: Callable[[], list[str]] | None = None) -> tuple[bool, str]:
    """Whether the BMv2 experiments run under ``--emulate MODE`` (auto, on, off), and why (or why not);
    ``missing``: why they cannot run here (default :func:`dcnlab.emu.preflight.problems`). Every ``dcnlab
    reproduce`` command decides so (:func:`dcnlab.cli.emulate.bmv2_plan`)."""
    from dcnlab.emu import preflight

    if mode == "off":
        return False, "not run: --emulate off"
    why = (missing or preflight.problems)()
    if why:
        return False, "not run: " + "; ".join(why)
    return True, "root and the P4 toolchain are present" + (" (--emulate on)" if mode == "on" else
                                                             " (--emulate auto)")


def emulate_all(parts: list[PartRun], emulate_on: bool, emu_why: str, quick: bool, bar: Any) -> list[str]:
    """Each part's BMv2 experiment (when ``emulate_on``), one after the other; the mechanisms that failed."""
    failures: list[str] = []
    for p in parts:
        p.emulation_why = emu_why
        if not emulate_on:
            continue
        bar.set_postfix(f"{p.mechanism} on BMv2")
        t1 = time.perf_counter()

        def say(msg: str, m: str = p.mechanism) -> None:
            bar.write(f"  {m} (BMv2): {msg}")

        try:
            emulate(p, quick, say)
        except Exception as e:      # one broken emulation must not lose the others and the report
            log.exception("%s on BMv2", p.mechanism)
            p.emulation, p.emulation_ok = None, False
            p.emulation_why = f"failed on BMv2: {type(e).__name__}: {e}"
            failures.append(p.mechanism)
        bar.update()
        bar.write(f"{p.mechanism} (BMv2): {time.perf_counter() - t1:.0f} s; {p.emulation_why}")
    return failures


def readings_modules() -> dict[str, Callable[[bool, int], list[Any]]]:
    from dcnlab.report.readings import modules
    return modules()


def run_readings(papers: Sequence[str], quick: bool, n_workers: int, bar: Any) -> list[Any]:
    """Every reading of the headlines that deviate (:mod:`dcnlab.results.readings`), paper by paper,
    each on ``n_workers`` processes; quick: fewer rounds and points."""
    fns = readings_modules()
    found: list[Any] = []
    for paper in papers:
        bar.set_postfix(f"readings of {paper}")
        t = time.perf_counter()
        found += fns[paper](quick, n_workers)
        bar.update()
        bar.write(f"readings of {paper}: {time.perf_counter() - t:.0f} s")
    return found


def collect(parts: Sequence[PartRun]) -> list[Headline]:
    """Every part's headlines, plot paths relative to the report's directory, by paper."""
    from dcnlab.results import summary

    heads = []
    for p in parts:
        for h in summary.read(p.out / "summary.json").headlines:
            if h.plot:
                h.plot = f"{p.mechanism}/{h.plot}" if (p.out / h.plot).exists() else None
            heads.append(h)
    return sorted(heads, key=lambda h: h.seed)


@dataclass
class AllRun:
    """What one ``reproduce all`` did: the run's facts, every headline, the files written, the mechanisms whose
    BMv2 experiment failed, and where the model ran."""

    run: dict[str, Any]
    heads: list[Headline]
    files: list[Path]
    bad: list[str]
    where: str
    wall: float
    model_seconds: float


def run(out: Path, mode: str, emulate: str, workers: int | None, cluster_address: str | None,
        seed: int | None) -> AllRun:
    """The five papers in one run into ``out`` (its part directories checked by the caller): the model parts on
    the pool or the Dask cluster at ``cluster_address``, the readings, the BMv2 experiments as ``emulate``
    (auto, on, off) says, the part summaries and the report."""
    from dcnlab.sweep import pool
    from dcnlab.sweep.progress import Progress

    quick = mode != "full"
    emulate_on, emu_why = emulation_plan(emulate)
    with pool.connect(cluster_address) as cluster:     # before the work: an unreachable scheduler fails at once
        n_workers = cluster.workers if cluster is not None else workers or os.cpu_count() or 1
        where = pool.describe(n_workers, cluster)
        t0 = time.perf_counter()
        parts = plan_parts(mode, out, seed)
        for p in parts:
            p.context.update(seed=seed, workers=n_workers)
        papers = [] if mode == "smoke" else list(readings_modules())
        total = sum(len(p.tasks) for p in parts) + (len(parts) if emulate_on else 0) + len(papers)
        with Progress(total, "reproduce all", unit="task") as bar:
            run_model(parts, n_workers, quick, bar, cluster)
            model_seconds = time.perf_counter() - t0
            found = run_readings(papers, quick, n_workers, bar)     # their fan-outs run on the cluster too
            readings_seconds = time.perf_counter() - t0 - model_seconds
            time_cist_scaling(parts, quick)
            failures = emulate_all(parts, emulate_on, emu_why, quick, bar)
    for p in parts:
        write_part_summary(p, quick)
    wall = time.perf_counter() - t0
    facts = {"mode": mode, "emulate": emulate, "workers": n_workers,
             "cluster": cluster.address if cluster is not None else None, "wall_seconds": round(wall, 1),
             "model_seconds": round(model_seconds, 1), "readings_seconds": round(readings_seconds, 1), "seed": seed,
             "emulation_why": emu_why, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpus": os.cpu_count()}
    heads = collect(parts)
    if quick:       # the full run's verdict of each statement (the committed searches), marked where it differs
        from dcnlab.report.search_tables import mark_full_run

        facts["differ_from_full_run"] = mark_full_run(heads, out / "search")
    files = write_report(out, parts, heads, facts, found)
    bad = failures or [p.mechanism for p in parts if p.emulation_ok is False]
    return AllRun(facts, heads, files, bad, where, wall, model_seconds)

