"""What ``dcnlab bench aggregation`` measures: the model's timings (single trees at paper scale, the BCube(8,5)
1500x1500 point on the pool) and one BMv2 node aggregating against forwarding (:func:`bench_dataplane`)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dcnlab.reproduce.aggregation import model as aggregation_model
from dcnlab.reproduce.aggregation.bmv2 import Progress
from dcnlab.reproduce.aggregation.model import SHUFFLE_METHODS, _draw, _mean
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def model_rows(workers: int | None, rounds: int, progress: bool, cluster: Any = None
               ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Model timings: single trees at paper scale, one 1500x1500 round per method, the 1500 point (on ``workers``
    local processes or the Dask ``cluster``)."""
    from dcnlab.controller.aggregation import engine
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.controller.aggregation.mib import m2_family
    from dcnlab.controller.aggregation.optimal import bcube_hop_graph, solve
    from dcnlab.controller.aggregation.shuffle import shuffle_costs

    t0 = time.perf_counter()
    engine.warm_up()
    rows: list[dict[str, Any]] = [{"case": "engine warm-up (compile or load cached kernels)",
                                   "seconds": time.perf_counter() - t0}]
    sp = LabelSpace(8, 5)
    pick = _draw(sp.N, 3000, (7,))
    s, r = pick[1500:], pick[:1500]
    rows.append({"case": "IRS tree, 1500 senders, BCube(8,5)",
                 "seconds": _timed(lambda: engine.irs_forest(sp, r[:1], s))})
    rows.append({"case": "M2 tree, 1500 senders, BCube(8,5)",
                 "seconds": _timed(lambda: m2_family(sp, int(r[0]), s, "m2"))})
    rows.append({"case": "KMB tree, 1500 senders, BCube(8,5)",
                 "seconds": _timed(lambda: engine.kmb_forest(sp, r[:1], s))})
    sp4 = LabelSpace(4, 8)
    p4 = _draw(sp4.N, 4001, (8,))
    rows.append({"case": "M2 tree, 4000 senders, BCube(4,8)",
                 "seconds": _timed(lambda: m2_family(sp4, int(p4[0]), p4[1:], "m2"))})
    for n, k, m in ((4, 2, 32), (8, 1, 32), (2, 5, 32)):
        spx = LabelSpace(n, k)
        px = _draw(spx.N, m + 1, (9, n, k))
        graph = bcube_hop_graph(n, k)
        t0 = time.perf_counter()
        solve(graph, int(px[0]), px[1:].tolist())
        rows.append({"case": f"optimal (MILP), {m} senders, BCube({n},{k})", "seconds": time.perf_counter() - t0})
    for methods in (("srs", "incast"), ("unicast",), ("kmb",)):
        t0 = time.perf_counter()
        shuffle_costs(sp, s, r, (0.0,), (*methods, "none"))
        rows.append({"case": f"1500x1500 shuffle round, BCube(8,5): {'+'.join(methods)} (1 core)",
                     "seconds": time.perf_counter() - t0})
    tasks = [("003-size", 1500, rnd, 11) for rnd in range(rounds)]
    workers = cluster.workers if cluster is not None else workers or os.cpu_count() or 1
    done: list[tuple[str, Any, int, dict[str, Any]]] = []
    wall = _timed(lambda: done.extend(aggregation_model.run_tasks(tasks, workers, progress=progress, cluster=cluster)))
    cpu = sum(res["cpu_seconds"] for *_, res in done)
    where = f"{workers} workers" if cluster is None else f"{workers} Dask workers"
    rows.append({"case": f"1500x1500 point, {rounds} rounds, all methods, {where}",
                 "seconds": wall, "goal": 60.0})
    point = {"rounds": rounds, "workers": workers, "wall_seconds": wall, "cpu_seconds": cpu,
             "cpu_seconds_per_round": cpu / max(rounds, 1), "idle_machine_estimate": cpu / workers,
             "saving": {mth: 100 * _mean([1 - res["traffic"][mth][0] / res["traffic"]["none"][0] for *_, res in done])
                        for mth in SHUFFLE_METHODS}}
    return rows, point


