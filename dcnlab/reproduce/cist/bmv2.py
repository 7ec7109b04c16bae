"""BMv2 experiment: broadcast over CISTs on Dragonfly survives failures (Dragonfly CISTs (Bian et al.) on
BMv2; the paper has no experiments).

One emulated Dragonfly (BMv2 switches, Mininet hosts; :class:`dcnlab.emu.network.FabricNetwork`) gets the k = ⌊a/2⌋
CISTs of :func:`dcnlab.controller.cist.plan_cists` as broadcast trees 0..k-1 and, for comparison, one BFS spanning
tree of the whole switch graph (:func:`dcnlab.controller.cist.failures.single_tree`) as tree 255
(:data:`dcnlab.controller.cist.dataplane.BASELINE_TREE`), all installed by
:class:`dcnlab.controller.cist.dataplane.BroadcastDataplane`. Every sending host runs two *streams* side by side, so
both schemes see exactly the same failures at the same moments: one copy of every broadcast on each of the k
CISTs (flow 1 or 3), and one copy on the single tree (flow 2 or 4). Receivers deduplicate by (source,
sequence) (:mod:`dcnlab.traffic.cist_agent`).

**Phases.** Each phase has a failure set F and two traffic windows:

* *during* (flows 1, 2): every source sends ``during`` broadcasts at ``rate_pps``; ``inject_at`` seconds in,
  F is injected while the traffic runs. A switch fails by SIGKILL of its BMv2 process
  (``net.switches[name].signal(9)``), so it neither forwards nor delivers and loses what it had queued. A link
  fails by dropping every frame sent on either end (:func:`dcnlab.emu.faults.cut`, ``pfifo limit 0`` as the
  root qdisc of both interfaces; repaired by deleting it): neither end's frames cross the link, and copies
  replicated to it are lost. Nothing tells the switches: broadcast over CISTs needs no reaction, which is
  the point of the trees.

  *Why not* ``ip -n <netns> link set <intf> down``: BMv2's one receive thread blocks in ``pcap_next_ex`` on an
  interface that went down, so the switch at each end stops receiving on *every* port (see
  :mod:`dcnlab.emu.faults`). *Why not* ``simple_switch_CLI port_remove`` (used at first): BMv2 1.15's
  ``bmi_port_interface_remove`` takes the port manager's write lock and then waits for the select thread to
  acknowledge, which under traffic can wait forever (seen here once in ten runs: a CLI hung for 60 s;
  upstream p4lang/behavioral-model#1043 is about port deletion in this code).
* *after* (flows 3, 4): once F is in place, every source sends ``after`` more broadcasts. A host pair counts
  as delivered if all of them arrived, lost if none did (anything in between is reported as *partial*: the
  failure model has no such outcome, so it would mean congestion loss).

Then F is repaired (ports re-added; killed switches restarted with :meth:`FabricNetwork.restart_switch`, which
re-pushes the pipeline and the remembered state, trees included) and the next phase starts.

The failure sets, per failure kind (switch, link): none; then f = 1..k elements of the k that
:func:`dcnlab.controller.cist.failures.adversarial_failures` chooses to cut one pair in every tree (one element per
tree: f < k cuts f of that pair's k tree paths, f = k all of them); and, on full runs, a last phase without
failures after all the repairs.

**What is counted.** Ordered pairs (source host, destination host) of distinct hosts whose switches work:
pairs with an endpoint on a failed switch are left out, exactly as in the model (CISTs guarantee delivery under failures other
than the endpoints; hosts are single-homed). Checks:

* *exactly once*: without failures every counted pair delivers every broadcast of both windows once after
  deduplication, and every tree brings exactly one copy of each (no loops, no missing branches);
* *survives k-1*: with f <= k-1 failures, no broadcast of either window is lost on the CISTs;
* *agrees with the model*: in the *after* window the delivered pairs of both schemes are exactly the pairs
  :func:`dcnlab.controller.cist.failures.intact_matrix` predicts (host pair on switches s != d: delivered iff some
  tree's s–d path avoids F; hosts on one switch: delivered);
* with f = k, what is lost is reported, next to the single tree under the same failures.

Decisions:

* Flows are numbered per phase (4·phase + 1..4), so a copy still queued from an earlier phase is never counted.
* Load. A broadcast costs about (k+1)·3N BMv2 pipeline runs (N switches), and the 2 cores are shared with
  other runs: measured on Dragonfly(4,2), 36 sources at 1 broadcast/s lost copies between switches (packets
  counted by one switch's egress counter never reached the next switch's ingress counter), 36 sources at
  0.4/s lost none; 1024-deep egress queues (``queue_depth``) did not help, the copies were not lost in the
  queues. The default rates keep below that (Dragonfly(4,2): 0.5/s; Dragonfly(6,2), 3x the cost per
  broadcast: 0.1/s), senders start staggered over one sending period, and the receivers are read only when
  no copy arrived for two polls (a busy fabric delays copies by seconds). ``rate_pps`` is per source and
  counts broadcasts (each k + 1 frames).
* Link failures are one ``tc -batch`` for all ends, so they land as promptly as a switch kill.
* The single tree is rooted at the first switch, s0_0, as in the model's baseline.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dcnlab.reproduce.cist.bmv2_results import (
    LARGE,
    MISMATCHES_LISTED,
    SMALL,
    EmuConfig,
    EmulationError,
    EmuResult,
    FailureCase,
    PhaseResult,
    SchemeOutcome,
    failure_cases,
    plot,
    quick,
    slug,
    write_outputs,
)
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

FLOW_CIST_DURING, FLOW_SINGLE_DURING, FLOW_CIST_AFTER, FLOW_SINGLE_AFTER = 1, 2, 3, 4
Progress = Callable[[str], None]


# -- failure sets --------------------------------------------------------------------------------------------


# -- results -------------------------------------------------------------------------------------------------


# -- failure injection ---------------------------------------------------------------------------------------
class _ExpectedDeaths(logging.Filter):
    """Drops the network monitor's "switch died" error for switches the experiment killed on purpose, and
    counts the kills so that any other death is reported."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        """Switches down on purpose right now."""
        self.kills: Counter[str] = Counter()

    def unexpected(self, failures: Sequence[Any]) -> list[Any]:
        """The monitor's :class:`dcnlab.emu.network.SwitchFailure` records beyond the kills."""
        seen: Counter[str] = Counter()
        out = []
        for f in failures:
            seen[f.switch] += 1
            if seen[f.switch] > self.kills[f.switch]:
                out.append(f)
        return out

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith("switch %s died")
                    and isinstance(record.args, tuple) and record.args and record.args[0] in self.names)


