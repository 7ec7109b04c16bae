"""``dcnlab bench topo|emu|chaos|rounds|reproduce`` and every mechanism's ``bench`` (:mod:`dcnlab.cli.plan`): their
parsers and ``bench topo``'s printing. The benchmarks themselves are :mod:`dcnlab.bench`'s."""

from __future__ import annotations

import argparse
import json
import sys

from dcnlab.bench import chaos as bench_chaos
from dcnlab.bench import emu as bench_emu
from dcnlab.bench import reproduce as bench_reproduce
from dcnlab.bench import rounds as bench_rounds
from dcnlab.bench import topo as bench_topo
from dcnlab.cli.argtypes import ranged, workers
from dcnlab.sweep.pool import add_cluster_option


def cmd_bench_topo(args: argparse.Namespace) -> int:
    results = bench_topo.run(progress=lambda n: print(f"  running {n} ...", file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps([r.__dict__ | {"goal_seconds": bench_topo.GOAL_SECONDS, "goal_peak_mib": bench_topo.GOAL_MIB, "ok": bench_topo.topo_ok(r)}
                          for r in results], indent=1))
        return 0
    print("\n".join(bench_topo.topo_lines(results)))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="benchmarks (not tests): fabric build, routing, emulation")
    bsub = p.add_subparsers(dest="bench_cmd", required=True)
    t = bsub.add_parser("topo", help=f"build time and peak memory (goal {bench_topo.TOPO_GOAL})")
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.set_defaults(func=cmd_bench_topo)
    add_emu_parser(bsub)
    add_chaos_parser(bsub)
    add_rounds_parser(bsub)
    add_reproduce_parser(bsub)
    from dcnlab.cli.plan import add_bench_parsers
    add_bench_parsers(bsub)


def add_chaos_parser(bsub: argparse._SubParsersAction) -> None:
    from dcnlab.cli.argtypes import emulation_limit, fabric_spec, ranged, seed
    c = bsub.add_parser("chaos", help="kill -9 dcnlab runs at random moments, clean, check for leftovers (root, BMv2)")
    c.add_argument("--cycles", type=ranged(int, 1, 100_000), default=10)
    c.add_argument("--spec", default="fattree:k=4", type=fabric_spec(emulation_limit),
                   help="fabric each cycle runs (default fattree:k=4)")
    c.add_argument("--hold", type=ranged(float, 0, 3600, "s"), default=1.0, help="seconds each run stays up")
    c.add_argument("--max-delay", type=ranged(float, 0, 3600, "s"), default=5.0,
                   help="kill moments are uniform in 0..max-delay seconds after the start")
    c.add_argument("--seed", type=seed(), default=1, help="seed of the kill moments (default 1)")
    c.set_defaults(func=bench_chaos.cmd_bench_chaos)


def add_emu_parser(bsub: argparse._SubParsersAction) -> None:
    e = bsub.add_parser("emu", help="bring-up/teardown time, P4Runtime write rate, RSS per switch (BMv2, root)")
    from dcnlab.cli.argtypes import emulation_limit, fabric_spec, ranged
    e.add_argument("specs", nargs="*", type=fabric_spec(lambda: emulation_limit(bench_emu.BENCH_MAX_SWITCHES)),
                   default=None, help=f"fabrics to bring up (default: {' '.join(bench_emu.DEFAULT_SPECS)}; none with --lab)")
    e.add_argument("--lab", action="append", default=[], metavar="DIR",
                   help="also time `dcnlab lab DIR` (an exercise directory; repeatable); with --lab and no "
                        "fabric specs only the labs are measured and the write rates are skipped")
    e.add_argument("--program", type=bench_emu.p4_source, metavar="FILE.p4",
                   help="also bring each fabric up with your own program, beside dcnlab's")
    e.add_argument("--repeat", type=ranged(int, 1, 100), default=1)
    e.add_argument("--entries", type=ranged(int, 100, 1_000_000), default=20000,
                   help="table entries for the write-rate measurement")
    e.add_argument("--check", choices=bench_emu.CHECKS, default="both",
                   help="which check to time on each fabric: all-pairs, rules (read-back and the fewest "
                        "probes that exercise every entry, after ATPG) or both (default)")
    e.add_argument("--no-writes", action="store_true", help="skip the P4Runtime write-rate measurement")
    e.set_defaults(func=bench_emu.cmd_bench_emu)


def add_rounds_parser(bsub: argparse._SubParsersAction) -> None:
    p = bsub.add_parser("rounds", help="model rounds per second: the local process pool beside a Dask cluster",
                        description="Runs the same aggregation rounds on the local process pool and on a Dask cluster "
                                    "(--cluster, or a LocalCluster started here on 127.0.0.1) and prints rounds per "
                                    "second side by side, with each side's warm-up, and whether the results match "
                                    "round for round.")
    p.add_argument("--rounds", type=ranged(int, 1, 10_000), default=bench_rounds.DEFAULT_ROUNDS,
                   help=f"rounds on each side (default {bench_rounds.DEFAULT_ROUNDS})")
    p.add_argument("--size", type=ranged(int, 50, 1500, "senders = receivers"), default=bench_rounds.DEFAULT_SIZE,
                   help=f"m = n of the shuffles (default {bench_rounds.DEFAULT_SIZE}: about 0.3 s of one core per round)")
    p.add_argument("--workers", type=workers(),
                   help="local processes, and the LocalCluster's workers without --cluster (default: all cores)")
    add_cluster_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=bench_rounds.cmd_bench_rounds)


def add_reproduce_parser(bsub: argparse._SubParsersAction) -> None:
    goals, cores = bench_reproduce.GOALS, bench_reproduce.IDLE_CORES
    p = bsub.add_parser("reproduce", help=f"CPU and wall seconds of reproduce all's model parts, per part and task "
                                          f"kind (goal: --quick <= {goals['quick']:.0f} s, full <= "
                                          f"{goals['full']:.0f} s on {cores} idle cores)",
                        description="Runs every reproduction's model tasks of reproduce all --quick (--full: the "
                                    "full run) on a process pool, the task cache off, and prints the CPU seconds "
                                    "per part and task kind, when each part was done, and the wall time on "
                                    f"{cores} idle cores estimated from the tasks' CPU seconds, with the goal.")
    p.add_argument("--full", action="store_true", help=f"the full model run (goal <= {goals['full']:.0f} s)")
    p.add_argument("--workers", type=workers(), help="processes (default: every core)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=bench_reproduce.cmd_bench_reproduce)
