"""What ``dcnlab reproduce cist`` runs: the model sweep (:mod:`~dcnlab.reproduce.cist.model`), the construction
time against N (:mod:`~dcnlab.reproduce.cist.scaling`), then as ``--emulate`` says the BMv2 experiment
(:mod:`~dcnlab.reproduce.cist.bmv2`), and ``summary.json`` with 004's headlines."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.cist import model, plots
from dcnlab.results.outputs import writing

NO_EMULATION = "not asked for (dcnlab reproduce cist --emulate on also runs the BMv2 experiment)"


def scaling_outputs(out: Path, quick: bool, say: Callable[[str], None] | None = None
                    ) -> tuple[dict[str, Any], list[Path]]:
    """Theorems 5-7: count the construction's instructions against N (:func:`dcnlab.reproduce.cist.opcount.measure`,
    the judged figure, ``operations.png``) and, in the full run, time it too
    (:func:`dcnlab.reproduce.cist.scaling.measure`, a figure only, ``scaling.png``); ``scaling.json`` holds both
    (the counts under ``operations``; :func:`write_summary` reads it). (the measurement, the files)."""
    import json

    from dcnlab.reproduce.cist import opcount
    from dcnlab.reproduce.cist import scaling as cist_scaling

    ops = opcount.measure(quick, progress=say)
    data: dict[str, Any] = cist_scaling.measure(quick, progress=say) if not quick else {"slope": None}
    data["operations"] = ops
    with writing(out, "--out"):
        files = [opcount.plot(ops, out / "operations.png")]
        if data.get("points"):
            files.append(cist_scaling.plot(data, out / "scaling.png"))
        (out / "scaling.json").write_text(json.dumps(data, indent=1))
        return data, files + [out / "scaling.json"]


def scaling_lines(data: dict[str, Any]) -> list[str]:
    """The instruction counts' verdict and, where timed, the CPU-time slopes as a few lines of text."""
    from dcnlab.reproduce.cist import headlines, opcount
    from dcnlab.reproduce.cist import scaling as cs

    h = headlines.linear(data)
    lines = opcount.lines(data["operations"]) + [f"  worst {h.worst_at}: {h.model:+.1f}% per doubling; O(N) "
                                                  f"(at most 0%): {h.model_verdict}"]
    if data.get("slope") is None:
        return lines + ["  CPU time not measured (--quick; the full run times it, as a figure)"]
    ns = sorted({int(p["switches"]) for p in data["points"]})
    lines += [f"  CPU time (a figure, not judged): log-log slope of time vs N, balanced Dragonfly a = 2h, "
              f"N = {ns[0]:,}..{ns[-1]:,}; {data['statistic']}"]
    return lines + [f"    {line}" for line in cs.algorithm_lines(data)]


