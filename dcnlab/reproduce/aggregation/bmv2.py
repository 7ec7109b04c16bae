"""BMv2 experiment: in-network aggregation of incasts and shuffles on BCube and fat-tree (the papers' word count, on
BMv2).

For each fabric (BCube(4,1), BCube(3,2), fat-tree k=4), one emulation (:class:`dcnlab.emu.network.FabricNetwork`:
a BMv2 process per server and switch, a Mininet host per host) runs a word-count job per algorithm, one
after the other, each installed by :class:`dcnlab.controller.aggregation.dataplane.AggregationDataplane` and removed
when it ends:

* an **incast** (m senders, one receiver) with IRS, M2 and unicast-based trees and without aggregation;
* a **shuffle** (m senders, n receivers) with SRS, incast-based (the union of IRS trees), M2, unicast-based
  subgraphs and without aggregation.

On BCube(4,1) the members are the papers' example (senders v2 v5 v9 v10 v11 v14; receiver v0; SRS group
{v0, v3, v8}, 003 Figs. 2-3); elsewhere they are drawn with the seed. On the fat-tree (switch-centric: P4
switches aggregate, :mod:`dcnlab.controller.aggregation.fattree` defines the trees) the algorithms are up/down,
unicast-based and KMB, and no aggregation.

**The job** (:mod:`dcnlab.traffic.aggregation_agent`). Every sender counts words of its own synthetic corpus (a
Zipf(1.2) draw of ``words`` words over ``n x keys`` keys, seeded per sender); receiver j owns keys
``j*keys .. (j+1)*keys-1``, 16 counts per chunk. Senders send as fast as a window of ``slots`` chunks per
tree allows (or pace at ``rate_pps``); the receivers acknowledge and ask for lost chunks after ``rto``.
Every link is shaped to ``bw_mbps`` (0.25 Mbit/s, about 265 chunks/s, tc htb on both ends): the papers'
setting, where links and not the switches' CPUs limit a job, so completion times follow the bytes on the
busiest link (reported with each job). Each fabric first runs one small job that is not reported (the first
job after bring-up is slower: lazy set-up in the switches and agents). (Unshaped,
BMv2's per-packet CPU cost is the bottleneck on this 2-core machine, and an aggregating node, whose action
does more per packet than forwarding, is no faster than the no-aggregation baseline.)

**What is checked and reported**, per job:

* *exact*: every receiver's result equals the saturating sum of the senders' counts (computed here);
* *link bytes*: the aggregation bytes that the switches counted on each directed link (``agg_port_out`` at
  the sending node, ``agg_port_in`` at the receiving node for links from hosts), summed over the links the
  model counts (the trees' hops and SRS forwarding hops), beside the model's cost for the same trees in
  bytes (``cost x chunks x 118``). The switches count the trees' own traffic (``retx`` 0) apart from loss
  recovery (``retx`` 1; p4src/aggregation.p4): the trees' traffic must agree with the model within
  ``tolerance`` (5%), and the total (recovery included) is reported beside it, with the frames lost between
  two switches. Each directed link is also compared one by one with the compiled prediction (``link
  mismatches``). The hosts' own links and the control traffic (acknowledgements: all port counters minus
  aggregation bytes) are reported apart;
* *savings* against no aggregation, measured and model; *completion time*: from the common start to the
  last receiver's last chunk.

``bench_dataplane`` (``dcnlab bench aggregation``) measures one BMv2 node: a host sends 118-byte
frames into its BCube server, which sends them straight back to the host port (the host drops them, they are
addressed to another MAC): plain unicast forwarding, then aggregation chunks (fan-in 2: two contributions per
chunk; fan-in 1: every chunk completes its slot and goes out). The rate of each is frames per CPU second of
the server's BMv2 process (its /proc CPU time over the frames its counters saw), which a shared machine's
load does not distort the way wall-clock saturation rates are distorted.

Decisions: the switches' egress queues
are deepened to ``queue_depth`` packets over Thrift (BMv2's default of 64 drops paced bursts of several
senders, which is a congestion test, not this one); senders start spread over one sending period; a job's
slots at each node equal its window; jobs run one at a time, so every counter delta belongs to one job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from dcnlab.reproduce.aggregation.bmv2_results import (
    DEFAULT_OUT,
    PAPER_GROUP,
    PAPER_RECEIVER,
    PAPER_SENDERS,
    QUICK,
    SPECS,
    EmuConfig,
    EmulationError,
    EmuResult,
    FabricResult,
    JobResult,
    Scenario,
    _secs,
    emulation_note,
    plot,
    scenarios,
    write_outputs,
)

log = logging.getLogger(__name__)
Progress = Callable[[str], None]


# -- results -------------------------------------------------------------------------------------------------------


# -- data --------------------------------------------------------------------------------------------------------
def word_counts(hosts: Sequence[str], partitions: int, keys: int, words: int, seed: int) -> dict[str, list[int]]:
    """Each sender host's word counts over ``partitions x keys`` keys (a seeded Zipf(1.2) corpus)."""
    import numpy as np

    out = {}
    space = partitions * keys
    for i, h in enumerate(hosts):
        rng = np.random.default_rng([seed, i])
        ranks = rng.zipf(1.2, size=words)
        ranks = ranks[ranks <= space] - 1
        perm = rng.permutation(space)        # which word is frequent differs per sender
        out[h] = np.bincount(perm[ranks], minlength=space).astype(int).tolist()
    return out


