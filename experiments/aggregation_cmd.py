"""CLI of the aggregation mechanism: ``dcnlab plan aggregation``, ``dcnlab reproduce aggregation``,
``dcnlab bench aggregation`` (issue 8 §2, §4, §7).

Members are BCube servers (``v<i>``) or fat-tree hosts (``h<pod>_<edge>_<x>``). ``random:M`` picks M
distinct members with ``--seed``; receivers are drawn first and senders from the rest, so the two
sets never overlap. Heavy imports stay inside the handlers so that ``dcnlab`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from experiments.errors import UserError

MAX_PRINTED_EDGES = 60


def _member_list(fabric, text: str, what: str, rng, exclude: set[str]) -> list[str]:
    from controller.aggregation import member_role
    from topos.model import Role

    text = text.strip()
    if not text.startswith("random:"):
        names = [x.strip() for x in text.split(",") if x.strip()]
        if not names:
            raise UserError(f"--{what}: give names separated by commas, or random:COUNT")
        return names
    try:
        count = int(text.split(":", 1)[1])
    except ValueError:
        raise UserError(f"--{what} {text!r}: random:COUNT needs an integer count") from None
    role = member_role(fabric)
    total = fabric.counts()[role]
    free = total - len(exclude)
    if not 1 <= count <= free:
        raise UserError(f"--{what} random:{count}: valid: 1 <= COUNT <= {free} "
                        f"({total} {role.value}s, {len(exclude)} taken)")
    picked: list[str] = []
    name = fabric.host_name if role is Role.HOST else (lambda i: f"v{i}")
    while len(picked) < count:
        need = count - len(picked)
        for i in rng.choice(total, size=min(total, 2 * need + 8), replace=False).tolist():
            v = name(int(i))
            if v not in exclude and v not in picked:
                picked.append(v)
                if len(picked) == count:
                    break
    return picked


def cmd_plan(args: argparse.Namespace) -> int:
    import numpy as np

    from controller import aggregation as agg
    from topos.spec import parse_spec

    fabric = parse_spec(args.topo)
    agg.algorithms_for(fabric)
    rng = np.random.default_rng(args.seed)
    if args.shuffle:
        if not args.receivers:
            raise UserError("--shuffle needs --receivers R1,R2,... or --receivers random:N")
        receivers = _member_list(fabric, args.receivers, "receivers", rng, set())
    else:
        if not args.receiver:
            raise UserError("--receiver R is required (or --shuffle --receivers ...)")
        receivers = [args.receiver.strip()]
    senders = _member_list(fabric, args.senders, "senders", rng, set(receivers))
    algo = args.algo or ("updown" if fabric.kind == "fattree" else ("srs" if args.shuffle else "irs"))
    if args.shuffle:
        plan = agg.shuffle_plan(fabric, receivers, senders, algo, args.delta, args.seed, args.time_limit)
        if args.plot:
            hops = [h.path for t in {id(t): t for t in plan.trees.values()}.values() for h in t.hops]
            hop_of = _hop_path(fabric)
            hops += [hop_of(a, b) for r in plan.receivers for a, b in plan.routes[r][len(plan.trees[r].edges):]]
            _plot(args.plot, fabric, hops, plan.receivers, plan.senders, plan.aggregators,
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
        _totals(plan.cost, plan.links, plan.aggregators)
        return 0
    tree = agg.incast_tree(fabric, receivers[0], senders, algo, args.delta, args.seed,
                           intra_stage=not args.no_intra_stage, time_limit=args.time_limit)
    if args.plot:
        _plot(args.plot, fabric, [h.path for h in tree.hops], [tree.receiver], tree.senders, tree.aggregators,
              f"{fabric.spec} {algo} -> {tree.receiver}: cost {tree.cost:g}, {tree.links} links")
    if args.json:
        print(json.dumps(tree.to_json()))
        return 0
    print(f"incast    {algo} on {fabric.spec}: {len(tree.senders)} senders -> {tree.receiver}, delta {tree.delta:g}")
    for key, value in tree.info.items():
        print(f"{key:<9} {value}")
    for h in tree.hops[:MAX_PRINTED_EDGES]:
        via = f"  (via {' '.join(h.path[1:-1])})" if len(h.path) > 2 else ""
        print(f"  {h.child} -> {h.parent}{via}")
    if len(tree.hops) > MAX_PRINTED_EDGES:
        print(f"  ... {len(tree.hops) - MAX_PRINTED_EDGES} more hops (use --json)")
    _totals(tree.cost, tree.links, tree.aggregators)
    print(f"receiver  input {tree.receiver_input:g} units")
    return 0


def _hop_path(fabric):
    from controller.aggregation import _bcube_hop
    from topos.bcube import BCube
    return _bcube_hop(fabric) if isinstance(fabric, BCube) else (lambda a, b: (a, b))


def _totals(cost: float, links: int, aggregators) -> None:
    shown = " ".join(aggregators[:40]) + (" ..." if len(aggregators) > 40 else "")
    print(f"cost      {cost:g}")
    print(f"links     {links}")
    print(f"aggregators {len(aggregators)}: {shown}")


def _plot(path: str, fabric, hops, receivers, senders, aggregators, title: str) -> None:
    from experiments.aggregation_plot import draw_tree
    out = Path(path)
    if out.suffix.lower() != ".png":
        raise UserError(f"--plot {path}: the file name must end in .png")
    draw_tree(fabric, hops, list(receivers), list(senders), list(aggregators), title, out)
    print(f"wrote {out}", file=sys.stderr)


def add_plan_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("aggregation", help="incast/shuffle aggregation trees (IRS, M2, SRS, unicast, KMB, optimum)",
                       description="Compute an in-network aggregation tree (or a shuffle subgraph) on a fabric.")
    p.add_argument("--topo", required=True, help="fabric spec: bcube:n=4,k=1 (servers aggregate) or fattree:k=4 "
                                                  "(switches aggregate)")
    p.add_argument("--receiver", help="receiver of an incast (v<i> on BCube, h<pod>_<edge>_<x> on a fat-tree)")
    p.add_argument("--senders", required=True, help="S1,S2,... or random:M")
    p.add_argument("--shuffle", action="store_true", help="a shuffle: every sender to every receiver")
    p.add_argument("--receivers", help="with --shuffle: R1,R2,... or random:N")
    p.add_argument("--algo", help="incast: irs mib mc m2 unicast kmb optimal (BCube; default irs), updown unicast "
                                  "kmb optimal (fat-tree; default updown); shuffle: srs (default), incast, none, or "
                                  "any incast algorithm")
    p.add_argument("--delta", type=float, default=0.0, help="aggregation ratio in [0, 1] (default 0)")
    p.add_argument("--seed", type=int, default=0, help="random members and the unicast path draw (default 0)")
    p.add_argument("--no-intra-stage", action="store_true", help="IRS without the intra-stage step (003 Fig. 2(b))")
    p.add_argument("--time-limit", type=float, default=300.0, help="seconds for --algo optimal (default 300)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="draw the tree on the fabric")
    p.set_defaults(func=cmd_plan)


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Model backend by default; ``--emulate`` runs the BMv2 experiment (:mod:`experiments.aggregation_bcube`)."""
    if args.emulate:
        from experiments.aggregation_model import dataplane_missing
        why = dataplane_missing(("simple_switch_grpc", "simple_switch_CLI", "p4c"))
        if why:
            raise UserError(f"--emulate needs root and the P4 toolchain: {'; '.join(why)}")
        from experiments import aggregation_bcube
        return aggregation_bcube.run(args)
    if args.topo:
        raise UserError("--topo: only with --emulate (the model backend runs the papers' BCubes)")
    from experiments import aggregation_model
    return aggregation_model.reproduce(args)


