"""``dcnlab bench emu``: bring-up, check and teardown times, memory per switch, P4Runtime write rates.

Each fabric is checked with the all-pairs check (one probe per ordered host pair) and the rules check
(:mod:`dcnlab.emu.rulecheck`: every table read back, then the fewest probes that exercise every
entry, after ATPG), or with the one ``--check`` names; each gets its time and the probes it sent.

It needs BMv2, p4c and root. Figures, not assertions. Goals: fat-tree k=4 up and verified in
<= 2 s, fat-tree k=8 in <= 10 s, <= 35 MiB per switch, >= 20,000 entries/s for batched writes;
``--lab DIR``: ``dcnlab lab`` on a 4-switch exercise up in <= 1.5 s.

Memory per switch is reported three ways, because RSS overstates what a switch costs the machine:

* RSS: every page the process maps, including the shared libraries (gRPC, protobuf, Thrift, PI;
  about 25 MiB) that every switch maps but the machine holds once;
* PSS: the process's pages, each shared page divided among the processes sharing it; what adds up
  to the machine's memory;
* machine: the drop in the machine's ``MemAvailable`` while the fabric is up, per switch (it also
  counts the hosts, agents and kernel objects of the run, so it is an upper bound).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from dcnlab.topos.errors import UserError

DEFAULT_SPECS = ["fattree:k=4", "bcube:n=4,k=1", "dragonfly:p=1,a=4,h=2", "fattree:k=6", "fattree:k=8", "bcube:n=4,k=2"]
BENCH_MAX_SWITCHES = 1024
"""The benchmark may bring up more switches than ``dcnlab run``'s default; the machine's memory
(:func:`dcnlab.emu.options.check_memory`) is the bound that applies first."""
CHECKS = ("all-pairs", "rules", "both")
RULES_MISS = "MISS (goal: every entry read back as written and confirmed by a probe)"
"""A rules check's verdict when it found a problem (its summary on stderr says which)."""


@dataclass
class CheckTime:
    """One check of one fabric: its time, the probes it sent and what it found."""

    seconds: float
    probes: int
    result: str
    detail: str = ""


@dataclass
class BringUp:
    spec: str
    up_s: float
    reach_s: float
    down_s: float
    phases: dict[str, float]
    reachable: str
    lost: int
    switches: int
    rss_mib: list[float]
    pss_mib: list[float]
    machine_mib: float
    checks: dict[str, CheckTime] | None = None
    hosts: int = 0


def _rss_mib(pid: int) -> float:
    return _rollup(pid, "Rss")


def _rollup(pid: int, key: str) -> float:
    """A field of /proc/<pid>/smaps_rollup, in MiB."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _mem_available_mib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def bring_up(spec: str, program: Path | None = None, check: str = "all-pairs") -> BringUp:
    """Bring ``spec`` up (with dcnlab's program, routed; or with a user's ``program``, which gets no
    routes, so its row has no check), run ``check`` (all-pairs, rules or both), measure memory, tear down."""
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.emu.reachability import Reachability, deadline_for
    from dcnlab.emu.rulecheck import check_rules
    from dcnlab.topos.spec import parse_spec

    fabric = parse_spec(spec)
    switches = sum(n for role, n in fabric.counts().items() if role.value != "host")
    net = FabricNetwork(fabric, NetOptions(max_switches=BENCH_MAX_SWITCHES, agents=False,
                                           start_timeout=max(30.0, 0.2 * switches)),   # BMv2 starts take CPU
                        progress=lambda m: None, program=program)
    avail = _mem_available_mib()
    t0 = time.perf_counter()
    try:
        net.start()
        up = time.perf_counter() - t0
        checks: dict[str, CheckTime] = {}
        reach = 0.0
        res = Reachability(hosts=list(net.hosts), heard={})
        if program is None and check in ("all-pairs", "both"):
            t1 = time.perf_counter()
            n = len(net.hosts)
            res = net.reachability(deadline=deadline_for(n * (n - 1)))
            reach = time.perf_counter() - t1
            checks["all-pairs"] = CheckTime(reach, res.probes_sent, f"{res.reached}/{res.pairs}")
        if program is None and check in ("rules", "both"):
            t1 = time.perf_counter()
            rc = check_rules(net)
            checks["rules"] = CheckTime(time.perf_counter() - t1, rc.probes_sent,
                                        f"{rc.confirmed}/{rc.entries}" + ("" if rc.ok else f" {RULES_MISS}"),
                                        " ".join(f"{k}={v:.2f}" for k, v in rc.phases.items())
                                        + f" read={rc.entries_read} planned={rc.probes_planned}")
            if not rc.ok:
                print(rc.summary(), file=sys.stderr)
        pids = [sw.pid for sw in net.switches.values()]
        rss = [_rollup(p, "Rss") for p in pids]
        pss = [_rollup(p, "Pss") for p in pids]
        machine = (avail - _mem_available_mib()) / len(pids)
        phases = dict(net.timings.phases)
    finally:
        net.stop()
    label = spec if program is None else f"{spec} {program.name}"
    return BringUp(label, up, reach, net.timings.phases["teardown"], phases,
                   f"{res.reached}/{res.pairs}" if program is None and "all-pairs" in checks else
                   "(no routes)" if program is not None else "-", res.probes_lost, len(pids),
                   rss, pss, machine, checks, len(net.hosts))


def lab_bring_up(directory: str) -> BringUp:
    """``dcnlab lab DIR``'s bring-up, timed as a user waits for it: the program built (compiled through the
    cache, copied to ``DIR/build``) and the fabric up with every switch's runtime JSON and every host's
    commands; then the all-pairs check over the exercise's own entries."""
    from dcnlab.emu.lab import build, in_lab, load_lab
    from dcnlab.emu.network import FabricNetwork, NetOptions

    lab = load_lab(directory)
    net = FabricNetwork(lab.fabric, NetOptions(agents=False), progress=lambda m: None, program=lab.program)
    avail = _mem_available_mib()
    try:
        with in_lab(lab):
            t0 = time.perf_counter()
            build(lab)
            built = time.perf_counter() - t0
            net.start()
            up = time.perf_counter() - t0
            t1 = time.perf_counter()
            res = net.reachability()
            reach = time.perf_counter() - t1
            pids = [sw.pid for sw in net.switches.values()]
            rss = [_rollup(p, "Rss") for p in pids]
            pss = [_rollup(p, "Pss") for p in pids]
            machine = (avail - _mem_available_mib()) / len(pids)
            phases = {"build": built, **net.timings.phases}
    finally:
        net.stop()
    return BringUp(f"lab:{lab.dir.name}", up, reach, net.timings.phases["teardown"], phases,
                   f"{res.reached}/{res.pairs}", res.probes_lost, len(pids), rss, pss, machine)


