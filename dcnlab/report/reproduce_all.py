"""``dcnlab reproduce all``: every reproduction in one run and one report, dcnlab's five papers and a user's.

The reproductions are found by name (:mod:`dcnlab.reproduce.registry`: dcnlab's four, 000 and 003 through
``aggregation``, 001 ``multicast``, 002 ``congestion``, 004 ``cist``, then the installed plug-ins of the entry point
group ``dcnlab.reproductions``), and each is driven through one interface
(:class:`dcnlab.reproduce.protocol.Reproduction`); this module names none of them. Their model tasks become one
list for one process pool on every core (``--workers``), or on the workers of a Dask cluster (``--cluster
ADDRESS``, :mod:`dcnlab.sweep.pool`), the longest first (by each task's cost estimate), under one progress display
that names the parts and task kinds running, the tasks done of all and the time left. As soon as a part's tasks
are done its outputs are written to ``OUT/<name>/``, exactly what ``dcnlab reproduce <name>`` writes
(JSON, PNG plots, ``summary.json``). Then, with ``--emulate auto`` where root and the P4 toolchain
are present (or ``--emulate on``), the BMv2 experiments run one after the other (each is the BMv2 part of
``reproduce <name> --emulate on``), their outputs in the same directories. Last come
``OUT/summary.json`` (every headline of every paper, :mod:`dcnlab.results.summary`),
``OUT/report.md`` and a self-contained ``OUT/report.html`` (every PNG embedded). The report also shows, per
paper, the settings its text leaves open and the search that chose the one each reproduction runs
(:mod:`dcnlab.report.search`: the committed table, or a newer ``dcnlab reproduce search``'s in
``OUT/search/``); the search itself is not run here, it takes tens of CPU minutes.

``--quick`` keeps every headline, with fewer rounds (and not fewer points) only where the full run takes long
(each reproduction's :meth:`~dcnlab.reproduce.protocol.Reproduction.tasks` for the mode: the cheap parts run the
full rounds, so that their verdicts are the full run's; a verdict that still differs from the full run's, the
committed search's, is marked in the report). ``dcnlab reproduce NAME`` for a plug-in runs one reproduction the
same way (:func:`run_one`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dcnlab.report.parts import PartRun
from dcnlab.report.write import write_report
from dcnlab.reproduce import registry
from dcnlab.reproduce.protocol import MODES, Outcome, Reproduction, Run, Task, execute, write_summary
from dcnlab.results.outputs import writing
from dcnlab.results.runs import BMV2_RUNS, combine_runs, run_dir, runs_text
from dcnlab.results.summary import Headline

log = logging.getLogger(__name__)

DEFAULT_OUT = "results/reproduce-all"


def __getattr__(name: str) -> Any:
    if name == "PARTS":     # every reproduction's name (dcnlab's, then the installed plug-ins')
        return registry.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the model tasks ----------------------------------------------------------------------------------------------

def plan_parts(mode: str, out: Path, seed: int | None, reps: Sequence[Reproduction] | None = None,
               alone: bool = False) -> list[PartRun]:
    """Each reproduction's part (``reps``; default every one) with its tasks for ``mode`` and ``seed`` (None: each
    reproduction's default), its outputs in ``out/<name>/`` (``alone``: in ``out`` itself)."""
    parts = []
    for rep in reps if reps is not None else registry.every():
        part = PartRun(rep.name, out if alone else out / rep.name, rep=rep)
        part.tasks = rep.tasks(mode, seed)
        parts.append(part)
    return parts


def running_text(parts: Sequence[PartRun], slots: Sequence[tuple[int, int]], done: set[int], n_workers: int) -> str:
    """The parts and task kinds running: the first ``n_workers`` tasks not done, in the order they were started
    (``aggregation 000-size, multicast mr4lms``)."""
    running: dict[str, None] = {}
    for j, (pi, ti) in enumerate(slots):
        if j not in done:
            running[f"{parts[pi].mechanism} {parts[pi].tasks[ti].kind}"] = None
            if len(running) >= n_workers:
                break
    return ", ".join(running)


