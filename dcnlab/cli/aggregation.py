"""CLI of the aggregation mechanism (papers 000, M2, and 003, IRS/SRS): ``dcnlab plan aggregation``,
``dcnlab reproduce aggregation``, ``dcnlab bench aggregation``.

Members are BCube servers (``v<i>``) or fat-tree hosts (``h<pod>_<edge>_<x>``). ``random:M`` picks M
distinct members with ``--seed``; receivers are drawn first and senders from the rest, so the two
sets never overlap. Heavy imports stay inside the handlers so that ``dcnlab`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dcnlab.cli import emulate
from dcnlab.cli.argtypes import algorithm_option, exclusive, needs, number, ranged, seed, workers
from dcnlab.cli.errors import UserError
from dcnlab.reproduce.aggregation import plan as aggregation_plan
from dcnlab.results.outputs import image_file, writing
from dcnlab.sweep.pool import add_cluster_option

MAX_PRINTED_EDGES = 60
MAX_KMB_WORK = 5_000_000
"""Terminals x (nodes + links) for ``kmb`` on a fat-tree (networkx; about 10 s at the limit)."""
DEFAULT_TIME_LIMIT = 300.0
MAX_SHUFFLE_PAIRS = 100_000
"""Senders x receivers of a shuffle at most: ``plan`` builds one named tree per receiver, in time linear
in the pairs, with a progress bar on a terminal (BCube(8,5) on 2 cores that a compiler build also used:
200 x 200 in 7-10 s, 316 x 316 in 15-18 s); ``reproduce aggregation`` runs the paper's 1500 x 1500 on the
engine."""
SHUFFLE_PROGRESS_DELAY = 1.0
"""Seconds before a shuffle's progress bar shows on a terminal (a quick plan draws none)."""


def cmd_plan(args: argparse.Namespace) -> int:
    import time
    started = time.monotonic()      # --time-limit counts from here: imports, draws, model, solver, output

    import numpy as np

    from dcnlab.controller import aggregation as agg
    from dcnlab.controller.aggregation.optimal_run import Deadline
    from dcnlab.sweep.progress import Progress, is_terminal
    from dcnlab.topos.spec import parse_spec

    plot = image_file(args.plot, "--plot") if args.plot is not None else None
    fabric = parse_spec(args.topo)
    agg.algorithms_for(fabric)
    algo = args.algo or ("updown" if fabric.kind == "fattree" else ("srs" if args.shuffle else "irs"))
    _check_applicable(args, algo)
    draw_seed = 0 if args.seed is None else args.seed
    deadline = Deadline(DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit, started)
    rng = np.random.default_rng(draw_seed)
    if args.shuffle:
        if not args.receivers:
            raise UserError("--shuffle needs --receivers R1,R2,... or --receivers random:N")
        receivers = aggregation_plan.member_list(fabric, args.receivers, "receivers", rng, set())
    else:
        if not args.receiver:
            raise UserError("--receiver R is required (or --shuffle --receivers ...)")
        receivers = [args.receiver.strip()]
    senders = aggregation_plan.member_list(fabric, args.senders, "senders", rng, set(receivers))
    _check_size(fabric, algo, receivers, senders, args.shuffle)
    agg.resolve(fabric, receivers, senders)          # every name, before any tree is built
    if args.shuffle:
        # a bar on a terminal (stderr) once the work has taken a second; nothing in a log or a pipe
        with Progress(len(receivers), "shuffle trees", unit="tree", enabled=is_terminal(),
                      delay=SHUFFLE_PROGRESS_DELAY) as bar:
            plan = agg.shuffle_plan(fabric, receivers, senders, algo, args.delta, draw_seed, deadline=deadline,
                                    progress=bar.reached)
        args.planned = ("aggregation", fabric, plan)     # for --view (dcnlab.view.wrap_plan)
        if plot is not None:
            hops = [h.path for t in {id(t): t for t in plan.trees.values()}.values() for h in t.hops]
            hop_of = aggregation_plan.hop_path(fabric)
            hops += [hop_of(a, b) for r in plan.receivers for a, b in plan.routes[r][len(plan.trees[r].edges):]]
            _plot(plot, fabric, hops, plan.receivers, plan.senders, plan.aggregators,
                  f"{fabric.spec} shuffle {algo}: cost {plan.cost:g}, {plan.links} links")
        if args.json:
            print(json.dumps(plan.to_json()))
            return 0
        print(f"shuffle   {algo} on {fabric.spec}: {len(plan.senders)} senders -> {len(plan.receivers)} receivers, "
              f"delta {plan.delta:g}")
        for g in plan.groups:
            costs = ", ".join(f"v{m}:{c:g}" for m, c in zip(g.members, g.entry_costs))
            print(f"group     head v{g.head}, members {' '.join(f'v{m}' for m in g.members)}; "
                  f"entry v{g.entry} (formula (1): {costs})")
        for r in plan.receivers:
            print(f"tree {r}: {len(plan.routes[r])} hops via {plan.trees[r].receiver}")
            if "status" in plan.trees[r].info:
                print(f"  {aggregation_plan.solver_line(plan.trees[r].info)}")
        _totals(plan.cost, plan.links, plan.aggregators)
        return 0
    tree = agg.incast_tree(fabric, receivers[0], senders, algo, args.delta, draw_seed,
                           intra_stage=not args.no_intra_stage, deadline=deadline)
    args.planned = ("aggregation", fabric, tree)     # for --view (dcnlab.view.wrap_plan)
    if plot is not None:
        _plot(plot, fabric, [h.path for h in tree.hops], [tree.receiver], tree.senders, tree.aggregators,
              f"{fabric.spec} {algo} -> {tree.receiver}: cost {tree.cost:g}, {tree.links} links")
    if args.json:
        print(json.dumps(tree.to_json()))
        return 0
    print(f"incast    {algo} on {fabric.spec}: {len(tree.senders)} senders -> {tree.receiver}, delta {tree.delta:g}")
    for line in aggregation_plan.describe_info(tree.info):
        print(line)
    for h in tree.hops[:MAX_PRINTED_EDGES]:
        via = f"  (via {' '.join(h.path[1:-1])})" if len(h.path) > 2 else ""
        print(f"  {h.child} -> {h.parent}{via}")
    if len(tree.hops) > MAX_PRINTED_EDGES:
        print(f"  ... {len(tree.hops) - MAX_PRINTED_EDGES} more hops (use --json)")
    _totals(tree.cost, tree.links, tree.aggregators)
    print(f"receiver  input {tree.receiver_input:g} units")
    return 0