def write_rates(entries: int = 5000, single: int = 1000) -> dict[str, float]:
    """Insert ``entries`` ipv4_host entries batched, and ``single`` with one per Write, on one BMv2.

    The switch is the single switch of a BCube(2,0), brought up like any run (its own namespace,
    P4Runtime over a Unix socket), without routes or agents."""
    from dataclasses import replace

    from dcnlab.controller.rules import DST_FIELD, HOST_TABLE, SET_PORT
    from dcnlab.controller.runtime.entities import TableEntry
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.p4src.compiler import compile_program
    from dcnlab.p4src.sizing import sizing_for
    from dcnlab.topos.addressing import host_ip
    from dcnlab.topos.spec import parse_spec

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
    from dcnlab.controller.runtime.errors import RuntimeErrorBase
    from dcnlab.emu import preflight

    preflight.require("dcnlab bench emu")
    try:
        specs = args.specs or ([] if args.lab else DEFAULT_SPECS)
        from dcnlab.emu.lab import load_lab
        for lab in args.lab:      # every lab directory checked before anything is brought up
            load_lab(lab)
        results = []
        for spec in specs:
            for i in range(args.repeat):
                print(f"  bringing up {spec} (run {i + 1}/{args.repeat}) ...", file=sys.stderr, flush=True)
                results.append(bring_up(spec, check=args.check))
                if args.program is not None:
                    print(f"  bringing up {spec} with {args.program.name} (run {i + 1}/{args.repeat}) ...",
                          file=sys.stderr, flush=True)
                    results.append(bring_up(spec, args.program))
        for lab in args.lab:
            for i in range(args.repeat):
                print(f"  bringing up lab {lab} (run {i + 1}/{args.repeat}) ...", file=sys.stderr, flush=True)
                results.append(lab_bring_up(lab))
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"{'fabric':<24} {'sw':>3} {'up s':>5} {'+check s':>8} {'=total':>6} {'down s':>6} {'pairs ok':>11} "
              f"{'lost':>4} {'MiB/switch: RSS':>15} {'PSS':>5} {'machine':>7}  phases")
        for r in results:
            ph = " ".join(f"{k}={v:.2f}" for k, v in r.phases.items() if k != "teardown")
            print(f"{r.spec:<24} {r.switches:>3} {r.up_s:5.2f} {r.reach_s:8.2f} {r.up_s + r.reach_s:6.2f} "
                  f"{r.down_s:6.2f} {r.reachable:>11} {r.lost:>4} {statistics.mean(r.rss_mib):15.1f} "
                  f"{statistics.mean(r.pss_mib):5.1f} {r.machine_mib:7.1f}  {ph}")
        checked = [r for r in results if r.checks]
        if checked:
            print("checks (probes: what each check sent; result: host pairs reached (all-pairs) or entries "
                  "confirmed (rules); RSS MiB/sw: RSS of the BMv2 processes / switches):")
            print(f"{'fabric':<24} {'sw':>4} {'hosts':>5} {'check':<9} {'s':>7} {'probes':>8} {'result':>15} "
                  f"{'RSS MiB/sw':>10}  phases")
            for r in checked:
                for name, c in (r.checks or {}).items():
                    print(f"{r.spec:<24} {r.switches:>4} {r.hosts:>5} {name:<9} {c.seconds:7.2f} {c.probes:>8,} "
                          f"{c.result:>15} {statistics.mean(r.rss_mib):10.1f}  {c.detail}")
        if args.program is not None:
            print(f"rows '... {args.program.name}': your program on the same fabric, spawn to pipeline in (no routes "
                  f"of dcnlab's, so no all-pairs check); goal: up as fast as dcnlab's own program")
        if args.lab:
            print("lab rows: 'up s' is `dcnlab lab`'s bring-up (build + fabric up with the exercise's entries and "
                  "host commands; goal <= 1.5 s for a 4-switch exercise), '+check' the all-pairs check")
        if specs and not args.no_writes:
            print("  measuring P4Runtime write rates on one switch ...", file=sys.stderr, flush=True)
            w = write_rates(args.entries)
            print(f"P4Runtime writes: batched {w['batched_per_s']:,.0f} entries/s, one per request "
                  f"{w['single_per_s']:,.0f} entries/s (goal >= 20,000 batched); RSS with {args.entries:,} "
                  f"entries {w['rss_mib_with_entries']:.0f} MiB")
    except RuntimeErrorBase as e:
        raise UserError(str(e)) from None
    return 0


def p4_source(text: str) -> Path:
    path = Path(text).absolute()
    if path.suffix != ".p4" or not path.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} is not a P4 source file; valid: an existing FILE.p4")
    return path