def _link_ends(graph: Any, links: Sequence[tuple[str, str]]) -> list[tuple[str, int]]:
    """(switch, port) of both ends of every link."""
    out = []
    for u, v in links:
        iu, iv = graph.index[u], graph.index[v]
        out += [(u, graph.port[(iu, iv)]), (v, graph.port[(iv, iu)])]
    return out


def set_links(net: Any, graph: Any, links: Sequence[tuple[str, str]], up: bool) -> None:
    """Fail (``up=False``) or repair links: every frame sent on either end is dropped (:func:`dcnlab.emu.faults.cut`,
    ``drop``), all ends in one ``tc -batch``."""
    from dcnlab.emu import faults
    from dcnlab.emu.network import intf_name

    intfs = [intf_name(sw, port) for sw, port in _link_ends(graph, links)]
    if not intfs:
        return
    if up:
        faults.restore(net.netns, intfs)
    else:
        faults.cut(net.netns, intfs, "drop")


def inject(net: Any, graph: Any, failures: Any, deaths: _ExpectedDeaths) -> None:
    """Fail links (both ends drop everything they send) and switches (SIGKILL, waited for)."""
    set_links(net, graph, sorted(failures.links), up=False)
    deaths.names.update(failures.switches)
    deaths.kills.update(failures.switches)
    for s in failures.switches:
        net.switches[s].signal(9)
    for s in failures.switches:
        net.switches[s].proc.wait(timeout=10)


def repair(net: Any, graph: Any, failures: Any, deaths: _ExpectedDeaths) -> None:
    """Links back; killed switches restarted with their pipeline and state re-pushed."""
    set_links(net, graph, sorted(failures.links), up=True)
    for s in sorted(failures.switches):
        net.restart_switch(s, kill=False)
        deaths.names.discard(s)