def _totals(cost: float, links: int, aggregators) -> None:
    shown = " ".join(aggregators[:40]) + (" ..." if len(aggregators) > 40 else "")
    print(f"cost      {cost:g}")
    print(f"links     {links}")
    print(f"aggregators {len(aggregators)}: {shown}")


def _plot(out: Path, fabric, hops, receivers, senders, aggregators, title: str) -> None:
    """Draw to ``out`` (checked up front by :func:`dcnlab.results.outputs.image_file`)."""
    from dcnlab.reproduce.aggregation.plots import draw_tree
    with writing(out, "--plot"):
        draw_tree(fabric, hops, list(receivers), list(senders), list(aggregators), title, out)
    print(f"wrote {out}", file=sys.stderr)


def _check_applicable(args: argparse.Namespace, algo: str) -> None:
    """Options that the request would ignore are errors (one line naming them)."""
    if args.shuffle:
        exclusive(args, "--receiver", "--shuffle", why="a shuffle has --receivers R1,R2,... or random:N")
    else:
        needs(args, "--receivers", False, "with --shuffle (an incast has one --receiver)")
    needs(args, "--no-intra-stage", not args.shuffle and algo == "irs",
          f"to an IRS incast (--algo irs); this request runs {'a shuffle' if args.shuffle else algo}")
    needs(args, "--time-limit", algo == "optimal", f"with --algo optimal; this request runs {algo}")
    random_members = any((getattr(args, o) or "").strip().startswith("random:") for o in ("senders", "receivers"))
    needs(args, "--seed", random_members or algo in ("unicast", "none"),
          "with random:COUNT members or the unicast paths (--algo unicast, shuffle --algo none)")


def _check_size(fabric, algo: str, receivers: list[str], senders: list[str], shuffle: bool) -> None:
    """Bound the work before any tree is built (named members are checked later, one by one)."""
    from dcnlab.topos.limits import TooLarge

    for what, names in (("--senders", senders), ("--receivers", receivers)):
        if len(names) > aggregation_plan.MAX_MEMBERS:
            raise TooLarge(f"{what}: {len(names):,} members; plan aggregation handles at most {aggregation_plan.MAX_MEMBERS:,}")
    if shuffle and len(senders) * len(receivers) > MAX_SHUFFLE_PAIRS:
        raise TooLarge(f"a shuffle of {len(senders):,} senders x {len(receivers):,} receivers = "
                       f"{len(senders) * len(receivers):,} pairs; plan aggregation handles at most "
                       f"{MAX_SHUFFLE_PAIRS:,} (reproduce aggregation runs paper-scale shuffles on the engine)")
    if algo == "kmb" and fabric.kind == "fattree":
        work = (len(senders) + 1) * (sum(fabric.counts().values()) + fabric.num_links())
        if work > MAX_KMB_WORK:
            raise TooLarge(f"kmb on {fabric.spec}: {len(senders) + 1:,} terminals x "
                           f"{sum(fabric.counts().values()) + fabric.num_links():,} nodes and links = {work:,}; "
                           f"plan aggregation handles at most {MAX_KMB_WORK:,} (one shortest-path search per "
                           f"terminal over the whole fabric)")


