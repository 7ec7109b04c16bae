"""What ``dcnlab reproduce multicast`` runs: the model sweep (:mod:`~dcnlab.reproduce.multicast.model`) and its
outputs, then as ``--emulate`` says the BMv2 experiment (:mod:`~dcnlab.reproduce.multicast.bmv2`), and
``summary.json`` with 001's headlines."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dcnlab.reproduce.multicast import model, plots
from dcnlab.reproduce.multicast.model import COLORS, SPEC, Claim


def reproduce(args: argparse.Namespace, bmv2: bool = False, why: str = "", say: Callable[[str], None] = print) -> int:
    """``dcnlab reproduce multicast``: the model sweep, its table, plots and JSON in ``args.out``, then with ``bmv2``
    the BMv2 experiment (:func:`run_bmv2`; ``say`` gets its progress); ``why``: why it runs or not, for
    ``summary.json``. Exit status 1 when a BMv2 check fails."""
    from dcnlab.results.outputs import output_dir

    out = output_dir(args.out, "--out")     # before the runs: a bad --out fails at once
    tasks = model.tasks_for(args.quick, getattr(args, "algo", None) or ())
    from dcnlab.sweep import pool

    with pool.connect(getattr(args, "cluster", None)) as cluster:
        start = time.perf_counter()
        rows = model.run_all(tasks, args.workers, cluster)
        wall = time.perf_counter() - start
        where = pool.describe(args.workers, cluster)
    cs, pngs = write_outputs(out, rows, args.quick, wall, why or NO_EMULATION)
    print(f"C-MR4LMS reproduction on {SPEC} (40,448 nodes: 7,680 switches + 32,768 terminals), C={COLORS}"
          + (" [quick]" if args.quick else ""))
    print(model.table(rows))
    print()
    print(model.claims_table(cs))
    print()
    print(f"{len(rows)} runs in {wall:.0f} s on {where}; wrote "
          + ", ".join(str(p) for p in [out / "multicast.json", out / "summary.json", *pngs]))
    if not bmv2:
        print(f"BMv2 experiment: {why or NO_EMULATION}")
        return 0
    result, png, js, summ = run_bmv2(out, args.quick, getattr(args, "topo", None), getattr(args, "colors", None),
                                     getattr(args, "feed", None), getattr(args, "cut", None), say,
                                     tuple(getattr(args, "algo", None) or ()), rows)
    print()
    print("\n".join(result.summary_lines()))
    print(f"wrote {js}, {png} and {summ}")
    return 0 if result.ok() else 1


NO_EMULATION = "not asked for (dcnlab reproduce multicast --emulate on runs the BMv2 experiment)"


def write_outputs(out: Path, rows: list[dict[str, Any]], quick: bool, wall: float, why: str = NO_EMULATION
                  ) -> tuple[list[Claim], list[Path]]:
    """``multicast.json`` (every row, a random pattern's once per draw), the plots and ``summary.json`` (C-MR4LMS's
    headlines; ``why``: why the BMv2 experiment did not run) in ``out``."""
    from dcnlab.results.outputs import writing

    rows = model.sort_rows(rows)        # deterministic whatever order the tasks finished in
    cs = model.claims(rows)
    from dcnlab.controller.multicast.registry import get
    data = {"spec": SPEC, "colors": COLORS, "quick": quick, "wall_seconds": wall, "draws": model.draws_of(rows),
            "rows": rows,
            "claims": [c.__dict__ for c in cs],
            "algorithms": [{"name": a, "origin": get(a).origin, "summary": get(a).summary}
                           for a in sorted({r["algo"] for r in rows}, key=model.algo_rank)]}
    with writing(out, "--out"):
        (out / "multicast.json").write_text(json.dumps(data, indent=1) + "\n")
        pngs = plots.plot(rows, out)
    write_summary(out, rows, quick, why=why)
    return cs, pngs


def write_summary(out: Path, rows: list[dict[str, Any]] | None, quick: bool, ran: bool = False,
                  why: str = NO_EMULATION, model_why: str = "", **extra: Any) -> Path:
    """``summary.json``: the headlines of 001 (:func:`dcnlab.reproduce.multicast.headlines.multicast`); the BMv2
    experiment (``ran``) checks delivery and the model's per-link copies, none of the paper's figures."""
    from dcnlab.reproduce.multicast import headlines
    from dcnlab.results import summary
    from dcnlab.results.outputs import writing

    with writing(out, "--out"):
        return summary.write(out / "summary.json", ("001",), headlines.multicast(rows, model_why), ran, why,
                             mechanism="multicast", quick=quick, **extra)


def run_bmv2(out: Path, quick: bool, topo: str | None, colors: int | None, feed: Any, cut: Any,
             progress: Callable[[str], None], algorithms: tuple[str, ...] = (), rows: list[dict[str, Any]] | None = None
             ) -> tuple[Any, Path, Path, Path]:
    """The BMv2 experiment (:mod:`dcnlab.reproduce.multicast.bmv2`) with the command's options (None: the
    defaults), its JSON and PNG and ``summary.json`` in ``out`` (with the model sweep's ``rows`` when it ran
    first): (the result, the PNG, the JSON, the summary)."""
    from dataclasses import replace

    from dcnlab.reproduce.multicast import bmv2 as exp
    from dcnlab.results.outputs import writing

    cfg = exp.EmuConfig()
    cfg = replace(cfg, spec=topo or cfg.spec, colors=colors or cfg.colors, feed=feed or cfg.feed, cut=cut or cfg.cut,
                  algorithms=tuple(algorithms))
    if quick:
        cfg = exp.quick(cfg)
    result = exp.run_experiment(cfg, progress=progress)
    with writing(out, "--out"):
        png, js = exp.write_outputs(result, out)
    extra = {"algorithms": [{k: r[k] for k in ("algorithm", "origin", "groups", "placed", "trees",
                                               "entries_per_switch_max", "entries_per_port_max",
                                               "table_limit_per_port", "checks", "failover")}
                            | {"delivered": r["window"]["delivered"], "receptions": r["window"]["receptions"]}
                            for r in result.algorithms]} if result.algorithms else {}
    summ = write_summary(out, rows, quick, True, exp.emulation_note(result),
                         model_why="" if rows is not None else "the model parts did not run", **extra)
    return result, png, js, summ
