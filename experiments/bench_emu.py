"""``dcnlab bench emu``: emulation bring-up/teardown time, P4Runtime write rate, RSS per switch.

It needs BMv2, p4c and root. Figures, not assertions. The goals are fat-tree k=4 up with
routing in ≤ 15 s (the target is 3 s) and ≥ 10,000 entries/s for batched writes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from experiments.errors import UserError


@dataclass
class BringUp:
    spec: str
    up_s: float
    reach_s: float
    down_s: float
    phases: dict[str, float]
    reachable: str
    rss_mib: list[float]


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def bring_up(spec: str) -> BringUp:
    from emu.network import FabricNetwork, NetOptions
    from topos.spec import parse_spec

    net = FabricNetwork(parse_spec(spec), NetOptions(), progress=lambda m: None)
    t0 = time.perf_counter()
    try:
        net.start()
        up = time.perf_counter() - t0
        t1 = time.perf_counter()
        res = net.reachability()
        reach = time.perf_counter() - t1
        rss = [_rss_mib(sw.pid) for sw in net.switches.values()]
        phases = dict(net.timings.phases)
    finally:
        net.stop()
    return BringUp(spec, up, reach, net.timings.phases["teardown"], phases, f"{res.reached}/{res.pairs}", rss)


def write_rates(entries: int = 5000, single: int = 1000) -> dict[str, float]:
    """Insert ``entries`` ipv4_host entries batched, and ``single`` with one per Write, on one BMv2.

    The switch is the single switch of a BCube(2,0), brought up like any run (its own namespace,
    P4Runtime over a Unix socket), without routes or agents."""
    from dataclasses import replace

    from controller.rules import DST_FIELD, HOST_TABLE, SET_PORT
    from controller.runtime.entities import TableEntry
    from emu.network import FabricNetwork, NetOptions
    from p4src.compiler import compile_program
    from p4src.sizing import sizing_for
    from topos.addressing import host_ip
    from topos.spec import parse_spec

    fabric = parse_spec("bcube:n=2,k=0")
    sizing = replace(sizing_for(fabric), HOST_TABLE_SIZE=max(8192, entries))
    pipeline = compile_program(defines=sizing.defines()).pipeline()
    with FabricNetwork(fabric, NetOptions(agents=False, routes=False), pipeline, progress=lambda m: None) as net:
        ctl = net.controller
        ents = [TableEntry(HOST_TABLE, {DST_FIELD: host_ip(i)}, SET_PORT, {"port": i % 2}) for i in range(entries)]
        t = time.perf_counter()
        ctl.write({"w0": [+e for e in ents]}, batch=1000)
        batched = entries / (time.perf_counter() - t)
        ctl.write({"w0": [-e for e in ents]}, batch=1000)
        t = time.perf_counter()
        ctl.write({"w0": [+e for e in ents[:single]]}, batch=1)
        one = single / (time.perf_counter() - t)
        rss = _rss_mib(net.switches["w0"].pid)
    return {"batched_per_s": batched, "single_per_s": one, "rss_mib_with_entries": rss}


def cmd_bench_emu(args: argparse.Namespace) -> int:
    from controller.runtime.errors import RuntimeErrorBase
    from controller.runtime.toolchain import missing

    gone = missing("simple_switch_grpc", "p4c")
    if gone:
        raise UserError(f"bench emu needs {', '.join(gone)} (PATH or $DCNLAB_P4_PREFIX/bin)")
    if os.geteuid() != 0:
        raise UserError("bench emu needs root (Mininet hosts, veths)")
    try:
        results = []
        for spec in args.specs:
            for i in range(args.repeat):
                print(f"  bringing up {spec} (run {i + 1}/{args.repeat}) ...", file=sys.stderr, flush=True)
                results.append(bring_up(spec))
        print(f"{'fabric':<24} {'up s':>5} {'+check s':>8} {'=total':>6} {'down s':>6} {'pairs ok':>9} "
              f"{'RSS/switch MiB':>15}  phases")
        for r in results:
            ph = " ".join(f"{k}={v:.2f}" for k, v in r.phases.items() if k != "teardown")
            print(f"{r.spec:<24} {r.up_s:5.2f} {r.reach_s:8.2f} {r.up_s + r.reach_s:6.2f} {r.down_s:6.2f} "
                  f"{r.reachable:>9} {statistics.mean(r.rss_mib):8.1f} (max {max(r.rss_mib):.0f})  {ph}")
        print("  measuring P4Runtime write rates on one switch ...", file=sys.stderr, flush=True)
        w = write_rates()
        print(f"P4Runtime writes: batched {w['batched_per_s']:,.0f} entries/s, one per request "
              f"{w['single_per_s']:,.0f} entries/s (goal >= 10,000 batched); RSS with 5,000 entries "
              f"{w['rss_mib_with_entries']:.0f} MiB")
    except RuntimeErrorBase as e:
        raise UserError(str(e)) from None
    return 0


def add_parser(bsub: argparse._SubParsersAction) -> None:
    e = bsub.add_parser("emu", help="bring-up/teardown time, P4Runtime write rate, RSS per switch (BMv2, root)")
    e.add_argument("specs", nargs="*", default=["fattree:k=4", "bcube:n=4,k=1"])
    e.add_argument("--repeat", type=int, default=1)
    e.set_defaults(func=cmd_bench_emu)