# -- the experiment ------------------------------------------------------------------------------------------
@dataclass
class _Run:
    """Everything a phase needs (mutable: one per experiment)."""

    net: Any
    fabric: Any
    graph: Any
    plan: Any
    baseline: Any
    cfg: EmuConfig
    senders: list[str]
    frames: dict[str, bytes]
    deaths: _ExpectedDeaths
    frames_sent: int = 0


def _submit_window(run: _Run, senders: list[str], flows: tuple[int, int], seq0: int, count: int) -> list[Any]:
    from dcnlab.controller.cist.dataplane import BASELINE_TREE
    from dcnlab.traffic.cist_agent import send_request

    cist_trees = [t.tree_id for t in run.plan.trees]
    rate = run.cfg.rate_pps
    agents = []
    for i, h in enumerate(senders):
        a = run.net.agent(h)
        a.submit(send_request(a.host.iface, run.frames[h], [(flows[0], cist_trees), (flows[1], [BASELINE_TREE])],
                              count, rate, seq0, offset_s=i / len(senders) / rate))
        agents.append(a)
    return agents


def _collect_sends(run: _Run, agents: list[Any]) -> None:
    for a in agents:
        run.frames_sent += a.result()["frames"]


def _outcome(run: _Run, reports: dict[str, dict], alive: set[str], failures: Any, trees: list[Any],
             flows: tuple[int, int], counts: tuple[int, int], tree_ids: Sequence[int]) -> SchemeOutcome:
    """Compare one scheme's receiver reports with the failure model."""
    from dcnlab.controller.cist.failures import intact_matrix

    fabric, graph = run.fabric, run.graph
    matrix = intact_matrix(graph, trees, failures)
    node = {h.name: h.node for h in fabric.hosts()}
    ip_of = {h.name: h.ip for h in fabric.hosts()}
    senders = [s for s in run.senders if s in alive]
    receivers = sorted(alive)
    pairs = during_lost = hit = after_ok = partial = model_ok = dups = extra = 0
    exact = True
    mismatches: list[tuple[str, str, str]] = []
    examples: list[tuple[str, str, str]] = []
    count = unexplained = 0
    for d in receivers:
        srcs = reports[d]["sources"]
        for s in senders:
            if s == d:
                continue
            pairs += 1
            during = srcs.get(ip_of[s], {}).get(str(flows[0]))
            after = srcs.get(ip_of[s], {}).get(str(flows[1]))
            got_d = during["delivered"] if during else 0
            got_a = after["delivered"] if after else 0
            during_lost += counts[0] - got_d
            hit += got_d < counts[0]
            for rep, n in ((during, counts[0]), (after, counts[1])):
                per_tree = rep["per_tree"] if rep else {}
                dups += rep["dups"] if rep else 0
                extra += sum(max(0, c - n) for c in per_tree.values())
                if rep is None or rep["delivered"] != n or any(per_tree.get(str(t), 0) != n for t in tree_ids):
                    exact = False
            si, di = graph.index[node[s]], graph.index[node[d]]
            predicted = bool(si == di or matrix[si, di] > 0)
            model_ok += predicted
            if got_d < counts[0]:
                unexplained += (counts[0] - got_d) if predicted else 0
                if len(examples) < MISMATCHES_LISTED:
                    have = {x for lo, hi in (during or {}).get("runs", []) for x in range(lo, hi + 1)}
                    examples.append((s, d, f"missed seq {sorted(set(range(counts[0])) - have)}, copies per tree "
                                           f"{(during or {}).get('per_tree', {})}, intact trees under the failures "
                                           f"{int(matrix[si, di]) if si != di else len(trees)}"))
            if got_a == counts[1]:
                after_ok += 1
                emulated = True
            elif got_a == 0:
                emulated = False
            else:
                partial += 1
                emulated = None
            if emulated is not predicted:
                count += 1
                if len(mismatches) < MISMATCHES_LISTED:
                    what = f"emulated {got_a}/{counts[1]} after, model says {'delivered' if predicted else 'lost'}"
                    mismatches.append((s, d, what))
    return SchemeOutcome(pairs, pairs * counts[0], during_lost, hit, after_ok, partial, model_ok, tuple(mismatches),
                         count, dups, extra, exact, unexplained, tuple(examples))


