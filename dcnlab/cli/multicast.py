"""CLI of the multicast mechanism (paper 001, C-MR4LMS): ``dcnlab plan multicast``, ``dcnlab reproduce multicast``,
``dcnlab bench multicast``.

``plan`` computes the trees of a workload with one algorithm and prints them with the metrics; with
``--json`` it prints exactly one object::

    {"groups": [{"mgid", "color", "root", "links": [[parent, child], ...], "members": [...], "merged_with": [...]}
                ...],
     "efi_max", "efi_avg", "tfi_max", "tfi_avg", "groups_after_merge", "seconds", ...}

``links`` are the directed links (parent towards the root first) of the tree that carries the group — the
shared tree when the group was merged.  Extra keys: ``topo``, ``algo``, ``colors``, ``workload``,
``refused`` (groups that could not be placed, with the reason), ``metrics`` (all of
:class:`dcnlab.controller.multicast.metrics.Metrics`) and, with ``--dual``, a ``backup`` tree per group.
Heavy imports stay inside the handlers so that ``dcnlab`` starts fast.
"""

from __future__ import annotations

import argparse
import json

from dcnlab.cli import emulate
from dcnlab.cli.argtypes import (
    algorithm_option,
    emulation_limit,
    exclusive,
    fabric_spec,
    needs,
    ranged,
    workers,
)
from dcnlab.reproduce.multicast import plan as multicast_plan
from dcnlab.sweep.pool import add_cluster_option
from dcnlab.topos.limits import SizeLimit

ALGOS = ("cmr4lms-fixed", "cmr4lms-dynamic", "opensm", "global", "mr4lms")
"""The built-ins the help names (all of :mod:`dcnlab.controller.multicast.registry` are accepted)."""
DEFAULT_SHOW = 20
PLAN_LIMIT = SizeLimit("plan multicast handles", elements=80_000_000)
"""The metrics keep per-link arrays: fattree:k=406 (67 million nodes and links) is in, a midplane with
m = w = 10^5 (3·10^13 links) is refused before anything is allocated."""


def cmd_plan(args: argparse.Namespace) -> int:
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.planning import mapping_for, plan
    from dcnlab.controller.multicast.workload import (
        build_pattern,
        parse_pattern,
        read_groups_file,
        resolve_groups,
    )
    from dcnlab.topos.spec import parse_spec

    needs(args, "--summary", args.json, "with --json (text output never lists links or members)")
    exclusive(args, "--show", "--json", why="--json lists every group")
    needs(args, "--scope", args.algo == "cmr4lms-dynamic", f"to --algo cmr4lms-dynamic, not {args.algo}")
    show = DEFAULT_SHOW if args.show is None else args.show
    # the inputs first, as far as they can be checked without the fabric: a bad file fails at once
    groups = read_groups_file(args.groups) if args.groups else None
    pattern = parse_pattern(args.pattern) if groups is None else None
    h = hierarchy_for(parse_spec(args.topo, PLAN_LIMIT))
    if groups is not None:
        workload = resolve_groups(h, groups)
    else:
        assert pattern is not None
        workload = build_pattern(h, pattern, mapping_for(h, args.colors, args.dual))
    result = plan(h, workload, args.algo, args.colors, dual=args.dual, scope=args.scope)
    args.planned = ("multicast", h, result)     # for --view (dcnlab.view.wrap_plan)
    if args.json:
        print(json.dumps(multicast_plan.plan_json(h, result, args.summary)))
        return 0
    m = result.metrics
    print(f"multicast {args.algo}{' (dual trees)' if args.dual else ''} on {h.fabric.spec}, C={args.colors}, "
          f"workload {workload.name}: {len(workload.groups)} groups")
    for lay in workload.layers:
        print(f"layer     {lay.label:<8} {lay.method:<8} {lay.groups:>6} groups  colors {lay.colors[0]}..{lay.colors[1] - 1}")
    print(f"placed    {m.groups} groups on {m.trees} trees; refused {m.refused}")
    print(f"EFI       max {m.efi_max}, avg {m.efi_avg:.2f} over used switch links "
          f"({m.efi_avg_all:.3f} over all); terminal max {m.terminal_efi_max}")
    print(f"TFI       max {m.tfi_max}, avg {m.tfi_avg:.2f}")
    print(f"entries   per port max {m.entries_per_port_max}, avg {m.entries_per_port_avg:.2f}")
    print(f"time      {m.seconds:.3f} s")
    for g in result.groups[:show]:
        tree = result.tree(g.tree)
        mates = result.mates(g)
        extra = f"  merged with {', '.join(map(str, mates[:8]))}{' ...' if len(mates) > 8 else ''}" if mates else ""
        back = ""
        if g.backup is not None:
            b = result.tree(g.backup, 1)
            back = f"  backup root {b.root(h)} ({len(b.links)} links)"
        print(f"group {g.mgid:>6}  color {tree.color:>3}  root {tree.root(h):<10} {len(tree.links):>6} links "
              f"{len(g.members):>5} members{extra}{back}")
    if len(result.groups) > show:
        print(f"... {len(result.groups) - show} more groups (--show N, or --json)")
    for mgid, reason in result.refused[:show]:
        print(f"refused {mgid}: {reason}")
    return 0


