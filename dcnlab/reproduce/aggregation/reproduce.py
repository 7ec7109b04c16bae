"""What ``dcnlab reproduce aggregation`` runs: the model sweep (:mod:`~dcnlab.reproduce.aggregation.model`) and its
outputs, or with ``--emulate`` the BMv2 experiment (:mod:`~dcnlab.reproduce.aggregation.bmv2`) and 000's waiting
time (:mod:`~dcnlab.reproduce.aggregation.waiting`), and ``summary.json`` with the headlines of 003 and 000."""

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

NO_EMULATION = "not asked for (dcnlab reproduce aggregation --emulate runs the BMv2 experiment)"


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


def reproduce(args: argparse.Namespace) -> int:
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
    if getattr(args, "json", False):
        print(json.dumps({"meta": meta, "results": results, "table": model.table(results).splitlines()}))
        return 0
    print(model.table(results))
    print(f"\n{len(tasks)} rounds in {wall:.1f} s on {where}; wrote {out / 'aggregation.json'}, "
          f"{out / 'summary.json'} and {len(files)} plots in {out}/")
    return 0


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


def run_bmv2(args: argparse.Namespace) -> int:
    """``dcnlab reproduce aggregation --emulate [--quick] [--out DIR] [--seed S] [--json]``: exit 0 when every
    check passes, 1 otherwise."""
    import sys

    from dcnlab.results.outputs import output_dir, writing

    cfg = config_from_args(args)
    quick = dataclasses.replace(cfg, extra_algorithms=()) == bmv2.QUICK
    out_arg = getattr(args, "out", None)
    out = output_dir(bmv2.DEFAULT_OUT if out_arg in (None, "results/aggregation") else out_arg, "--out")  # before the run

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
    write_summary(out, None, quick, emu, bmv2.emulation_note(result),
                  model_why="--emulate runs the BMv2 experiment instead of the model")
    if getattr(args, "json", False):
        print(json.dumps(emu, default=str))
    else:
        print("\n".join(result.summary_lines() + (waited.summary_lines() if waited else [])))
        print(f"wrote {png} and {js}")
    return 0 if result.ok and (waited is None or waited.ok) else 1