def add_reproduce_parser(sub: argparse._SubParsersAction) -> None:
    from experiments.aggregation_model import PARTS
    specs = ("bcube:n=4,k=1", "bcube:n=3,k=2", "fattree:k=4")     # experiments.aggregation_bcube.SPECS
    p = sub.add_parser("aggregation", help="reproduce 003 (SRS shuffles) and 000 (M2 incasts) at paper scale",
                       description="Model backend: paper-scale rounds in a process pool; prints our numbers beside "
                                   "the papers' and writes PNG plots and JSON. --emulate: word-count jobs on BMv2 "
                                   "(exact results, switch-counted link bytes against the model).")
    p.add_argument("--quick", action="store_true", help="few rounds and sizes (about a minute); with --emulate: "
                                                        "BCube(4,1) only, fewer keys")
    p.add_argument("--out", default="results/aggregation",
                   help="output directory (default results/aggregation; results/aggregation-emu with --emulate)")
    p.add_argument("--rounds", type=int, help="rounds per point (default: 100 for the k sweeps, 20 for 003-size and "
                                              "003-delta, 10 for 000-size and gap; --quick: 1 to 5)")
    p.add_argument("--workers", type=int, help="processes (default: all cores)")
    p.add_argument("--only", nargs="+", choices=PARTS, help="run only these parts")
    p.add_argument("--seed", type=int, default=1, help="base seed (rounds use seed, round, point; default 1)")
    p.add_argument("--emulate", action="store_true", help="run the BMv2 experiment instead of the model "
                                                          "(root, simple_switch_grpc and p4c)")
    p.add_argument("--topo", action="append", choices=specs, metavar="SPEC",
                   help=f"with --emulate: fabric to emulate, repeatable (default: all of {', '.join(specs)})")
    p.add_argument("--json", action="store_true", help="print one JSON object (results, with the table's lines)")
    p.set_defaults(func=cmd_reproduce)


def cmd_bench(args: argparse.Namespace) -> int:
    from experiments import aggregation_model
    return aggregation_model.bench(args)


def add_bench_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("aggregation", help="model timings (the BCube(8,5) 1500x1500 point) and one BMv2 node's "
                                           "aggregated chunks/s against forwarded packets/s",
                       description="Model timings: trees at paper scale and the BCube(8,5) m = n = 1500 point "
                                   "(goal: 100 rounds in 60 s). Then, with root, simple_switch_grpc and p4c, one "
                                   "BMv2 node: aggregated chunks per CPU second against forwarded frames (goal: at "
                                   "least half).")
    p.add_argument("--rounds", type=int, default=100, help="rounds of the 1500x1500 point (default 100)")
    p.add_argument("--workers", type=int, help="processes (default: all cores)")
    p.add_argument("--no-model", action="store_true", help="skip the model timings")
    p.add_argument("--no-dataplane", action="store_true", help="skip the BMv2 benchmark")
    p.add_argument("--dp-frames", type=int, default=6000, help="BMv2: frames per phase (default 6000)")
    p.add_argument("--dp-rate", type=float, default=1500.0, help="BMv2: offered frames per second (default 1500)")
    p.add_argument("--dp-rounds", type=int, default=3, help="BMv2: rounds, medians reported (default 3)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_bench)