def schedule(tasks: Sequence[Sequence[Task]]) -> list[tuple[int, int]]:
    """The order to run every part's ``tasks`` in, as (part, task) indices: tasks running a user's code first (a
    plug-in that fails does so at once), then the longest first (by their cost estimates)."""
    return sorted(((pi, ti) for pi, ts in enumerate(tasks) for ti in range(len(ts))),
                  key=lambda s: (not tasks[s[0]][s[1]].user, -tasks[s[0]][s[1]].seconds))


def run_model(parts: list[PartRun], n_workers: int, run: Run, bar: Any, cluster: Any = None) -> None:
    """Every part's tasks in one fan-out (a user's code first, then the longest first) on ``n_workers`` processes or a Dask ``cluster``
    (:func:`dcnlab.sweep.pool.fan_out`); each part is finished as soon as its last task is, its results
    in the order of its tasks (so that its averages add up in the same order wherever the tasks ran)."""
    from dcnlab.sweep import cache, pool
    from dcnlab.sweep.progress import ETA

    reps = [p.reproduction for p in parts]
    # pool.fan_out, stored results first (DCNLAB_NO_CACHE=1: none); a user's code named by a string: none
    fan_out = pool.fan_out if any(r.user_code for r in reps) else cache.fan_out
    slots = schedule([p.tasks for p in parts])
    got: list[dict[int, Any]] = [{} for _ in parts]
    done: set[int] = set()
    eta = ETA([parts[pi].tasks[ti].seconds for pi, ti in slots], n_workers)
    warm = registry.warm_every if any(r.warm_up is not None for r in reps) else None
    t0 = time.perf_counter()
    for j, result in fan_out(execute, [(reps[pi].run_task, parts[pi].tasks[ti].arg) for pi, ti in slots],
                             n_workers, cluster, warm=warm):     # compile or load the kernels once
        pi, ti = slots[j]
        part = parts[pi]
        got[pi][ti] = result
        done.add(j)
        eta.done(j)
        bar.update()
        bar.set_postfix(f"{running_text(parts, slots, done, n_workers)}; {eta.text()}" if len(done) < len(slots)
                        else "model done")
        if len(got[pi]) == len(part.tasks):
            part.results = [got[pi][i] for i in range(len(part.tasks))]
            part.seconds = time.perf_counter() - t0
            fin = reps[pi].finish(part.out, Run(run.mode, run.seed, run.workers, part.seconds, run.by, run.cluster),
                                  part.tasks, part.results)
            part.model, part.files = fin.model, list(fin.files)
            left = "" if len(done) == len(slots) else f"; {len(done)} of {len(slots)} model tasks done, {eta.text()}"
            bar.write(f"{part.mechanism}: {len(part.tasks)} tasks done in {part.seconds:.1f} s; wrote {part.out}/"
                      + left)
    for pi, part in enumerate(parts):       # a part with no tasks is finished with none
        if not part.tasks:
            fin = reps[pi].finish(part.out, Run(run.mode, run.seed, run.workers, 0.0, run.by, run.cluster), [], [])
            part.model, part.files = fin.model, list(fin.files)


def measure_alone(parts: list[PartRun], run: Run) -> None:
    """Each part's work that must run alone (e.g. timings, :meth:`~dcnlab.reproduce.protocol.Reproduction.
    measure_alone`), once the model and readings pools are shut; its files before the part's ``summary.json``."""
    for part in parts:
        if part.done:
            files = part.reproduction.measure_alone(part.out, Run(run.mode, run.seed, run.workers, part.seconds,
                                                                  run.by, run.cluster))
            at = next((i for i, f in enumerate(part.files) if f.name == "summary.json"), len(part.files))
            part.files[at:at] = files