def bench(args: argparse.Namespace) -> int:
    """``dcnlab bench aggregation``: the model timings, then one BMv2 node (aggregation vs forwarding)."""
    from dcnlab.topos.errors import UserError

    if args.rounds < 1:
        raise UserError(f"--rounds {args.rounds}: valid: at least 1")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers}: valid: at least 1")
    from dcnlab.results.goals import verdict
    from dcnlab.sweep import pool

    rows: list[dict[str, Any]] = []
    point: dict[str, Any] = {}
    if not args.no_model:
        with pool.connect(getattr(args, "cluster", None)) as cluster:
            rows, point = model_rows(args.workers, args.rounds, progress=not args.json, cluster=cluster)
    load_model = os.getloadavg()
    why = ["disabled by --no-dataplane"] if args.no_dataplane else aggregation_model.dataplane_missing()
    dataplane: dict[str, Any] = {"skipped": "; ".join(why)} if why else {}
    lines: list[str] = []
    if not why:
        res = bench_dataplane(frames=args.dp_frames, rate_pps=args.dp_rate, rounds=args.dp_rounds,
                              progress=lambda msg: print(msg, file=sys.stderr, flush=True))
        dataplane = res.to_json()
        lines = res.summary_lines()
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"rows": rows, "point_1500": point, "load_average_after_model": load_model,
                          "dataplane": dataplane, "load_average": load}, default=str))
        return 0
    if rows:
        print(f"{'case':<72} {'seconds':>9}")
        for row in rows:
            goal = (f"  {verdict(row['seconds'] <= row['goal'], '<= {:.0f} s'.format(row['goal']))}"
                    if "goal" in row else "")
            print(f"{row['case']:<72} {row['seconds']:9.2f}{goal}")
        print(f"  the point's rounds used {point['cpu_seconds']:.1f} CPU seconds ({point['cpu_seconds_per_round']:.2f} "
              f"per round): {point['idle_machine_estimate']:.1f} s on {point['workers']} idle cores")
        print("  savings at m = n = 1500: " + ", ".join(f"{m} {v:.2f}%" for m, v in point["saving"].items()))
        print(f"load average after the model {load_model[0]:.1f} {load_model[1]:.1f} {load_model[2]:.1f} "
              f"({os.cpu_count()} cores; the machine is shared with other jobs when it is above that)")
    if why:
        print(f"BMv2 data plane benchmark skipped: {'; '.join(why)}")
    else:
        print("\n".join(lines))
        print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return 0


BENCH_SPEC = "bcube:n=2,k=0"


@dataclass(frozen=True)
class PhaseCost:
    """One kind of frame through the node: what it cost the node's BMv2 process."""

    name: str
    fan_in: int
    """Contributions per chunk (0: plain forwarding; 1: every chunk completes its slot and goes out again)."""
    packets: int
    """Frames the node processed (forwarded, or aggregated chunks)."""
    aggregates: int
    cpu_us: float
    """CPU time of the BMv2 process per frame (idle cost taken out), in microseconds."""

    @property
    def capacity_pps(self) -> float:
        """Frames per second one CPU second buys: the node's rate when the CPU is the limit."""
        return 1e6 / self.cpu_us if self.cpu_us > 0 else 0.0