def saturating_sum(parts: Sequence[Sequence[int]]) -> tuple[list[int], list[int]]:
    """Lane-wise min(sum, 2^32-1) and the chunks with a lane at that ceiling (the overflow flag)."""
    from dcnlab.traffic.aggregation_agent import MAX_VALUE, VALUES

    total = [sum(col) for col in zip(*parts)]
    return [min(v, MAX_VALUE) for v in total], sorted({i // VALUES for i, v in enumerate(total) if v >= MAX_VALUE})


# -- one job on a running fabric -------------------------------------------------------------------------------
START_LEAD_S = 0.5
"""Seconds from building a job's requests to its common start: every sender's request must reach its agent
before it (``JobResult.start_skew_s`` reports how late the last sender began)."""


def _call_grouped(net: Any, requests: Sequence[tuple[str, dict]]) -> list[dict]:
    """Submit every (host, request) at once, then collect the replies in order (agents work concurrently)."""
    for host, req in requests:
        net.agent(host).submit(req)
    return [net.agent(host).result() for host, _ in requests]


def read_agg_counters(net: Any) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], int]]:
    """Bytes per (switch, 2 * port + retx) of ``agg_port_in`` and ``agg_port_out``."""
    from dcnlab.controller.aggregation.dataplane import (
        PORT_IN_COUNTER,
        PORT_OUT_COUNTER,
    )

    out = []
    for name in (PORT_IN_COUNTER, PORT_OUT_COUNTER):
        cells = net.controller.read_counters(name)
        out.append({(sw, c.index): c.bytes for sw, cs in cells.items() for c in cs})
    return out[0], out[1]


def directed_bytes(fabric: Any, agg_in: dict, agg_out: dict, retx: int) -> dict[tuple[str, str], int]:
    """Aggregation bytes (with this retx bit) per directed link: counted where the sending node sent them,
    or where a node got them from a host."""
    out: dict[tuple[str, str], int] = {}
    for link in fabric.links():
        for a, pa, b, pb in ((link.a, link.a_port, link.b, link.b_port), (link.b, link.b_port, link.a, link.a_port)):
            out[(a, b)] = agg_out.get((a, 2 * pa + retx), 0) if fabric.node(a).forwards else \
                agg_in.get((b, 2 * pb + retx), 0)
    return out


def fabric_losses(fabric: Any, agg_in: dict, agg_out: dict, frame: int) -> int:
    """Frames a forwarding node sent that the next one never counted."""
    lost = 0
    for link in fabric.links():
        if fabric.node(link.a).forwards and fabric.node(link.b).forwards:
            for a, pa, b, pb in ((link.a, link.a_port, link.b, link.b_port),
                                 (link.b, link.b_port, link.a, link.a_port)):
                for r in (0, 1):
                    lost += agg_out.get((a, 2 * pa + r), 0) - agg_in.get((b, 2 * pb + r), 0)
    return lost // frame


def _busiest(first: dict[tuple[str, str], int], again: dict[tuple[str, str], int]) -> tuple[str, int]:
    load = {k: v + again.get(k, 0) for k, v in first.items()}
    a, b = max(load, key=lambda k: (load[k], k))
    return f"{a}->{b}", load[(a, b)]


def _total_bytes(fabric: Any, snap: Any) -> dict[tuple[str, str], int]:
    from dcnlab.traffic import measure

    out: dict[tuple[str, str], int] = {}
    for ll in measure.link_loads(fabric, snap):
        out[(ll.link.a, ll.link.b)] = ll.a_to_b.bytes
        out[(ll.link.b, ll.link.a)] = ll.b_to_a.bytes
    return out


