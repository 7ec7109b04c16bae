"""CLI of the congestion mechanism (paper 002, IB CC bandwidth partition): ``dcnlab plan|reproduce|bench congestion``.

* ``dcnlab reproduce congestion [--emulate auto|on|off] [--quick] [--out DIR] [--json]`` runs the paper's
  experiments: the model parts always, then the BMv2 experiment as ``--emulate`` says (:mod:`dcnlab.cli.emulate`:
  ``auto``, the default, where root, ``simple_switch_grpc``, ``simple_switch_CLI`` and ``p4c`` are found; ``on``
  requires them; ``off`` skips it), and says which ran and why. ``--model`` is the old spelling of
  ``--emulate off`` (a notice says so); a bare ``--emulate``, of ``--emulate on`` (it used to skip the model).

  * **Model** (:mod:`dcnlab.controller.congestion.scenarios` on :mod:`dcnlab.controller.congestion.fluid`):
    the experiments at paper scale in IB time plus a large-scale exploration (hundreds of
    flows and tenants); PNGs in the style of the paper's Fig. 3 and Fig. 5 and everything as JSON.
    Also (a) without CC on one FIFO queue (BMv2's arbitration; A and B on their own inputs or on one
    shared input, as BMv2 runs them), (c') the recovery after Fig. 5(a)'s departures at 1 ms
    resolution (``fig5_recovery.png``) and (d) Fig. 4's CCT rate limit (one QP pinned to an IRD).
  * **BMv2** (:mod:`dcnlab.reproduce.congestion.bmv2`): (a) 4 senders, CC off / on / meter
    mode, Jain's index over time; (b) ``CCTI_Increase`` 1:2 and 1:3 and the same ratios as meters;
    (c) tenant 1 with one flow against tenant 2 with 1 -> 2 -> 3 -> 2 -> 1 flows, with the policy's
    pushes and in meter mode; per-flow and per-tenant throughput every 100 ms with the fluid model's
    prediction on the same plots (``emulation_*.png``, ``emulation.json``). Exit status 1 when a
    check misses its tolerance. The sender's CCTI timer is the paper's Algorithm 1 (reset on every
    BECN, CCTI_Timer 30), as in the model parts; ``--timer-mode free`` runs the specification's
    free-running timer instead (CCTI_Timer 20; ``--ccti-timer`` overrides either), a reading Algorithm 1
    rules out, labelled so; the module docstring of the experiment says why.
* ``dcnlab plan congestion --tenant NAME:WEIGHT:FLOWS ... [--algo POLICY]`` prints the policy: per-flow
  ``CCTI_Increase``, target shares, meter rates, and with ``--model`` the model's predicted shares. ``--algo``
  is every mechanism's name for its algorithm; ``--policy`` is the same option.
* ``dcnlab bench congestion`` measures the model's speed (simulated seconds per second) by flow count.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from typing import TYPE_CHECKING

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
from dcnlab.cli.errors import UserError
from dcnlab.reproduce.congestion import bench as congestion_bench
from dcnlab.reproduce.congestion import model, reproduce
from dcnlab.reproduce.congestion import plan as congestion_plan
from dcnlab.sweep.pool import add_cluster_option
from dcnlab.topos.numbers import parse_float, parse_int

if TYPE_CHECKING:
    from dcnlab.controller.congestion.params import TimerMode

log = logging.getLogger(__name__)

GBPS = 1e9
MIN_WEIGHT, MAX_WEIGHT = 1e-6, 1e6
"""Tenant weights: loads n/w and their ratios stay finite (1e308 overflowed the policy)."""
MAX_PLAN_FLOWS = 100_000
MAX_MODEL_FLOW_SECONDS = 1000
"""Flows x simulated seconds of one model run (``plan --model``; ``bench`` per case): about 10 s of CPU."""
MAX_BENCH_FLOW_SECONDS = 10_000
PLAN_SECONDS = 0.4
BMV2_OPTIONS = ("--spec", "--queue-rate", "--max-load", "--timer-mode", "--ccti-timer")
"""Options of the BMv2 experiment only: an error when it does not run."""


# -- reproduce -----------------------------------------------------------------------------------------


def cmd_reproduce(args: argparse.Namespace) -> int:
    """The model parts, then the BMv2 experiment as ``--emulate`` says, as every reproduction runs
    (:func:`dcnlab.cli.reproduce.run_alone`)."""
    from dcnlab.cli.reproduce import run_alone
    from dcnlab.reproduce.congestion.reproduction import REPRODUCTION
    from dcnlab.results.outputs import output_dir

    # before --out is touched: --emulate on without BMv2 must leave it as it was
    bmv2, why = emulate.bmv2_plan(args, "congestion", reproduce.bmv2_missing)
    emulate.only_with_bmv2(args, BMV2_OPTIONS, bmv2, why)
    exclusive(args, "--workers", "--cluster", why="the cluster's workers run the model")
    policies = tuple(args.algo or ())
    if bmv2 and len(policies) > 1:
        raise UserError(f"--algo: the BMv2 experiment runs (c) under one policy; given {len(policies)} (the model "
                        f"parts run each: add --emulate off)")
    output_dir(args.out, "--out")      # a bad --out is the one line of the error, before the notes
    print(f"{model.BACKEND_NOTE}; BMv2: {why}", file=sys.stderr)
    if bmv2:
        print(model.BMV2_NOTE, file=sys.stderr)
    return run_alone(REPRODUCTION.configure(args), args, args.out, (bmv2, why))


# -- plan ----------------------------------------------------------------------------------------------
def _parse_tenant(text: str) -> tuple[str, float, int]:
    from dcnlab.topos.inputs import quote

    parts = text.split(":")
    if len(parts) != 3 or not parts[0]:
        raise argparse.ArgumentTypeError(f"{quote(text)} is not NAME:WEIGHT:FLOWS, e.g. t1:1:3")
    try:
        weight, flows = parse_float(parts[1]), parse_int(parts[2])
    except ValueError:
        raise argparse.ArgumentTypeError(f"{quote(text)}: WEIGHT must be a number and FLOWS an integer "
                                         f"(ASCII digits, e.g. t1:1.5:3)") from None
    if not (math.isfinite(weight) and MIN_WEIGHT <= weight <= MAX_WEIGHT):
        raise argparse.ArgumentTypeError(f"{quote(text)}: WEIGHT={parts[1]} is out of range; valid: "
                                         f"{MIN_WEIGHT:g}..{MAX_WEIGHT:g}")
    if not 1 <= flows <= 4096:
        raise argparse.ArgumentTypeError(f"{quote(text)}: FLOWS={flows} is out of range; valid: 1..4096")
    return parts[0], weight, flows


def cmd_plan(args: argparse.Namespace) -> int:
    from collections import Counter

    from dcnlab.topos.inputs import quote

    for option in ("--seconds", "--timer-mode"):
        needs(args, option, args.model, "with --model (it sets up the model's run)")
    seconds = PLAN_SECONDS if args.seconds is None else args.seconds
    timer_mode: TimerMode = "free" if args.timer_mode == "free" else "reset"
    specs = args.tenant or [("tenant1", 1.0, 1), ("tenant2", 1.0, 3)]
    total = sum(k for _, _, k in specs)
    if total > MAX_PLAN_FLOWS:
        raise UserError(f"--tenant: {total:,} flows in all; plan congestion handles at most {MAX_PLAN_FLOWS:,}")
    dup = sorted(n for n, times in Counter(s[0] for s in specs).items() if times > 1)   # linear, not names.count()
    if dup:
        raise UserError(f"--tenant: tenant names must be unique; given more than once: "
                        f"{', '.join(quote(n) for n in dup[:10])}")
    if args.model and total * seconds > MAX_MODEL_FLOW_SECONDS:
        raise UserError(f"--model: {total:,} flows x {seconds:g} s = {total * seconds:,.0f} flow-seconds of IB time; "
                        f"the model runs at most {MAX_MODEL_FLOW_SECONDS:,} (about 10 ms of CPU each)")
    data = congestion_plan.plan(specs, args.rate * GBPS, seconds, timer_mode, args.model, args.algo)
    from dcnlab.topos.spec import parse_spec     # for --view: the flows on the BMv2 experiment's fabric
    args.planned = ("congestion", parse_spec(reproduce.BMV2_SPEC), data)
    if args.json:
        print(json.dumps(data))
        return 0
    head = f"{'tenant':<12} {'weight':>6} {'flows':>5} {'CCTI_Inc':>8} {'Timer':>6} {'target':>7} {'meter Gb/s':>10}"
    print(head + (f" {'model':>7}" if args.model else ""))
    for row in data["tenants"]:
        line = (f"{row['tenant']:<12} {row['weight']:>6g} {row['flows']:>5} {row['ccti_increase']:>8} "
                f"{row['ccti_timer']:>6} {row['target_share']:>7.1%} {row['meter_bps'] / GBPS:>10.3f}")
        print(line + (f" {row['model_share']:>7.1%}" if args.model else ""))
    if args.model:
        print(f"model: link utilization {data['model_utilization']:.1%} over {seconds:g} s "
              f"(first half discarded)")
    return 0


# -- bench ---------------------------------------------------------------------------------------------
def cmd_bench(args: argparse.Namespace) -> int:
    work = sum(args.flows) * args.seconds
    if work > MAX_BENCH_FLOW_SECONDS:
        raise UserError(f"--flows {' '.join(map(str, args.flows[:8]))}{' ...' if len(args.flows) > 8 else ''} x "
                        f"--seconds {args.seconds:g} = {work:,.0f} flow-seconds of IB time; bench congestion runs at "
                        f"most {MAX_BENCH_FLOW_SECONDS:,} (about 10 ms of CPU each)")
    rows = congestion_bench.bench_rows(args.flows, args.seconds)
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"{'flows':>6} {'simulated s':>11} {'wall s':>7} {'sim s / wall s':>14} {'steps/s':>9}")
    for r in rows:
        print(f"{r['flows']:>6} {r['simulated_s']:>11.2f} {r['wall_s']:>7.2f} {r['sim_per_wall']:>14.3f} "
              f"{r['steps_per_s']:>9.0f}")
    return 0


# -- registration --------------------------------------------------------------------------------------
def add_reproduce_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("congestion", help="IB congestion control: fairness, CCTI_Increase ratios, tenant "
                                          "fairness (paper 002, Fig. 3 and Fig. 5)",
                       description="The model parts (the fluid model at paper scale, in IB time), then, as --emulate "
                                   "says, the BMv2 experiment on the same scenarios (real packets, congestion agents) "
                                   "checked against the model; PNG and JSON in --out and summary.json with both.")
    emulate.emulate_option(p, "four senders with CC off, on and as meters, the CCTI_Increase ratios and the tenants, "
                              f"on {reproduce.BMV2_SPEC}",
                           was="it used to run BMv2 instead of the model", aliases=(("--model", "off"),))
    p.add_argument("--quick", action="store_true",
                   help="shorter phases and fewer large-scale points (model < 1 min; BMv2 about 3 min)")
    p.add_argument("--spec", type=fabric_spec(emulation_limit),
                   help=f"BMv2 part: the fabric (at least 5 hosts; default {reproduce.BMV2_SPEC}: two switches, as in the "
                        f"paper's Fig. 2)")
    p.add_argument("--queue-rate", type=ranged(int, 50, 20000, "packets/s"),
                   help=f"BMv2 part: bottleneck egress queue rate (default {reproduce.BMV2_QUEUE_RATE})")
    p.add_argument("--max-load", type=ranged(float, 0.1, 1000), default=None, metavar="LOAD",
                   help="BMv2 part: before each scenario wait (up to 5 min) until the 1-minute load average is below LOAD")
    p.add_argument("--timer-mode", choices=("reset", "free"), default=None,
                   help="BMv2 part: CCTI timer, Algorithm 1 (reset on BECN) or the spec's free-running timer "
                        "(default: reset, as Algorithm 1 and the model parts; free contradicts Algorithm 1's \"Timer = 0\")")
    p.add_argument("--ccti-timer", type=ranged(int, 1, 65535, "x 1.024 us"), default=None,
                   help="BMv2 part: CCTI_Timer (default: 20 free-running, 30 reset)")
    p.add_argument("--out", default="results/congestion", metavar="DIR", help="output directory for PNG and JSON")
    p.add_argument("--workers", type=workers(), help="model processes (default: every core)")
    add_cluster_option(p, "model runs")
    algorithm_option(p, "congestion", "--policy", append=True,
                     help="also run the tenant experiment (c) under this policy (repeatable; --policy is the same "
                          "option): per-flow, an installed plug-in, package.module:name, file.py:name, or list; "
                          "model: its rows join the table, results.json and summary.json; BMv2: (c) runs under it "
                          "instead of tenant-fair (one only)")
    p.add_argument("--json", action="store_true", help="print one JSON object (the summary) on stdout")
    p.set_defaults(func=cmd_reproduce)


def add_plan_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("congestion", help="tenant policy: per-flow CCTI_Increase, target shares, meter rates")
    p.add_argument("--tenant", action="append", type=_parse_tenant, metavar="NAME:WEIGHT:FLOWS",
                   help="a tenant on the bottleneck (repeatable; default: the paper's tenant1:1:1 tenant2:1:3)")
    p.add_argument("--rate", type=ranged(float, 1e-6, 1e4, "Gb/s"), default=8.0, help="bottleneck rate in Gb/s")
    p.add_argument("--model", action="store_true", help="also predict the shares with the fluid model")
    p.add_argument("--seconds", type=ranged(float, 0.02, 10, "s"),
                   help=f"with --model: model run length (IB time; default {PLAN_SECONDS:g})")
    p.add_argument("--timer-mode", choices=("reset", "free"),
                   help="with --model: CCTI timer of the model, Algorithm 1 (reset on BECN; default) or the spec's "
                        "free-running timer")
    algorithm_option(p, "congestion", "--policy", default="tenant-fair",
                     help="the tenant policy (--policy is the same option): tenant-fair (the paper's; default), "
                          "per-flow, an installed plug-in, package.module:name, file.py:name, or list")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_plan)


def add_bench_parser(bsub: argparse._SubParsersAction) -> None:
    b = bsub.add_parser("congestion", help="fluid-model speed by number of flows")
    b.add_argument("--flows", type=ranged(int, 1, 100000), nargs="+", default=[4, 16, 64, 256, 1024],
                   help="flow counts to time")
    b.add_argument("--seconds", type=ranged(float, 0.01, 10, "s"), default=0.1, help="simulated seconds per case")
    b.add_argument("--json", action="store_true", help="machine-readable output")
    b.set_defaults(func=cmd_bench)
