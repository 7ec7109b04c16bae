"""CLI of the cist mechanism (paper 004, CISTs on Dragonfly): ``dcnlab plan cist``, ``dcnlab reproduce cist`` and
``dcnlab bench cist``.

``dcnlab plan cist --topo dragonfly:p=1,a=4,h=2 [--rule generic|algorithm3] [--json] [--plot FILE.png]
[--fail s0_2,s1_0-s2_3] [--adversary switch|link|mixed]`` prints the CIST-partition, the trees, their
diameters and the validation. ``--json`` prints exactly one object,
``{"parts": [[...]...], "trees": [[[u, v]...]...], "diameters": [...], "valid": true}``; with ``--fail`` or
``--adversary`` it has one more key, ``"failures"``, with the delivery of the CISTs and of a single BFS tree.

``dcnlab bench cist`` times construction plus validation of Dragonfly(a=16,h=8) for every arrangement
(goal <= 2 s each), and in its last columns the log-log slopes of the construction time against N
(Theorems 5-7; :mod:`dcnlab.reproduce.cist.scaling`, the ``--quick`` sizes) of the case's arrangement.

``dcnlab reproduce cist [--emulate auto|on|off] [--quick] [--out DIR] [--json] [--workers N | --cluster ADDRESS]``
(the paper has no experiments, so this reproduces its claims): on the model backend, for Dragonfly instances
from D(4,2) to D(16,8), the k = ⌊a/2⌋ CISTs are built and validated, random failures are swept (delivered
fraction vs failed elements, CISTs vs a single BFS tree; nothing may be lost with f <= k-1) and the adversary's
k failures are costed. The construction time is fitted against N (Theorems 5-7, O(N);
:mod:`dcnlab.reproduce.cist.scaling`: ``scaling.png`` and ``scaling.json``, about 35 CPU seconds, 5 with
``--quick``). Then, as ``--emulate`` says (:mod:`dcnlab.cli.emulate`), it runs the BMv2 experiment of
:mod:`dcnlab.reproduce.cist.bmv2` on Dragonfly(p=1,a=4,h=2) and, without ``--quick``, on Dragonfly(p=1,a=6,h=2).
PNG and JSON go to ``--out`` (default ``results/cist``).
"""

from __future__ import annotations

import argparse
import json
import sys

from dcnlab.cli import emulate
from dcnlab.cli.argtypes import algorithm_option, exclusive, ranged, seed, workers
from dcnlab.cli.errors import UserError
from dcnlab.reproduce.cist import bench as cist_bench
from dcnlab.reproduce.cist import plan as cist_plan
from dcnlab.reproduce.cist import plots
from dcnlab.results.outputs import image_file, writing
from dcnlab.sweep.pool import add_cluster_option
from dcnlab.topos.model import Role

# -- plan -----------------------------------------------------------------------------------------------


def cmd_plan(args: argparse.Namespace) -> int:
    from dcnlab.controller.cist import (
        SwitchGraph,
        cist_partition,
        parse_failures,
        plan_from_partition,
    )
    from dcnlab.topos.dragonfly import Dragonfly

    exclusive(args, "--rule", "--algo", why="--algo generic and --algo algorithm3 are the two rules")
    algo = args.algo or args.rule or "generic"
    plot = image_file(args.plot, "--plot") if args.plot is not None else None
    fabric = cist_plan.cist_fabric(args.topo)
    if plot is not None and fabric.counts().get(Role.SWITCH, 0) > plots.MAX_PLOTTED_SWITCHES:
        raise UserError(f"--plot: {fabric.spec} has {fabric.counts()[Role.SWITCH]:,} switches; drawing is limited "
                        f"to {plots.MAX_PLOTTED_SWITCHES:,}")
    if args.adversary:
        cist_plan.check_adversary_size(fabric)
    # --fail is checked against the switch graph before the partition, trees and validation are built
    graph = SwitchGraph.from_fabric(fabric) if isinstance(fabric, Dragonfly) else None
    given = parse_failures(args.fail, graph) if args.fail and graph is not None else None
    if algo in ("generic", "algorithm3"):
        plan = plan_from_partition(fabric, cist_partition(fabric, graph), algo, graph)  # type: ignore[arg-type]
    else:
        from dcnlab.controller.cist.registry import plan_with
        plan = plan_with(fabric, algo, graph)
    args.planned = ("cist", fabric, plan, given)     # for --view (dcnlab.view.wrap_plan)
    failures, failure_lines = cist_plan.failure_report(plan, args.adversary, given) if (args.fail or args.adversary) else ({}, [])
    if plot is not None:
        with writing(plot, "--plot"):
            plots.plot_plan(plan, fabric, plot)
        print(f"wrote {plot}", file=sys.stderr)
    if args.json:
        data = plan.to_json()
        if failures:
            data["failures"] = failures
        print(json.dumps(data))
    else:
        print(cist_plan.describe(plan, algo))
        for line in failure_lines:
            print(line)
    return 0 if plan.validation.ok else 1


# -- bench ----------------------------------------------------------------------------------------------