def _compile(dp: Any, fabric: Any, sc: Scenario, algo: str, cfg: EmuConfig) -> tuple[Any, float]:
    """Install the job; return it and the model's cost of its trees."""
    from dcnlab.controller.aggregation import incast_tree, shuffle_plan

    if sc.kind == "incast":
        receiver = sc.receivers[0]
        if algo == "none":
            tree = incast_tree(fabric, receiver, list(sc.senders), "unicast", seed=cfg.seed)
            model = incast_tree(fabric, receiver, list(sc.senders), "unicast", delta=1.0, seed=cfg.seed).cost
            return dp.incast(tree, cfg.slots, aggregate=False), model
        tree = incast_tree(fabric, receiver, list(sc.senders), algo, seed=cfg.seed)
        return dp.incast(tree, cfg.slots), tree.cost
    plan = shuffle_plan(fabric, list(sc.receivers), list(sc.senders), algo, seed=cfg.seed)
    return dp.shuffle(plan, cfg.slots), plan.cost


def run_job(net: Any, dp: Any, sc: Scenario, algo: str, cfg: EmuConfig, say: Progress) -> JobResult:
    from dcnlab.controller.aggregation.waiting import link_seconds
    from dcnlab.traffic import measure
    from dcnlab.traffic.aggregation_agent import FRAME_SIZE, chunk_frame, chunks_for

    fabric = net.fabric
    program, model_cost = _compile(dp, fabric, sc, algo, cfg)
    try:
        chunks = chunks_for(cfg.keys)
        senders = sorted({h for t in program.trees for h in t.contributors})
        data = word_counts(senders, len(program.trees), cfg.keys, cfg.words, cfg.seed)
        # the counters are read before the common start is fixed: reading 112 switches takes longer than the
        # start's lead, and senders whose request came after the start began late (a saving measured far below the model's: waiting.py)
        in0, out0 = read_agg_counters(net)
        snap0 = measure.snapshot(net.controller)
        start_at = time.time() + START_LEAD_S
        recv_reqs: list[tuple[str, dict]] = []
        send_reqs: list[tuple[str, dict]] = []
        want: dict[int, tuple[list[int], list[int]]] = {}
        streams = sum(len(t.contributors) for t in program.trees)
        for t in program.trees:
            part = {h: data[h][t.tree * cfg.keys:(t.tree + 1) * cfg.keys] for h in t.contributors}
            want[t.tree] = saturating_sum(list(part.values()))
            dst = net.addr(t.receiver_host)
            recv_reqs.append((t.receiver_host, {
                "cmd": "aggregation.recv", "job": program.job, "tree": t.tree, "length": cfg.keys,
                "host_inputs": t.host_inputs, "window": cfg.slots, "rto": cfg.rto, "start_at": start_at,
                "senders": [net.addr(h).ip for h, _ in sorted(t.contributors.items(), key=lambda kv: kv[1])]}))
            for h, cid in sorted(t.contributors.items()):
                src = net.addr(h)
                # senders start spread over one sending period, so that their chunks do not reach the
                # aggregating nodes in synchronised bursts
                phase = len(send_reqs) / (streams * cfg.rate_pps) if cfg.rate_pps else 0.0
                send_reqs.append((h, {
                    "cmd": "aggregation.send", "job": program.job, "tree": t.tree, "contributor": cid,
                    "values": part[h], "window": cfg.slots, "rate_pps": cfg.rate_pps, "iface": src.iface,
                    "frame": chunk_frame(src.mac, dst.mac, src.ip, dst.ip).hex(), "start_at": start_at + phase}))
        _call_grouped(net, recv_reqs + send_reqs)
        receivers = sorted({h for h, _ in recv_reqs})
        waits = _call_grouped(net, [(h, {"cmd": "aggregation.wait", "job": program.job, "timeout": cfg.timeout})
                                    for h in receivers])
        time.sleep(0.3)   # the last acknowledgements and duplicates drain
        reports = [r for rep in _call_grouped(net, [(h, {"cmd": "aggregation.stop", "job": program.job})
                                                    for h in sorted(set(receivers) | set(senders))])
                   for r in rep["reports"]]
        in1, out1 = read_agg_counters(net)
        snap1 = measure.snapshot(net.controller)
    finally:
        dp.remove(program.job)
    if not all(w["complete"] for w in waits):
        log.warning("job %d (%s %s) did not complete in %.0f s", program.job, sc.kind, algo, cfg.timeout)
    recv = {r["tree"]: r for r in reports if r["role"] == "receiver"}
    sends = [r for r in reports if r["role"] == "sender"]
    exact = all(t.tree in recv and recv[t.tree]["complete"] and recv[t.tree]["result"] == want[t.tree][0]
                and recv[t.tree]["overflow_chunks"] == want[t.tree][1] for t in program.trees)
    diff_in = {k: v - in0.get(k, 0) for k, v in in1.items()}
    diff_out = {k: v - out0.get(k, 0) for k, v in out1.items()}
    got = directed_bytes(fabric, diff_in, diff_out, 0)
    again = directed_bytes(fabric, diff_in, diff_out, 1)
    total = _total_bytes(fabric, snap1 - snap0)
    units = program.link_units()
    model_links = program.model_links()
    per_chunk = chunks * FRAME_SIZE
    predicted = {k: v * per_chunk for k, v in units.items()}
    host_links = {k for k in units if k not in model_links}
    done = [r["done_at"] for r in recv.values() if r["complete"]]
    result = JobResult(
        fabric.spec, sc.kind, algo, sc.receivers, sc.senders, chunks, exact, float(model_cost),
        int(round(model_cost * per_chunk)), sum(got.get(k, 0) for k in model_links),
        sum(again.get(k, 0) for k in model_links), fabric_losses(fabric, diff_in, diff_out, FRAME_SIZE),
        sum(predicted[k] for k in host_links), sum(got.get(k, 0) for k in host_links),
        sum(v + again[k] for k, v in got.items() if k not in units),
        sum(total.get(k, 0) - got.get(k, 0) - again.get(k, 0) for k in model_links),
        sum(1 for k in set(got) | set(predicted) if got.get(k, 0) != predicted.get(k, 0)),
        (max(done) - start_at) if len(done) == len(program.trees) else None,
        *_busiest(got, again),
        sum(s["sent"] for s in sends), sum(s["retransmitted"] for s in sends),
        sum(r["requests"] for r in recv.values()), sum(r["duplicates"] for r in recv.values()),
        len(program.rules()), len({a for t in program.trees for a in t.aggregators}),
        busiest_units=max(units.values(), default=0),
        start_skew_s=max((s["first_sent"] - start_at for s in sends if s["first_sent"]), default=0.0),
        model_completion_s=link_seconds(units, chunks, FRAME_SIZE, cfg.bw_mbps) if cfg.bw_mbps else 0.0)
    say(f"{fabric.spec} {sc.kind} {algo}: exact {result.exact}, {result.measured_bytes} B measured vs "
        f"{result.model_bytes} B model ({100 * result.error:+.2f}%; with recovery {100 * result.total_error:+.2f}%), "
        f"{_secs(result.completion_s)} s (model {result.model_completion_s:.2f} s), {result.retransmitted} resent, "
        f"{result.fabric_losses} lost between switches")
    return result


