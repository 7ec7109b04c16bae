"""``dcnlab bench topo|emu``."""

from __future__ import annotations

import argparse
import json
import sys

from dcnlab.experiments import bench_chaos, bench_emu

GOAL_SECONDS, GOAL_MIB = 10.0, 3 * 1024


def cmd_bench_topo(args: argparse.Namespace) -> int:
    from dcnlab.experiments import bench_topo
    results = bench_topo.run(progress=lambda n: print(f"  running {n} ...", file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps([r.__dict__ for r in results], indent=1))
        return 0
    print(f"{'case':<40} {'seconds':>8} {'peak MiB':>9}  goal  detail")
    for r in results:
        ok = "ok" if r.seconds <= GOAL_SECONDS and r.peak_mib <= GOAL_MIB else "MISS"
        print(f"{r.case:<40} {r.seconds:8.2f} {r.peak_mib:9.0f}  {ok:<4}  {r.detail}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="benchmarks (not tests): fabric build, routing, emulation")
    bsub = p.add_subparsers(dest="bench_cmd", required=True)
    t = bsub.add_parser("topo", help=f"build time and peak memory (goal <= {GOAL_SECONDS:.0f} s, <= 3 GiB)")
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.set_defaults(func=cmd_bench_topo)
    bench_emu.add_parser(bsub)
    bench_chaos.add_parser(bsub)
    from dcnlab.experiments import bench_rounds
    bench_rounds.add_parser(bsub)
    from dcnlab.experiments.plan_cmd import add_bench_parsers
    add_bench_parsers(bsub)