@dataclass(frozen=True)
class BenchResult:
    spec: str
    node: str
    frame_bytes: int
    frames: int
    rate_pps: float
    rounds: int
    phases: tuple[PhaseCost, ...]
    """Median over rounds, per kind: forwarding first."""
    ratios: tuple[tuple[int, float], ...]
    """(fan-in, median over rounds of aggregation capacity / forwarding capacity)."""

    def ratio(self, fan_in: int) -> float:
        return dict(self.ratios)[fan_in]

    @property
    def goal_met(self) -> bool:
        """The goal: the aggregation rate (chunks/s) at least half the forwarding rate, at every fan-in (aggregating must
        not make a node the bottleneck of its tree)."""
        return all(r >= 0.5 for _, r in self.ratios)

    def summary_lines(self) -> list[str]:
        lines = [f"one BMv2 node ({self.node} of {self.spec}), {self.frame_bytes}-byte frames, {self.frames} per "
                 f"phase at {self.rate_pps:g}/s, median of {self.rounds} rounds; rate = frames per CPU second of "
                 f"the node's BMv2 process:"]
        for ph in self.phases:
            what = "packets/s forwarded" if ph.fan_in == 0 else f"chunks/s aggregated (fan-in {ph.fan_in})"
            extra = "" if ph.fan_in == 0 else f", {self.ratio(ph.fan_in):.2f} x forwarding"
            lines.append(f"  {ph.name:<22} {ph.cpu_us:>7.1f} us/frame  {ph.capacity_pps:>8.0f} {what}{extra}")
        from dcnlab.results.goals import verdict
        lines.append(f"  aggregation against forwarding: {verdict(self.goal_met, '>= 0.5 x at every fan-in')}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"capacity_pps": {p.name: p.capacity_pps for p in self.phases},
                               "goal_met": self.goal_met}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads)."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_dataplane(frames: int = 6000, rate_pps: float = 1500.0, rounds: int = 3, fan_ins: Sequence[int] = (2, 1),
                    progress: Progress | None = None, pipeline: Any = None) -> BenchResult:
    """One BMv2 node: what a forwarded frame and an aggregated chunk cost it (see the module docstring).

    The machine is shared (2 cores, other emulations, compilers), so wall-clock saturation rates say more
    about the neighbours than about the program. The benchmark therefore offers ``frames`` frames of each
    kind at ``rate_pps`` (below saturation) and divides the CPU time of the node's BMv2 process (all its
    threads, from /proc, less the idle cost measured over as long a quiet spell) by the frames it processed:
    the rate is frames per CPU second, the node's throughput when its CPU is the limit. Phases alternate for
    ``rounds`` rounds and every figure is a median (ratios are taken within a round). A "chunk aggregated"
    is one contribution added into a slot, the unit of work a forwarded packet is compared with; with
    fan-in f the node sends one aggregate per f chunks. ``pipeline``: another build of the program (A/B
    tests of p4src variants; default: p4src as it is)."""
    import statistics

    from dcnlab.controller.aggregation.dataplane import (
        PACKETS_COUNTER,
        RouteRule,
        SlotRange,
    )
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.topos.spec import parse_spec
    from dcnlab.traffic.aggregation_agent import FRAME_SIZE, chunk_frame, pack_chunk
    from dcnlab.traffic.frames import udp_frame

    if not all(1 <= f <= 32 for f in fan_ins) or not 1 <= len(fan_ins) <= 4:
        raise UserError(f"fan_ins={list(fan_ins)}: valid: one to four fan-ins, 1..32 each")
    if not 100 <= frames <= 1_000_000:
        raise UserError(f"frames={frames}: valid: 100..1000000")
    if not 10 <= rate_pps <= 100_000:
        raise UserError(f"rate_pps={rate_pps}: valid: 10..100000")
    if not 1 <= rounds <= 20:
        raise UserError(f"rounds={rounds}: valid: 1..20")
    say = progress or (lambda m: log.info("%s", m))
    fabric = parse_spec(BENCH_SPEC)
    host, peer = fabric.host(0), fabric.host(1)
    node, port = host.node, host.node_port
    other_mac = "02:00:00:ff:ff:fe"     # frames come back to the host, which drops them (not its MAC)
    kinds: dict[str, tuple[int, list[str]]] = {
        "plain forwarding": (0, [udp_frame(host.mac, other_mac, peer.ip, host.ip, 40000, 5001, FRAME_SIZE).hex()])}
    template = bytearray(chunk_frame(host.mac, other_mac, peer.ip, host.ip))
    rules = []
    for job, f in enumerate(fan_ins, start=1):
        hexes = []
        for c in range(f):
            template[42:] = pack_chunk(job, 0, 0, c, [c + 1] * 16)
            hexes.append(bytes(template).hex())
        kinds[f"aggregation, fan-in {f}"] = (f, hexes)
        rules.append(RouteRule(node, job, 0, 0, port, port, SlotRange(64 * (job - 1), 64), (1 << f) - 1, 0, True))
    samples: dict[str, list[PhaseCost]] = {k: [] for k in kinds}
    with FabricNetwork(fabric, NetOptions(), pipeline=pipeline, progress=say) as net:
        net.controller.write({node: [+r.entry() for r in rules]})
        agent = net.agent(host.name)
        iface = net.addr(host.name).iface
        next_chunk = 1      # chunk numbers keep rising from phase to phase: a slot drops older ones as stale

        def counts() -> tuple[int, int, int]:
            c = _node_counts(net, node, PACKETS_COUNTER, port)
            return c[-1], c.get(0, 0) + c.get(1, 0), c.get(1, 0)

        def settle(before: tuple[int, int, int]) -> tuple[int, int, int]:
            now, deadline = counts(), time.monotonic() + 60
            while time.monotonic() < deadline:      # until the node has worked off its queues
                time.sleep(0.3)
                again = counts()
                if again == now and again != before:
                    break
                now = again
            return now

        for r in range(rounds):
            pid = net.switches[node].pid
            c0, t0 = _cpu_seconds(pid), time.perf_counter()
            time.sleep(frames / rate_pps)
            idle = (_cpu_seconds(pid) - c0) / (time.perf_counter() - t0)
            for name, (f, hexes) in kinds.items():
                before = counts()
                c0, t0 = _cpu_seconds(pid), time.perf_counter()
                sent = agent.call({"cmd": "aggregation.blast", "iface": iface, "frames": hexes, "count": frames,
                                   "rate_pps": rate_pps, "chunk": next_chunk})
                next_chunk = sent["rounds_end"]
                after = settle(before)
                cpu = _cpu_seconds(pid) - c0 - idle * (time.perf_counter() - t0)
                done = after[0] - before[0] if f == 0 else after[1] - before[1]
                samples[name].append(PhaseCost(name, f, done, after[2] - before[2], 1e6 * cpu / max(done, 1)))
            say(f"round {r + 1}/{rounds}: " + ", ".join(f"{n} {s[-1].cpu_us:.1f} us" for n, s in samples.items()))
    phases = tuple(PhaseCost(n, s[0].fan_in, int(statistics.median(x.packets for x in s)),
                             int(statistics.median(x.aggregates for x in s)), statistics.median(x.cpu_us for x in s))
                   for n, s in samples.items())
    fwd = samples["plain forwarding"]
    ratios = tuple((f, statistics.median(a.capacity_pps / b.capacity_pps for a, b in
                                         zip(samples[f"aggregation, fan-in {f}"], fwd) if b.capacity_pps))
                   for f in fan_ins)
    res = BenchResult(BENCH_SPEC, node, FRAME_SIZE, frames, rate_pps, rounds, phases, ratios)
    for line in res.summary_lines():
        say(line)
    return res


def _node_counts(net: Any, node: str, counter: str, port: int) -> dict[int, int]:
    """Outcome counts of the node (index -> packets), and under -1 the packets its port_out sent on ``port``."""
    from dcnlab.traffic.measure import OUT_COUNTER

    cells = net.controller.read_counters(counter, [node])[node]
    out = {c.index: c.packets for c in cells}
    out[-1] = next(c.packets for c in net.controller.read_counters(OUT_COUNTER, [node])[node] if c.index == port)
    return out