def _wait_quiet(handles: list[Any], settle: float, settle_max: float, poll: float = 0.3) -> float:
    """Sleep ``settle``, then until the receivers' copy count stops growing for two polls (at most
    ``settle_max`` seconds in all); returns the time waited."""
    from dcnlab.traffic.hostctl import call_all

    t0 = time.perf_counter()
    time.sleep(settle)
    history: list[int] = []
    while time.perf_counter() - t0 < settle_max:
        history.append(sum(r["copies"] for r in call_all(handles, [{"cmd": "cist.count"}] * len(handles))))
        if len(history) >= 3 and history[-1] == history[-3]:   # nothing new for two polls
            break
        time.sleep(poll)
    else:
        log.warning("receivers still busy after %.0f s; reading them anyway", settle_max)
    return time.perf_counter() - t0


def _phase(run: _Run, index: int, case: FailureCase, progress: Progress) -> PhaseResult:
    from dcnlab.controller.cist.dataplane import BASELINE_TREE
    from dcnlab.traffic.hostctl import call_all

    t0 = time.perf_counter()
    net, cfg = run.net, run.cfg
    # flows are per phase, so that a copy still queued from an earlier phase is never counted here
    f_cd, f_sd, f_ca, f_sa = (4 * index + f for f in (FLOW_CIST_DURING, FLOW_SINGLE_DURING, FLOW_CIST_AFTER,
                                                      FLOW_SINGLE_AFTER))
    hosts = list(net.agents)
    handles = [net.agent(h) for h in hosts]
    call_all(handles, [{"cmd": "cist.recv_start"}] * len(handles))
    injected_at: float | None = None
    try:
        t_window = time.perf_counter()
        agents = _submit_window(run, run.senders, (f_cd, f_sd), 0, cfg.during)
        if case.f:
            time.sleep(max(0.0, cfg.inject_at - (time.perf_counter() - t_window)))
            inject(net, run.graph, case.failures, run.deaths)
            injected_at = time.perf_counter() - t_window
        _collect_sends(run, agents)
        _wait_quiet(handles, cfg.settle, cfg.settle_max)
        agents = _submit_window(run, run.senders, (f_ca, f_sa), cfg.during, cfg.after)
        _collect_sends(run, agents)
        _wait_quiet(handles, cfg.settle, cfg.settle_max)
    finally:
        ip_of = {h.name: h.ip for h in run.fabric.hosts()}
        expect = [[ip_of[s], f, n] for s in run.senders
                  for f, n in ((f_cd, cfg.during), (f_sd, cfg.during), (f_ca, cfg.after), (f_sa, cfg.after))]
        replies = call_all(handles, [{"cmd": "cist.recv_stop", "expect": expect, "runs": True}] * len(handles))
    reports = dict(zip(hosts, replies))
    dead = set(case.failures.switches)
    alive = {h.name for h in run.fabric.hosts() if h.node not in dead}
    counts = (cfg.during, cfg.after)
    cist = _outcome(run, reports, alive, case.failures, list(run.plan.trees), (f_cd, f_ca), counts,
                    [t.tree_id for t in run.plan.trees])
    single = _outcome(run, reports, alive, case.failures, [run.baseline], (f_sd, f_sa), counts, [BASELINE_TREE])
    time.sleep(2 * net.opts.monitor_interval)   # let the monitor see every kill before counting
    unexpected = run.deaths.unexpected(list(net.failures))
    if unexpected:
        raise EmulationError("a switch died that the experiment did not kill: "
                             + "; ".join(str(f) for f in unexpected))
    if case.f:
        repair(net, run.graph, case.failures, run.deaths)
        if cfg.queue_depth is not None and case.failures.switches:   # Thrift state is not re-pushed on restart
            _set_queue_depth(net, cfg.queue_depth, sorted(case.failures.switches))
    result = PhaseResult(case.name, case.kind, tuple(str(case.failures).split(",")) if case.f else (),
                         case.cut_pair, injected_at, len(alive), cist, single, time.perf_counter() - t0)
    progress(f"phase {case.name}: CISTs lost {cist.during_lost} during, {cist.after_delivered}/{cist.pairs} pairs "
             f"after (model {cist.model_delivered}); single tree {single.after_delivered}/{single.pairs} (model "
             f"{single.model_delivered}); {result.seconds:.1f} s")
    return result