def add_plan_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("multicast", help="multicast trees with a limited table: C-MR4LMS and baselines (paper 001)",
                       description="Route multicast groups on a fat-tree with C colors (table entries per port).")
    p.add_argument("--topo", default="midplane:", metavar="SPEC",
                   help="midplane:... or fattree:k=... (default midplane:, the paper's 40,448-node instance)")
    p.add_argument("--colors", type=ranged(int, 1, 4096), default=32, metavar="C",
                   help="table entries (colors) per port, 1..4096 (default 32)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--groups", metavar="FILE", help='JSON [{"mgid": int, "members": [terminal names]}, ...]: '
                                                      'distinct MGIDs 0..65535, each member once, at most '
                                                      '1,048,576 members over all groups')
    src.add_argument("--pattern", help="AxB[:ppn=P], AxBxC[:ppn=P] or random:G[:seed=S][:ppn=P]")
    algorithm_option(p, "multicast", default="cmr4lms-fixed",
                     help=f"{', '.join(ALGOS)} (default cmr4lms-fixed), an installed plug-in, package.module:name, "
                          "file.py:name, or list")
    p.add_argument("--dual", action="store_true", help="fault-tolerant dual trees (C-MR4LMS only)")
    p.add_argument("--scope", choices=("tn", "group"),
                   help="dynamic variant's root candidates: top switches of the TN (paper; default on midplane) or "
                        "of every TN of its group (default on fattree)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--summary", action="store_true", help="with --json: leave out links and members")
    p.add_argument("--show", type=ranged(int, 0, 10**9), help=f"groups printed in text mode (default {DEFAULT_SHOW})")
    p.set_defaults(func=cmd_plan)


BMV2_OPTIONS = ("--topo", "--colors", "--feed", "--cut")
"""Options of the BMv2 experiment only: an error when it does not run."""


def cmd_reproduce(args: argparse.Namespace) -> int:
    """The model sweep, then the BMv2 experiment as ``--emulate`` says (:mod:`dcnlab.cli.emulate`), as every
    reproduction runs (:func:`dcnlab.cli.reproduce.run_alone`)."""
    from dcnlab.cli.reproduce import run_alone
    from dcnlab.reproduce.multicast.reproduction import REPRODUCTION

    planned = emulate.bmv2_plan(args, "multicast")    # before any work and before --out is touched
    emulate.only_with_bmv2(args, BMV2_OPTIONS, planned[0], planned[1])
    exclusive(args, "--workers", "--cluster", why="the cluster's workers run the model")
    return run_alone(REPRODUCTION.configure(args), args, args.out, planned)


def add_reproduce_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("multicast", help="reproduce C-MR4LMS (001) at paper scale: EFI, TFI, groups kept, time",
                       description="The model parts on the paper's 40,448-node fat-tree with C=32 (our numbers beside "
                                   "the paper's statements, PNG plots and JSON), then, as --emulate says, the BMv2 "
                                   "experiment on a small midplane; summary.json has both.")
    emulate.emulate_option(p, "a small midplane with jobs joining and leaving: exactly-once delivery, copies per "
                              "link against the model, a link cut with dual trees (about 2 minutes with --quick)",
                           was="it used to run BMv2 instead of the model")
    p.add_argument("--quick", action="store_true", help="fewer patterns, no MR4LMS on the big ones (under a minute); "
                                                        "a shorter BMv2 experiment")
    p.add_argument("--out", default="results/multicast", help="output directory (default results/multicast)")
    p.add_argument("--workers", type=workers(), help="model processes (default: all cores)")
    add_cluster_option(p, "model runs")
    algorithm_option(p, "multicast", append=True, metavar="ALGO",
                     help="also run this algorithm beside the paper's (repeatable): an installed plug-in, "
                          "package.module:name, file.py:name, or list; its rows join the table, the plots and "
                          "multicast.json; in the BMv2 part it runs the steady window on its own trees before "
                          "C-MR4LMS (failover stays C-MR4LMS's)")
    p.add_argument("--topo", metavar="SPEC", type=fabric_spec(emulation_limit),
                   help="BMv2 part: the midplane instance (default "
                        "midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=2, 32 switches)")
    p.add_argument("--colors", type=ranged(int, 1, 64), metavar="C",
                   help="BMv2 part: table entries per port, 1..64 (default 3, which forces merges)")
    p.add_argument("--feed", choices=("both", "primary"),
                   help="BMv2 part: edge switches feed both trees (default, the paper's) or the first only")
    p.add_argument("--cut", choices=("drop", "down"),
                   help="BMv2 part: cut the link by dropping every frame on both ends (default) or by setting "
                        "both ends down (freezes BMv2's end switches; see reproduce/multicast/bmv2/setup.py)")
    p.set_defaults(func=cmd_reproduce)


def cmd_bench(args: argparse.Namespace) -> int:
    from dcnlab.reproduce.multicast import bench as multicast_bench
    return multicast_bench.bench(args)


def add_bench_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("multicast", help="C-MR4LMS route computation per paper pattern (goal <= 5 s) and "
                                         "the speed-up over MR4LMS-like on 100x50x26 (goal >= 10x)")
    p.add_argument("--quick", action="store_true", help="skip the MR4LMS-like run (about 3 minutes)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_bench)