def write_part_summary(part: PartRun, quick: bool) -> Path:
    """(Re)write the part's ``summary.json`` with its BMv2 results, or the reason it has none; where its BMv2
    experiment gave figures in several runs, each run's headlines combined (:func:`dcnlab.results.runs.combine_runs`:
    each BMv2 figure the mean over the runs with its standard error, and each run's figure)."""
    rep = part.reproduction
    if len(part.emulation_runs) < 2:
        return write_summary(rep, part.out, part.model, part.emulation, part.emulation_why, quick)
    from dcnlab.results import summary

    # every run's headlines read the model's files in the part's directory (out), with that run's BMv2 figures
    heads = combine_runs({r: rep.headlines(part.out, part.model, data) for r, data in part.emulation_runs.items()})
    with writing(part.out, "--out"):
        return summary.write(part.out / "summary.json", rep.paper_ids, heads, True, part.emulation_why,
                             mechanism=rep.name, quick=quick,
                             bmv2_runs={r: run_dir(int(r)) for r in part.emulation_runs},
                             **rep.summary_extra(part.model, part.emulation))


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


NO_EXPERIMENT = "no BMv2 experiment"
"""Why a reproduction without a BMv2 experiment has no BMv2 figures."""


def bmv2_runs(mode: str, asked: int | None = None) -> int:
    """How many times each BMv2 experiment runs: ``asked`` (``--bmv2-runs N``, N >= 1), else
    :data:`~dcnlab.results.runs.BMV2_RUNS` in a full run and 1 in a quick one (or a smoke test); ``ValueError`` for
    an ``asked`` below 1."""
    if asked is None:
        return BMV2_RUNS if mode == "full" else 1
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise ValueError(f"--bmv2-runs {asked!r}; valid: an integer of 1 or more")
    return asked


def emulate_all(parts: list[PartRun], emulate_on: bool, emu_why: str, quick: bool, bar: Any, runs: int = 1
                ) -> list[str]:
    """Each part's BMv2 experiment (when ``emulate_on``), one after the other, ``runs`` times each (run 1 into the
    part's directory, run ``i`` into its ``bmv2-run-<i>/``, :func:`dcnlab.results.runs.run_dir`), one progress line
    per run; the parts where a run failed (the other runs still run)."""
    failures: list[str] = []
    for p in parts:
        p.emulation_why = emu_why if p.reproduction.has_emulation else NO_EXPERIMENT
        if not emulate_on or not p.reproduction.has_emulation:
            continue
        whys: list[str] = []
        oks: list[bool] = []
        lines: list[str] = []
        p.emulation_runs = {}
        for i in range(1, runs + 1):
            tag = "BMv2" if runs == 1 else f"BMv2 run {i} of {runs}"
            bar.set_postfix(f"{p.mechanism} on {tag}")
            t1 = time.perf_counter()

            def say(msg: str, m: str = f"{p.mechanism} ({tag})") -> None:
                bar.write(f"  {m}: {msg}")

            try:
                out = p.out / run_dir(i) if i > 1 else p.out
                if i > 1:
                    with writing(out, "--out"):
                        out.mkdir(exist_ok=True)
                em = p.reproduction.emulate(out, quick, say)
                p.files += em.files
                p.emulation_files += em.files
                if em.data is not None:
                    p.emulation_runs[str(i)] = em.data
                why, ok = em.why, em.ok
                lines += em.lines if i == 1 else ["", f"BMv2 run {i} of {runs} ({out}/):", *em.lines]
            except Exception as e:      # one broken emulation must not lose the others and the report
                log.exception("%s on %s", p.mechanism, tag)
                why, ok = f"failed on {tag}: {type(e).__name__}: {e}", False
                if p.mechanism not in failures:
                    failures.append(p.mechanism)
            whys.append(why)
            oks.append(ok)
            bar.update()
            bar.write(f"{p.mechanism} ({tag}): {time.perf_counter() - t1:.0f} s; {why}")
        p.emulation = next(iter(p.emulation_runs.values()), None)
        p.emulation_ok = all(oks)
        p.emulation_why = whys[0] if runs == 1 else (f"{runs_text(runs)}: "
                                                     + "; ".join(f"run {i}: {w}" for i, w in enumerate(whys, 1)))
        p.emulation_lines = lines
    return failures