def _set_queue_depth(net: Any, depth: int, names: Sequence[str] | None = None, workers: int = 8) -> None:
    """Deep egress queues on every port of the switches (all by default), over Thrift, a few CLIs at a time."""
    from concurrent.futures import ThreadPoolExecutor

    names = list(names) if names is not None else list(net.switches)
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(names)))) as pool:
        jobs = [pool.submit(net.controller.thrift(n).set_queues, depth, None, sorted(net.switches[n].cfg.ports))
                for n in names]
        for job in jobs:
            job.result()


def _even_sample(items: list[str], n: int | None) -> list[str]:
    if n is None or n >= len(items):
        return items
    return [items[(i * len(items)) // n] for i in range(n)]


def run_experiment(cfg: EmuConfig, progress: Progress | None = None, options: Any = None) -> EmuResult:
    """Bring the fabric up, install the trees, run every phase, tear down (also on errors)."""
    from dcnlab.controller.cist import plan_cists, single_tree
    from dcnlab.controller.cist.dataplane import BASELINE_TREE, BroadcastDataplane
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.topos.dragonfly import Dragonfly
    from dcnlab.topos.spec import parse_spec
    from dcnlab.traffic.cist_agent import broadcast_frame

    say = progress or (lambda m: log.info("%s", m))
    cfg.validate()
    fabric = parse_spec(cfg.spec)
    if not isinstance(fabric, Dragonfly):
        raise UserError(f"cist emulation needs a Dragonfly fabric, got {cfg.spec}")
    if fabric.p < 1:
        raise UserError(f"cist emulation needs hosts: dragonfly parameter p={fabric.p}; valid: p >= 1")
    t_start = time.perf_counter()
    plan = plan_cists(fabric)
    baseline = single_tree(plan.graph)
    max_f = cfg.max_failures if cfg.max_failures is not None else plan.k
    cases = failure_cases(plan.graph, plan.trees, cfg.kinds, max_f, cfg.seed, cfg.restored_check)
    hosts = list(fabric.hosts())
    senders = _even_sample([h.name for h in hosts], cfg.sources)
    frames = {h.name: broadcast_frame(h.mac, h.ip, cfg.size) for h in hosts if h.name in senders}
    deaths = _ExpectedDeaths()
    net_log = logging.getLogger("dcnlab.emu.network")
    net_log.addFilter(deaths)
    net = FabricNetwork(fabric, options or NetOptions(), progress=say)
    try:
        net.start()
        bringup = net.timings.total()
        dp = BroadcastDataplane(net.controller, fabric, plan.graph)
        stats = dp.install({t.tree_id: t for t in plan.trees} | {BASELINE_TREE: baseline})
        say(f"installed {plan.k} CISTs + single tree: {stats.groups} PRE groups, {stats.entries} entries "
            f"in {stats.seconds:.2f} s")
        run = _Run(net, fabric, plan.graph, plan, baseline, cfg, senders, frames, deaths)
        if cfg.queue_depth is not None:
            _set_queue_depth(net, cfg.queue_depth)
        phases = tuple(_phase(run, i, case, say) for i, case in enumerate(cases))
    finally:
        net.stop()
        net_log.removeFilter(deaths)
    return EmuResult(fabric.spec, len(plan.graph), len(hosts), len(senders), plan.k, tuple(plan.diameters),
                     baseline.root, baseline.diameter, cfg, phases, bringup, stats.seconds,
                     time.perf_counter() - t_start, run.frames_sent, tuple(senders))


__all__ = ["LARGE", "SMALL", "EmuConfig", "EmuResult", "EmulationError", "FailureCase", "PhaseResult", "SchemeOutcome",
           "failure_cases", "inject", "plot", "quick", "repair", "run_experiment", "set_links", "slug", "write_outputs"]