def plugin_refs(names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(name as written, reference a worker resolves)`` of every ``--algo`` construction, checked before any
    work: a built-in is one :class:`~dcnlab.topos.errors.UserError` (the sweep runs the paper's already)."""
    from dcnlab.controller.cist.registry import get
    from dcnlab.controller.registry import portable
    from dcnlab.topos.errors import UserError

    for name in names:
        if get(name).builtin:
            raise UserError(f"--algo {name}: a built-in; the model sweep runs the paper's CISTs already (valid: an "
                            "installed plug-in, package.module:name or file.py:name)")
    return tuple((n, portable(n)) for n in dict.fromkeys(names))


def plugin_rows(cases: list[dict[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """Each plug-in's name, origin and, per instance, its trees' survival: ``summary.json``'s ``algorithms``."""
    from dcnlab.controller.cist.registry import get

    out = []
    for n in names:
        a = get(n)
        per = {}
        for c in cases:
            r = c.get("algorithms", {}).get(n)
            if r is not None:
                per[c["spec"]] = {"k": r["k"], "diameters": r["diameters"], "build_seconds": r["build_seconds"],
                                  "no_loss_below_k": r["no_loss_below_k"],
                                  "adversary_lost_pairs": {kind: v["cists_lost"] for kind, v in r["adversary"].items()},
                                  "sweep_mean_delivered": [p["cists_mean"] for p in r["sweep"]]}
        out.append({"name": n, "origin": a.origin, "summary": a.summary, "instances": per})
    return out


def write_summary(out: Path, cases: list[dict[str, Any]] | None, emulations: list[dict[str, Any]] | None,
                  quick: bool, why: str = "", algorithms: list[dict[str, Any]] | None = None) -> Path:
    """``summary.json``: the headlines of 004 (:func:`dcnlab.reproduce.cist.headlines.cist`), with the
    construction-time measurement of ``out/scaling.json`` when :func:`scaling_outputs` wrote one;
    ``algorithms``: the plug-ins' rows (:func:`plugin_rows`), when any ran."""
    from dcnlab.reproduce.cist import headlines
    from dcnlab.reproduce.cist import scaling as cist_scaling
    from dcnlab.results import summary

    if emulations is not None and not why:
        why = "ran on BMv2: broadcasts under failures on " + ", ".join(e["spec"] for e in emulations)
    scaling = cist_scaling.load(out)
    with writing(out, "--out"):
        extra: dict[str, Any] = {"algorithms": algorithms} if algorithms else {}
        return summary.write(out / "summary.json", ("004",), headlines.cist(cases, emulations, scaling=scaling),
                             emulations is not None, why or NO_EMULATION, mechanism="cist", quick=quick, **extra)


def run(out: Path, quick: bool, workers: int | None, seed: int, cluster_address: str | None, emulate: bool,
        say: Callable[[str], None], algos: Sequence[str] = (), why: str = "") -> tuple[dict[str, Any], list[str], bool]:
    """The model sweep on the pool (or the Dask cluster at ``cluster_address``), the construction time against N,
    with ``emulate`` the BMv2 experiment (``say`` gets its progress; ``why``: why it runs or not, for
    ``summary.json``), and ``summary.json``, all in ``out``: the
    results as JSON, the lines that say them, and whether every check held. ``algos``: user constructions
    run in the model sweep beside the paper's (their trees checked by ``check_trees``; their rows in the
    table, their lines in ``model-sweep.png``, their survival and origin in ``summary.json``)."""
    import json
    import os

    from dcnlab.sweep import pool
    from dcnlab.sweep.progress import Progress

    refs = plugin_refs(algos)
    specs = model.QUICK_MODEL_SPECS if quick else model.MODEL_SPECS
    rounds = 5 if quick else 20
    with pool.connect(cluster_address) as cluster:     # before the work: an unreachable scheduler fails at once
        with Progress(len(specs), "model instances", unit="instance") as bar:
            cases = model.model_cases(specs, rounds, workers or os.cpu_count() or 1, seed, bar, cluster, refs)
        where = pool.describe(workers, cluster)
    with writing(out, "--out"):
        plots.plot_model(cases, out / "model-sweep.png")
        (out / "model.json").write_text(json.dumps(cases, indent=1))
    # every construction that succeeds gives valid CISTs that lose nothing (a failing construction is a
    # condition the paper omits: a headline's failure, not the run's)
    ok = all(c["valid"] and c["no_loss_below_k"] is not False for c in cases if not c.get("error"))
    lines = model.model_lines(cases) + [f"model on {where}; wrote {out / 'model-sweep.png'} and {out / 'model.json'}"]
    from dcnlab.reproduce.cist import opcount
    from dcnlab.reproduce.cist.scaling import plan_size
    with Progress(opcount.plan_size(quick) + (0 if quick else plan_size(quick)), "construction cost vs N",
                  unit="instance") as bar:
        def timed(name: str) -> None:
            bar.update()
            bar.set_postfix(name)

        scaling, scaling_files = scaling_outputs(out, quick, timed)
    lines += [""] + scaling_lines(scaling) + [f"wrote {' and '.join(map(str, scaling_files))}"]
    emulations = []
    if emulate:
        from dcnlab.reproduce.cist import bmv2 as exp

        configs = [exp.SMALL] if quick else [exp.SMALL, exp.LARGE]
        if quick:
            configs = [exp.quick(c) for c in configs]
        for cfg in configs:
            result = exp.run_experiment(cfg, progress=say)
            with writing(out, "--out"):
                png, js = exp.write_outputs(result, out)
            emulations.append(result.to_json())
            ok = ok and result.ok
            lines += [""] + result.summary_lines() + [f"wrote {png} and {js}"]
    if not emulate:
        lines += ["", f"BMv2 experiment: {why or NO_EMULATION}"]
    names = [n for n, _ in refs]
    summary = write_summary(out, cases, emulations if emulate else None, quick, "" if emulate else why,
                            algorithms=plugin_rows(cases, names) if names else None)
    lines.append(f"wrote {summary}")
    return {"model": cases, "scaling": scaling, "emulation": emulations, "ok": ok}, lines, ok