def cmd_bench(args: argparse.Namespace) -> int:
    import networkx  # noqa: F401  (imports are not part of the measurement)
    import scipy.sparse.csgraph  # noqa: F401

    specs = args.spec or cist_bench.BENCH_SPECS
    fabrics = [cist_plan.cist_fabric(spec, "bench cist") for spec in specs]  # every case bounded before the first is timed
    results = []
    for spec in specs:
        runs = [cist_bench.bench_case(spec) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        best["runs_seconds"] = [r["seconds"] for r in runs]
        results.append(best)
    slopes = cist_bench.bench_slopes(sorted({str(getattr(f, "arrangement", "relative")) for f in fabrics}))
    for r, f in zip(results, fabrics):
        r["slope"] = slopes[str(getattr(f, "arrangement", "relative"))]
    if args.json:
        print(json.dumps(results))
        return 0
    from dcnlab.results.goals import verdict
    goal = f"<= {cist_bench.BENCH_GOAL_SECONDS:g} s, trees valid"
    width = len(verdict(False, goal))
    print(f"{'case':<46} {'switches':>8} {'trees':>5} {'best s':>7} {'worst s':>7}  {'verdict':<{width}}  {'A1/2':>4} "
          f"{'A3/tree':>7}  phases (best run)")
    for r in results:
        ok = verdict(r["seconds"] <= cist_bench.BENCH_GOAL_SECONDS and r["valid"], goal)
        phases = ", ".join(f"{k} {v:.2f}" for k, v in r["phases"].items())
        print(f"{r['spec']:<46} {r['switches']:>8,} {r['trees']:>5} {r['seconds']:7.2f} "
              f"{max(r['runs_seconds']):7.2f}  {ok:<{width}}  {r['slope']['partition']:4.2f} "
              f"{r['slope']['alg3_per_tree']:7.2f}  {phases}")
    from dcnlab.reproduce.cist import scaling as cs
    print(f"A1/2, A3/tree: log-log slope of the time of Algorithm 1 or 2 (partition) and of Algorithm 3 per tree\n"
          f"  against N, the case's arrangement, balanced Dragonfly a = 2h, a = {', '.join(map(str, cs.QUICK_A))}\n"
          f"  (Theorems 5-7: O(N) is slope 1; at most {cs.SLOPE_THRESHOLD:g} counts)")
    return 0


def add_plan_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cist", help="completely independent spanning trees of a Dragonfly (partition, trees, "
                                    "diameters, validation)")
    p.add_argument("--topo", required=True, metavar="SPEC", help="fabric spec, e.g. dragonfly:p=1,a=4,h=2")
    p.add_argument("--rule", choices=("generic", "algorithm3"),
                   help="leaf rule: generic (any partition; the default) or the corrected Algorithm 3 "
                        "(relative/circulant)")
    algorithm_option(p, "cist", help="the construction: generic or algorithm3 (the rules), an installed plug-in, "
                                     "package.module:name, file.py:name, or list (default: --rule)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="draw the trees (one panel per tree)")
    p.add_argument("--fail", metavar="LIST", help="failed switches and links, e.g. s0_2,s1_0-s2_3: report the "
                                                  "pairs a broadcast still reaches, CISTs vs a single BFS tree")
    p.add_argument("--adversary", choices=("switch", "link", "mixed"),
                   help="also choose k failures of this kind that cut a pair in every tree, and report the loss")
    p.set_defaults(func=cmd_plan)


def add_bench_parser(bsub: argparse._SubParsersAction) -> None:
    b = bsub.add_parser("cist", help=f"CIST construction + validation time, Dragonfly(a=16,h=8) "
                                     f"(goal <= {cist_bench.BENCH_GOAL_SECONDS:.0f} s), and the slope of construction time vs N")
    b.add_argument("--spec", action="append", help="fabric spec instead of the three Dragonfly(16,8) cases "
                                                   "(repeatable)")
    b.add_argument("--repeat", type=ranged(int, 1, 100), default=3, help="runs per case (best is reported)")
    b.add_argument("--json", action="store_true", help="machine-readable output")
    b.set_defaults(func=cmd_bench)


# -- reproduce ------------------------------------------------------------------------------------------


def cmd_reproduce(args: argparse.Namespace) -> int:
    """As every reproduction runs (:func:`dcnlab.cli.reproduce.run_alone`), with ``--algo``."""
    from dcnlab.cli.reproduce import run_alone
    from dcnlab.reproduce.cist.reproduction import REPRODUCTION

    planned = emulate.bmv2_plan(args, "cist")     # before the model sweep and before --out is touched
    exclusive(args, "--workers", "--cluster", why="the cluster's workers run the model")
    return run_alone(REPRODUCTION.configure(args), args, args.out, planned)      # --algo: one line, before --out


def add_reproduce_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cist", help="CISTs on Dragonfly: broadcast that survives k-1 failures (model sweep, then "
                                    "the BMv2 experiment as --emulate says)")
    emulate.emulate_option(p, "broadcasts under failures while traffic runs, CISTs against a single tree, on "
                              "Dragonfly(1,4,2), and Dragonfly(1,6,2) unless --quick")
    p.add_argument("--quick", action="store_true", help="fewer instances and rounds; a shorter emulation")
    p.add_argument("--out", default="results/cist", metavar="DIR", help="output directory for PNG and JSON")
    p.add_argument("--workers", type=workers(), default=None,
                   help="model processes (default: every core)")
    add_cluster_option(p, "model instances (one task per Dragonfly)")
    p.add_argument("--seed", type=seed(), default=0, help="seed of the failure draws")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    algorithm_option(p, "cist", append=True, metavar="ALGO",
                     help="also run this construction in the model sweep beside the paper's CISTs (repeatable; its "
                          "trees checked first): its rows in the table, its lines in model-sweep.png, its survival "
                          "and origin in summary.json; an installed plug-in, package.module:name, file.py:name, "
                          "or list")
    p.set_defaults(func=cmd_reproduce)