def add_plan_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("aggregation", help="incast/shuffle aggregation trees (IRS, M2, SRS, unicast, KMB, optimum)",
                       description="Compute an in-network aggregation tree (or a shuffle subgraph) on a fabric.")
    p.add_argument("--topo", required=True, help="fabric spec: bcube:n=4,k=1 (servers aggregate) or fattree:k=4 "
                                                  "(switches aggregate)")
    p.add_argument("--receiver", help="receiver of an incast (v<i> on BCube, h<pod>_<edge>_<x> on a fat-tree)")
    p.add_argument("--senders", required=True, help="S1,S2,... or random:M")
    p.add_argument("--shuffle", action="store_true", help="a shuffle: every sender to every receiver")
    p.add_argument("--receivers", help="with --shuffle: R1,R2,... or random:N")
    algorithm_option(p, "aggregation", extra=("srs", "incast", "none"),
                     help="incast: irs mib mc m2 unicast kmb optimal (BCube; default irs), updown unicast kmb "
                          "optimal (fat-tree; default updown), an installed plug-in, package.module:name, "
                          "file.py:name; shuffle: srs (default), incast, none, or any incast algorithm; list")
    # the range 0..1 is checked by controller.aggregation.cost.check_delta (one line, "valid: 0 <= delta <= 1")
    p.add_argument("--delta", type=number(float), default=0.0, help="aggregation ratio in [0, 1] (default 0)")
    p.add_argument("--seed", type=seed(), help="random members and the unicast path draw (default 0)")
    p.add_argument("--no-intra-stage", action="store_true", help="IRS without the intra-stage step (003 Fig. 2(b))")
    p.add_argument("--time-limit", type=ranged(float, 0.1, 86_400, "s"),
                   help=f"with --algo optimal: seconds for the whole plan, from when the command starts its work "
                        f"(after Python's start-up, about a second) to the printed tree: drawing the members, "
                        f"building the model, solving, measuring the tree. The best tree found is printed with its "
                        f"optimality gap; if the solver has none by then, the cheapest heuristic tree (named in "
                        f"the output). A shuffle's trees share it. (default {DEFAULT_TIME_LIMIT:g})")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="draw the tree on the fabric")
    p.set_defaults(func=cmd_plan)


BMV2_OPTIONS = ("--topo",)
"""Options of the BMv2 experiment only: an error when it does not run."""


def cmd_reproduce(args: argparse.Namespace) -> int:
    """The model parts (:mod:`dcnlab.reproduce.aggregation.model`), then the BMv2 experiment
    (:mod:`dcnlab.reproduce.aggregation.bmv2`) as ``--emulate`` says (:mod:`dcnlab.cli.emulate`), as every
    reproduction runs (:func:`dcnlab.cli.reproduce.run_alone`)."""
    from dcnlab.cli.reproduce import run_alone
    from dcnlab.emu import preflight
    from dcnlab.reproduce.aggregation import model
    from dcnlab.reproduce.aggregation.reproduction import REPRODUCTION

    planned = emulate.bmv2_plan(args, "aggregation", lambda: model.dataplane_missing(preflight.EMULATION_TOOLS))
    emulate.only_with_bmv2(args, BMV2_OPTIONS, planned[0], planned[1])
    exclusive(args, "--workers", "--cluster", why="the cluster's workers run the rounds")
    return run_alone(REPRODUCTION.configure(args), args, args.out, planned)      # --algo: one line, before --out