# -- a fabric, the whole experiment ---------------------------------------------------------------------------------
def run_fabric(spec: str, cfg: EmuConfig, say: Progress) -> FabricResult:
    from dcnlab.controller.aggregation.dataplane import AggregationDataplane
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.p4src.sizing import sizing_for
    from dcnlab.topos.spec import parse_spec

    fabric = parse_spec(spec)
    scs = scenarios(fabric, cfg)
    net = FabricNetwork(fabric, NetOptions(bw_mbps=cfg.bw_mbps, queue_depth=cfg.queue_depth), progress=say)
    jobs: list[JobResult] = []
    with net:
        dp = AggregationDataplane(fabric, net.controller, capacity=sizing_for(fabric).AGG_SLOTS)
        run_job(net, dp, scs[0], scs[0].algorithms[0], replace(cfg, keys=64), lambda m: None)   # warm-up
        for sc in scs:
            for algo in sc.algorithms:
                jobs.append(run_job(net, dp, sc, algo, cfg, say))
        net.check_switches()
        bringup = net.timings.total()
    return FabricResult(spec, len(net.switches), fabric.num_hosts(), bringup, tuple(jobs))


def run_experiment(cfg: EmuConfig, progress: Progress | None = None) -> EmuResult:
    say = progress or (lambda m: log.info("%s", m))
    cfg.validate()
    t0 = time.perf_counter()
    fabrics = tuple(run_fabric(spec, cfg, say) for spec in cfg.specs)
    return EmuResult(cfg, fabrics, time.perf_counter() - t0)


__all__ = ["DEFAULT_OUT", "PAPER_GROUP", "PAPER_RECEIVER", "PAPER_SENDERS", "QUICK", "SPECS", "EmuConfig", "EmuResult",
           "EmulationError", "FabricResult", "JobResult", "Scenario", "emulation_note", "plot", "run_experiment",
           "run_fabric", "run_job", "scenarios", "write_outputs"]
