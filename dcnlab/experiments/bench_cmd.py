"""``dcnlab bench topo|emu``, and :func:`verdict`: how every benchmark line that judges says against what."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from dcnlab.experiments import bench_chaos, bench_emu

GOAL_SECONDS, GOAL_MIB = 10.0, 3 * 1024
TOPO_GOAL = f"<= {GOAL_SECONDS:g} s, <= {GOAL_MIB // 1024} GiB"
"""``bench topo``'s goal for every case: build time and peak memory."""


def verdict(ok: bool, goal: str) -> str:
    """``ok (goal <= 10 s)`` or ``MISS (goal <= 10 s)``: a benchmark line that judges names what it judged
    against (``goal``: e.g. ``<= 10 s, <= 3 GiB``), so that a ``MISS`` needs no ``--help`` to be read."""
    return f"{'ok' if ok else 'MISS'} (goal {goal})"


def topo_ok(r: Any) -> bool:
    return bool(r.seconds <= GOAL_SECONDS and r.peak_mib <= GOAL_MIB)


def topo_lines(results: Sequence[Any]) -> list[str]:
    """``bench topo``'s table: one line per case, each with its verdict against :data:`TOPO_GOAL`."""
    width = len(verdict(False, TOPO_GOAL))
    lines = [f"{'case':<40} {'seconds':>8} {'peak MiB':>9}  {'verdict':<{width}}  detail"]
    lines += [f"{r.case:<40} {r.seconds:8.2f} {r.peak_mib:9.0f}  {verdict(topo_ok(r), TOPO_GOAL):<{width}}  {r.detail}"
              for r in results]
    return lines


def cmd_bench_topo(args: argparse.Namespace) -> int:
    from dcnlab.experiments import bench_topo
    results = bench_topo.run(progress=lambda n: print(f"  running {n} ...", file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps([r.__dict__ | {"goal_seconds": GOAL_SECONDS, "goal_peak_mib": GOAL_MIB, "ok": topo_ok(r)}
                          for r in results], indent=1))
        return 0
    print("\n".join(topo_lines(results)))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="benchmarks (not tests): fabric build, routing, emulation")
    bsub = p.add_subparsers(dest="bench_cmd", required=True)
    t = bsub.add_parser("topo", help=f"build time and peak memory (goal {TOPO_GOAL})")
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.set_defaults(func=cmd_bench_topo)
    bench_emu.add_parser(bsub)
    bench_chaos.add_parser(bsub)
    from dcnlab.experiments import bench_rounds
    bench_rounds.add_parser(bsub)
    from dcnlab.experiments.plan_cmd import add_bench_parsers
    add_bench_parsers(bsub)