def add_reproduce_parser(sub: argparse._SubParsersAction) -> None:
    from dcnlab.reproduce.aggregation.model import PARTS
    specs = ("bcube:n=4,k=1", "bcube:n=3,k=2", "fattree:k=4")     # dcnlab.reproduce.aggregation.bmv2.SPECS
    p = sub.add_parser("aggregation", help="reproduce 003 (SRS shuffles) and 000 (M2 incasts) at paper scale",
                       description="The model parts: paper-scale rounds in a process pool, our numbers beside the "
                                   "papers', PNG plots and JSON. Then, as --emulate says, the BMv2 experiment: "
                                   "word-count jobs (exact results, switch-counted link bytes against the model) and "
                                   "000's waiting time; summary.json has both.")
    emulate.emulate_option(p, "word-count incasts and shuffles on BCube(4,1), BCube(3,2) and fat-tree k=4, and 000's "
                              "waiting time on BCube(4,2)", was="it used to run BMv2 instead of the model")
    p.add_argument("--quick", action="store_true", help="few rounds and sizes (about a minute); BMv2 part: "
                                                        "BCube(4,1) only, fewer keys")
    p.add_argument("--out", default="results/aggregation", help="output directory (default results/aggregation)")
    p.add_argument("--rounds", type=ranged(int, 1, 10_000), help="model: rounds per point (default: 100 for the k "
                                              "sweeps, 20 for 003-size and 003-delta, 10 for 000-size and gap; "
                                              "--quick: 1 to 5)")
    p.add_argument("--workers", type=workers(), help="model processes (default: all cores)")
    add_cluster_option(p)
    p.add_argument("--only", nargs="+", choices=PARTS, help="run only these model parts")
    p.add_argument("--seed", type=seed(), default=1, help="base seed (rounds use seed, round, point; default 1)")
    p.add_argument("--topo", action="append", choices=specs, metavar="SPEC",
                   help=f"BMv2 part: fabric to emulate, repeatable (default: all of {', '.join(specs)}; the waiting "
                        f"time runs only without it)")
    p.add_argument("--json", action="store_true", help="print one JSON object (results, with the table's lines)")
    algorithm_option(p, "aggregation", append=True, metavar="ALGO",
                     help="also run this tree builder beside the papers' (repeatable): in the model's incast parts "
                          "(000-k, 000-size, gap) and shuffle parts (003-k, 003-size: one tree per receiver, as plan "
                          "--shuffle --algo; not 003-delta): its rows in the table, its series in the plots, its "
                          "figures and origin in summary.json; and in every job of the BMv2 part; an installed "
                          "plug-in, package.module:name, file.py:name, or list")
    p.set_defaults(func=cmd_reproduce)


BENCH_DEFAULTS = {"rounds": 100, "dp_frames": 6000, "dp_rate": 1500.0, "dp_rounds": 3}


def cmd_bench(args: argparse.Namespace) -> int:
    from dcnlab.reproduce.aggregation import bench as aggregation_bench

    for option in ("--rounds", "--workers", "--cluster"):
        needs(args, option, not args.no_model, "to the model timings (not with --no-model)")
    exclusive(args, "--workers", "--cluster", why="the cluster's workers run the rounds")
    for option in ("--dp-frames", "--dp-rate", "--dp-rounds"):
        needs(args, option, not args.no_dataplane, "to the BMv2 benchmark (not with --no-dataplane)")
    for key, value in BENCH_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return aggregation_bench.bench(args)


def add_bench_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("aggregation", help="model timings (the BCube(8,5) 1500x1500 point) and one BMv2 node's "
                                           "aggregated chunks/s against forwarded packets/s",
                       description="Model timings: trees at paper scale and the BCube(8,5) m = n = 1500 point "
                                   "(goal: 100 rounds in 60 s). Then, with root, simple_switch_grpc and p4c, one "
                                   "BMv2 node: aggregated chunks per CPU second against forwarded frames (goal: at "
                                   "least half).")
    p.add_argument("--rounds", type=ranged(int, 1, 10_000),
                   help=f"rounds of the 1500x1500 point (default {BENCH_DEFAULTS['rounds']})")
    p.add_argument("--workers", type=workers(), help="processes (default: all cores)")
    add_cluster_option(p, "1500x1500 point's rounds")
    p.add_argument("--no-model", action="store_true", help="skip the model timings")
    p.add_argument("--no-dataplane", action="store_true", help="skip the BMv2 benchmark")
    p.add_argument("--dp-frames", type=ranged(int, 1, 10_000_000),
                   help=f"BMv2: frames per phase (default {BENCH_DEFAULTS['dp_frames']})")
    p.add_argument("--dp-rate", type=ranged(float, 1, 1_000_000, "frames/s"),
                   help=f"BMv2: offered frames per second (default {BENCH_DEFAULTS['dp_rate']:g})")
    p.add_argument("--dp-rounds", type=ranged(int, 1, 100),
                   help=f"BMv2: rounds, medians reported (default {BENCH_DEFAULTS['dp_rounds']})")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_bench)