def readings_modules(parts: Sequence[PartRun] | None = None) -> dict[str, Callable[[bool, int], list[Any]]]:
    """Every part's readings functions (default: every reproduction's), by paper id in the order of the ids."""
    from dcnlab.report.readings import modules
    return modules([p.mechanism for p in parts] if parts is not None else None)


def run_readings(fns: dict[str, Callable[[bool, int], list[Any]]], quick: bool, n_workers: int, bar: Any
                 ) -> list[Any]:
    """Every reading of the headlines that deviate (:mod:`dcnlab.results.readings`), paper by paper,
    each on ``n_workers`` processes; quick: fewer rounds and points."""
    found: list[Any] = []
    for paper, fn in fns.items():
        bar.set_postfix(f"readings of {paper}")
        t = time.perf_counter()
        found += fn(quick, n_workers)
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
    outcome: Outcome | None = None
    """``dcnlab reproduce NAME``'s run (:func:`run_one`), for its printout."""


def run_parts(parts: list[PartRun], mode: str, emulate: str, workers: int | None, cluster_address: str | None,
              seed: int | None, readings: bool, desc: str, planned: tuple[bool, str] | None = None,
              runs: int | None = None) -> tuple[dict[str, Any], list[Any], float, list[str], str]:
    """The parts' model tasks on the pool or the Dask cluster at ``cluster_address``, with ``readings`` their
    readings, the work they time alone, the BMv2 experiments as ``emulate`` (auto, on, off) says (``planned``:
    whether they run and why, as the command decided it, :func:`emulation_plan` by default), each ``runs`` times
    (None: :func:`bmv2_runs` of the mode), and their ``summary.json``: (the run's facts, the readings, the model's
    seconds, the parts whose BMv2 failed, where)."""
    from dcnlab.sweep import pool
    from dcnlab.sweep.progress import Progress

    if mode not in MODES:
        raise ValueError(f"mode {mode!r}; valid: {', '.join(MODES)}")
    n_runs = bmv2_runs(mode, runs)
    quick = mode != "full"
    emulate_on, emu_why = planned or emulation_plan(emulate)
    with pool.connect(cluster_address) as cluster:     # before the work: an unreachable scheduler fails at once
        n_workers = cluster.workers if cluster is not None else workers or os.cpu_count() or 1
        where = pool.describe(n_workers, cluster)
        t0 = time.perf_counter()
        runinfo = Run(mode, seed, n_workers, 0.0, f"dcnlab {desc}", cluster.address if cluster is not None else None)
        fns = readings_modules(parts) if readings and mode != "smoke" else {}
        emulating = [p for p in parts if p.reproduction.has_emulation] if emulate_on else []
        total = sum(len(p.tasks) for p in parts) + len(emulating) * n_runs + len(fns)
        with Progress(total, desc, unit="task") as bar:
            run_model(parts, n_workers, runinfo, bar, cluster)
            model_seconds = time.perf_counter() - t0
            found = run_readings(fns, quick, n_workers, bar)     # their fan-outs run on the cluster too
            readings_seconds = time.perf_counter() - t0 - model_seconds
            measure_alone(parts, runinfo)
            failures = emulate_all(parts, emulate_on, emu_why, quick, bar, n_runs)
    for p in parts:
        write_part_summary(p, quick)
    wall = time.perf_counter() - t0
    facts = {"mode": mode, "emulate": emulate, "workers": n_workers,
             "cluster": cluster.address if cluster is not None else None, "wall_seconds": round(wall, 1),
             "model_seconds": round(model_seconds, 1), "readings_seconds": round(readings_seconds, 1), "seed": seed,
             "emulation_why": emu_why, "bmv2_runs": n_runs, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpus": os.cpu_count()}
    bad = failures or [p.mechanism for p in parts if p.emulation_ok is False]
    return facts, found, model_seconds, bad, where


def run(out: Path, mode: str, emulate: str, workers: int | None, cluster_address: str | None,
        seed: int | None, runs: int | None = None) -> AllRun:
    """Every reproduction in one run into ``out`` (its part directories checked by the caller): the model parts on
    the pool or the Dask cluster at ``cluster_address``, the readings, the BMv2 experiments as ``emulate``
    (auto, on, off) says, each ``runs`` times (None: :func:`bmv2_runs` of the mode), the part summaries and the
    report."""
    bmv2_runs(mode, runs)       # a bad count: before any work
    parts = plan_parts(mode, out, seed)
    facts, found, model_seconds, bad, where = run_parts(parts, mode, emulate, workers, cluster_address, seed, True,
                                                        "reproduce all", runs=runs)
    mark_quick(parts, mode, facts, out / "search")
    heads = collect(parts)
    files = write_report(out, parts, heads, facts, found)
    return AllRun(facts, heads, files, bad, where, facts["wall_seconds"], model_seconds)


def mark_quick(parts: Sequence[PartRun], mode: str, facts: dict[str, Any], newer: Path | None = None) -> None:
    """In a quick (or smoke) run, each part's ``summary.json`` marked with the full run's verdict of each statement
    (``full_run``: the pre-registered row of its paper's sensitivity table, the committed one or a newer one in
    ``newer``, :func:`dcnlab.report.search_tables.mark_summary`); ``facts["differ_from_full_run"]``: how many quick
    verdicts differ. ``reproduce all`` and every ``reproduce NAME`` (:func:`run_one`) mark so."""
    if mode != "full":
        from dcnlab.report.search_tables import mark_summary

        facts["differ_from_full_run"] = sum(mark_summary(p.out / "summary.json", newer) for p in parts)


def run_one(rep: Reproduction, out: Path, mode: str, emulate: str, workers: int | None,
            cluster_address: str | None, seed: int | None, planned: tuple[bool, str] | None = None,
            runs: int | None = None) -> AllRun:
    """One reproduction alone (``dcnlab reproduce NAME``; ``rep`` as its command configured it,
    :meth:`~dcnlab.reproduce.protocol.Reproduction.configure`), its outputs and ``summary.json`` in ``out``, as
    ``reproduce all`` writes them in ``OUT/NAME/`` (no readings, no report); ``planned``: whether its BMv2 part
    runs and why, as the command decided it; ``runs``: how many times (None: :func:`bmv2_runs` of the mode).
    What it gave is :attr:`AllRun.outcome`."""
    from dcnlab.results import summary

    bmv2_runs(mode, runs)       # a bad count: before any work
    parts = plan_parts(mode, out, seed, [rep], alone=True)
    facts, _, model_seconds, bad, where = run_parts(parts, mode, emulate, workers, cluster_address, seed, False,
                                                    f"reproduce {rep.name}", planned, runs)
    part = parts[0]
    facts["emulation_why"] = part.emulation_why
    mark_quick(parts, mode, facts)
    heads = sorted(summary.read(part.out / "summary.json").headlines, key=lambda h: h.seed)
    files = list(dict.fromkeys([*part.files, part.out / "summary.json"]))
    run = Run(mode, seed, facts["workers"], part.seconds, f"dcnlab reproduce {rep.name}", facts["cluster"])
    done = Outcome(part.out, run, where, part.tasks, part.model,
                   [f for f in files if f not in part.emulation_files], planned[1] if planned else
                   facts["emulation_why"], part.emulation, part.emulation_why, part.emulation_ok, part.emulation_lines,
                   part.emulation_files)
    return AllRun(facts, heads, files, bad, where, facts["wall_seconds"], model_seconds, done)
