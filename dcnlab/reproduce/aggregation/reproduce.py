"""What ``dcnlab reproduce aggregation`` runs: the model sweep (:mod:`~dcnlab.reproduce.aggregation.model`) and its
outputs, then as ``--emulate`` says the BMv2 experiment (:mod:`~dcnlab.reproduce.aggregation.bmv2`) and 000's
waiting time (:mod:`~dcnlab.reproduce.aggregation.waiting`), and ``summary.json`` with the headlines of 003 and
000."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.aggregation import bmv2, model, plots, plugins

NO_EMULATION = "not asked for (dcnlab reproduce aggregation --emulate on runs the BMv2 experiment)"


def write_outputs(out: Path, results: dict[str, Any], meta: dict[str, Any], algos: Sequence[str] = ()) -> list[Path]:
    """``aggregation.json``, the plots and ``summary.json`` (the papers' headlines) in ``out``; ``algos``: the
    user's tree builders that ran beside the papers' schemes (their rows and origins in both JSON files)."""
    from dcnlab.results.outputs import writing

    with writing(out, "--out"):
        (out / "aggregation.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
        files = plots.charts(results, out)
    write_summary(out, results, bool(meta.get("quick")), algorithms=plugins.rows(results, algos) if algos else None)
    return files


def write_summary(out: Path, results: dict[str, Any] | None, quick: bool, emulation: dict[str, Any] | None = None,
                  why: str = NO_EMULATION, model_why: str = "", algorithms: list[dict[str, Any]] | None = None) -> Path:
    """``summary.json``: the headlines of 003 and 000 (:func:`dcnlab.reproduce.aggregation.headlines.aggregation`);
    ``algorithms``: the plug-ins' rows (:func:`dcnlab.reproduce.aggregation.plugins.rows`), when any ran."""
    from dcnlab.reproduce.aggregation import headlines
    from dcnlab.results import summary
    from dcnlab.results.outputs import writing

    worked = headlines.bcube41_examples() if results is not None else None
    heads = headlines.aggregation(results, emulation, worked, why=model_why)
    with writing(out, "--out"):
        extra: dict[str, Any] = {"algorithms": algorithms} if algorithms else {}
        return summary.write(out / "summary.json", ("000", "003"), heads, emulation is not None, why,
                             mechanism="aggregation", quick=quick, **extra)


def reproduce(args: argparse.Namespace, bmv2: bool = False, why: str = "") -> int:
    """``dcnlab reproduce aggregation``: the model parts into ``args.out``, then with ``bmv2`` the BMv2 experiment
    (:func:`run_bmv2`); ``why``: why it runs or not, for ``summary.json``. Exit status 1 when a BMv2 check fails."""
    from dcnlab.topos.errors import UserError

    if args.rounds is not None and args.rounds < 1:
        raise UserError(f"--rounds {args.rounds}: valid: at least 1")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers}: valid: at least 1")
    from dcnlab.results.outputs import output_dir

    out = output_dir(args.out, "--out")     # before the rounds: a bad --out fails in a second, not an hour
    parts = args.only or list(model.PARTS)
    refs = plugins.worker_refs(getattr(args, "algo", None) or (), parts)     # before the rounds, one line
    pl = model.plans(args.quick, args.rounds)
    tasks: list[tuple[Any, ...]] = [
        (part, p, rnd, args.seed) + ((None, refs) if refs and part in plugins.PARTS else ())
        for part in parts for p in pl[part].points for rnd in range(pl[part].rounds)]
    from dcnlab.sweep import pool

    with pool.connect(getattr(args, "cluster", None)) as cluster:
        t0 = time.perf_counter()
        done = model.run_tasks(tasks, args.workers, cluster=cluster)
        wall = time.perf_counter() - t0
        where = pool.describe(args.workers, cluster)
        n_workers = cluster.workers if cluster is not None else args.workers or os.cpu_count()
    results = model.collect(parts, pl, done)
    meta = {"quick": args.quick, "seed": args.seed, "workers": n_workers,
            "cluster": cluster.address if cluster is not None else None,
            "wall_seconds": round(wall, 1), "load_average": os.getloadavg()}
    names = [name for name, _ in refs]
    if names:
        meta["algorithms"] = plugins.describe(names)
    files = write_outputs(out, results, meta, names)
    emu, lines, ok = run_bmv2(args, out, results, names) if bmv2 else (None, [], True)
    if not bmv2:
        write_summary(out, results, bool(args.quick), None, why or NO_EMULATION,
                      algorithms=plugins.rows(results, names) if names else None)
    if getattr(args, "json", False):
        print(json.dumps({"meta": meta, "results": results, "table": model.table(results).splitlines(),
                          "emulation": emu, "emulation_why": why or NO_EMULATION}, default=str))
        return 0 if ok else 1
    print(model.table(results))
    print(f"\n{len(tasks)} rounds in {wall:.1f} s on {where}; wrote {out / 'aggregation.json'}, "
          f"{out / 'summary.json'} and {len(files)} plots in {out}/")
    print("\n".join([""] + lines if lines else [f"BMv2 experiment: {why or NO_EMULATION}"]))
    return 0 if ok else 1


def config_from_args(args: argparse.Namespace) -> bmv2.EmuConfig:
    """The BMv2 experiment's configuration from the command's options (``--quick``, ``--seed``, ``--topo``)."""
    cfg = bmv2.QUICK if getattr(args, "quick", False) else bmv2.EmuConfig()
    seed = getattr(args, "seed", None)
    if seed is not None:
        cfg = dataclasses.replace(cfg, seed=int(seed))
    topo = getattr(args, "topo", None)
    if topo:
        cfg = dataclasses.replace(cfg, specs=tuple(topo) if isinstance(topo, (list, tuple)) else (topo,))
    extra = getattr(args, "algo", None)
    if extra:
        cfg = dataclasses.replace(cfg, extra_algorithms=tuple(dict.fromkeys(extra)))
    return cfg


def run_bmv2(args: argparse.Namespace, out: Path, results: dict[str, Any] | None = None, algos: Sequence[str] = ()
             ) -> tuple[dict[str, Any], list[str], bool]:
    """The BMv2 experiment with the command's options (``--quick``, ``--seed``, ``--topo``, ``--algo``) and, without
    ``--topo``, 000's waiting time, their outputs and ``summary.json`` (with the model's ``results`` when they ran
    first) in ``out``: (the experiment as JSON, the lines that say it, whether every check held)."""
    import sys

    from dcnlab.results.outputs import writing

    cfg = config_from_args(args)
    quick = bool(getattr(args, "quick", False))

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    result = bmv2.run_experiment(cfg, say)
    with writing(out, "--out"):
        png, js = bmv2.write_outputs(result, out)
    emu, waited = result.to_json(), None
    if not getattr(args, "topo", None):      # 000's waiting time, on the largest BCube (waiting.py)
        from dcnlab.reproduce.aggregation import waiting as aggregation_waiting
        waited = aggregation_waiting.run_and_write(quick, getattr(args, "seed", None), out, say)
        emu["waiting"] = waited.to_json()
    write_summary(out, results, quick, emu, bmv2.emulation_note(result),
                  model_why="" if results is not None else "the model parts did not run",
                  algorithms=plugins.rows(results, algos) if results is not None and algos else None)
    lines = result.summary_lines() + (waited.summary_lines() if waited else []) + [f"wrote {png} and {js}"]
    return emu, lines, result.ok and (waited is None or waited.ok)
