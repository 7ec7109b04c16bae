"""BMv2 experiment: C-MR4LMS multicast on a small midplane fat-tree (issue 9 §8; report 001 §3, §3.7, §3.9).

**The instance** (:data:`DEFAULT_SPEC`): ``midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=2`` — 4 CNs of 2 L0 and
2 L1 switches, 4 TNs of 2 L2 and 2 L3 switches: 32 BMv2 switches and 16 hosts, every level of the paper's
4-level model present (root rules L0, L1, L2 and L3 all occur), small enough for two busy cores.  m = 2 is the
least that allows dual trees (one spanning tree per color and plane, formula (4)).  **C = 3** colors: the
jobs' communicators need 3 MGID layers (rows, columns, the whole job), so every layer gets a single color
and groups of one layer that cross the same L0 up-links must merge (Algorithm 2) — with C = 8 the same
workload merges nothing (the summary shows the model's count for both).

**Workload: jobs.**  Jobs arrive and leave; :class:`dcnlab.controller.multicast.allocation.JobAllocator` places them
by rules 1–7 (no two jobs share a link).  A job with a process grid (1 process per terminal) creates one
group per grid line with at least two members plus one group of the whole job (its "world"); MGIDs come
from the job's own MGID layers (:mod:`dcnlab.controller.multicast.layers`: rows, columns, world; colors split
between the layers by D'Hondt) and are made unique across jobs by adding multiples of C·m/2, which keeps
each group's color and spanning tree.  Default: an 8-terminal job with a 4×2 grid, a 4-terminal job with
2×2 and two 2-terminal jobs (world only) = 14 groups.

**Timeline** (each step checked, everything through :class:`dcnlab.controller.multicast.dataplane.MulticastDataplane`):

1. bring up the fabric (no unicast routes: only tree traffic crosses the switches), install the jobs' groups
   one by one (incremental: each add writes only what changed) and tell every host agent its groups;
2. window *steady*: every member of every group sends ``count`` messages to it;
3. churn: the second-to-last job leaves (its groups are removed), a job of the same shape arrives, one
   member leaves the first job's world group and a terminal of the last job joins the new job's world
   group; then the switches' ``tree_replicate`` entries and PRE groups are read back over P4Runtime and
   compared with a from-scratch compilation of the planner's trees;
4. window *churned*: the same traffic with the new groups;
5. window *failure*: the same traffic, longer; ``cut_at`` seconds in, one link is cut and the controller is
   told, which switches the groups of the broken tree to their second tree
   (:meth:`~dcnlab.controller.multicast.dataplane.MulticastDataplane.port_down`).  The link is the link above L0 of a
   first-plane tree carried by the most groups (ties: the highest level).  **How the link is cut**
   (:data:`CUTS`): the issue's ``ip -n <netns> link set <intf> down`` on both ends (``cut="down"``, with an
   ``ip monitor link`` watcher in the run's namespace as the failure detector) turned out to freeze BMv2:
   a switch one of whose interfaces goes down stops receiving on *all* its ports (measured on this build:
   nothing forwarded until the interface is up again and a frame arrives on it; libpcap 1.10 keeps polling
   the downed interface inside ``pcap_next_ex``, and BMv2 reads every port from one loop).  That is a double
   switch failure, not a link failure.  So the default cut (``cut="drop"``) drops every frame sent on either
   end (``pfifo limit 0`` as root qdisc; the interfaces stay up, BMv2 keeps running) and the fault injector
   delivers the port-down notification a switch raises on loss of signal; the detection time is then only
   the injector's, and the *controller's* failover time is what is measured.  ``cut="down"`` remains
   available (``--cut down``): the no-loss check holds there too, because both frozen switches are
   first-plane switches, but the failed-over window is not compared with the model (the frozen switches
   also drop first-plane trees that do not use the link);
6. window *failed-over*: the same traffic again, with the link still down.

**Checks** (every window): every member delivers each message of its groups exactly once after filtering by
MGID and dropping duplicates (*exactly_once*); hosts outside a group deliver nothing of it (*outsiders*,
with the copies they filtered equal to the model's count, so the filter was exercised); in the windows
without a change of state (steady, churned, failed-over) the packets each host receives per message and the
packets on every directed link (switch port counters, :mod:`dcnlab.traffic.measure`) equal the prediction from the
same trees (:meth:`~dcnlab.controller.multicast.dataplane.MulticastDataplane.predicted_copies`), the failed-over one
with the broken tree unfed and nothing on the cut link (*counters*); the failure window loses no message
(*failover_no_loss*; with feed ``both``, the paper's, the second tree's copy covers the time until the
controller switches; with feed ``primary`` the loss is reported instead).  The controller's failover time is
reported: from the cut to the watcher's notice (*detection*), and from the notice until the edge entries were
rewritten (*failover*: compute + P4Runtime writes).

**Pacing.**  ``rate_pps`` counts messages per second per stream (a stream = one member sending to one of its
groups); senders start staggered over one period, so that BMv2's 64-packet queues never overflow.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from dcnlab.emu.faults import CUT_MODES, CutMode
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

DEFAULT_SPEC = "midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=2"
DEFAULT_COLORS = 3
COMPARE_COLORS = 8
MISMATCHES_LISTED = 20
FLOW_STEADY, FLOW_CHURNED, FLOW_FAILURE, FLOW_FAILED_OVER = 1, 2, 3, 4
CUTS = CUT_MODES
"""``drop``: every frame sent on either end is dropped (``pfifo limit 0``); the interfaces stay up, so the fault
injector delivers the port-down notification itself.  ``down``: ``ip link set <intf> down`` on both ends and an
``ip monitor link`` watcher notices; BMv2 1.15 with libpcap 1.10 stops receiving on *every* port of a switch
one of whose interfaces goes down (its packet loop stays inside ``pcap_next_ex`` on the downed interface until
the interface is up again and a frame arrives there), so this cut also freezes both end switches: a double
switch failure, survivable in dual mode only because the cut is above L0 (both ends in the first plane)."""
Progress = Callable[[str], None]


class EmulationError(UserError):
    """The emulation could not do what the experiment needs (a command failed, a switch died)."""


@dataclass(frozen=True)
class JobSpec:
    size: int
    dims: tuple[int, ...] = ()
    """Process grid (1 process per terminal, x fastest); () = only the job's world group."""


@dataclass(frozen=True)
class EmuConfig:
    spec: str = DEFAULT_SPEC
    colors: int = DEFAULT_COLORS
    variant: str = "fixed"
    feed: str = "both"
    cut: CutMode = "drop"
    """How the link is cut: see :data:`CUTS`."""
    jobs: tuple[JobSpec, ...] = (JobSpec(8, (4, 2)), JobSpec(4, (2, 2)), JobSpec(2), JobSpec(2))
    churn: bool = True
    rate_pps: float = 5.0
    """Messages per second per stream."""
    count: int = 8
    """Messages per stream in the steady, churned and failed-over windows."""
    fail_count: int = 16
    """Messages per stream in the failure window."""
    cut_at: float = 1.4
    """Seconds into the failure window when the link is cut."""
    size: int = 128
    settle: float = 0.6
    """Seconds to wait for copies in flight before reading receivers and counters."""
    detect_timeout: float = 5.0

    def validate(self) -> None:
        if not 0 < self.rate_pps <= 200:
            raise UserError(f"rate_pps={self.rate_pps} is out of range; valid: 0 < rate_pps <= 200")
        if self.count < 1 or self.fail_count < 2:
            raise UserError(f"count={self.count}, fail_count={self.fail_count}: valid: count >= 1, fail_count >= 2")
        if not 0 < self.cut_at < (self.fail_count - 1) / self.rate_pps:
            raise UserError(f"cut_at={self.cut_at} s must fall inside the failure window of "
                            f"{self.fail_count / self.rate_pps:.2f} s (fail_count / rate_pps), before its last message")
        if not self.jobs:
            raise UserError("the experiment needs at least one job")
        if self.cut not in CUTS:
            raise UserError(f"cut {self.cut!r} is unknown; valid: {', '.join(CUTS)}")
        for j in self.jobs:
            if j.dims and _prod(j.dims) != j.size:
                raise UserError(f"job of size {j.size}: grid {'x'.join(map(str, j.dims))} has {_prod(j.dims)} "
                                f"processes; valid: a grid with exactly size processes (1 per terminal)")
            if j.size < 2:
                raise UserError(f"job size {j.size}: valid: >= 2 terminals (a group needs two members)")


def _prod(dims: Sequence[int]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


QUICK = EmuConfig(count=5, fail_count=12, rate_pps=6.0, cut_at=0.9, settle=0.5)
"""A shorter run of the same instance and workload (the BMv2 test)."""


def quick(cfg: EmuConfig) -> EmuConfig:
    return replace(cfg, count=QUICK.count, fail_count=QUICK.fail_count, rate_pps=QUICK.rate_pps,
                   cut_at=QUICK.cut_at, settle=QUICK.settle)


# -- workload -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Group:
    mgid: int
    job: int
    label: str
    members: tuple[int, ...]
    """Host indices."""


def job_groups(h: Any, mapping: Any, colors: int, job: Any, spec: JobSpec, taken: set[int]) -> list[Group]:
    """The groups of one placed job: grid lines with >= 2 members, then the world group (see the module
    docstring); MGIDs from the job's own layers, unique against ``taken`` (which is updated)."""
    from dcnlab.controller.multicast.layers import DIRS, apportion, color_ranges, direction_layers, grid_lines, layer_mgids

    terms = sorted(job.terminals)
    items: list[tuple[str, tuple[str, int], tuple[int, ...]]] = []
    if spec.dims:
        for lines in grid_lines(spec.dims, 1):
            dl = direction_layers(spec.dims, lines, 1)
            for i, mem in enumerate(lines.members):
                if len(mem) >= 2:
                    items.append((f"{DIRS[lines.direction]}-line {i}", (DIRS[lines.direction], int(dl.line_layer[i])),
                                  tuple(terms[int(r)] for r in mem)))
    if all(set(m) != set(terms) for _, _, m in items):
        items.append(("world", ("world", 0), tuple(terms)))
    layers = list(dict.fromkeys(key for _, key, _ in items))
    layer_of = [layers.index(key) for _, key, _ in items]
    ranges = color_ranges(apportion([layer_of.count(i) for i in range(len(layers))], colors))
    out = []
    for (label, _, members), mgid in zip(items, layer_mgids(layer_of, ranges, mapping)):
        while mgid in taken:
            mgid += mapping.num_spts
        taken.add(mgid)
        out.append(Group(mgid, job.job, label, members))
    return out


def place_jobs(h: Any, colors: int, jobs: Sequence[JobSpec]) -> tuple[Any, list[tuple[Any, JobSpec, list[Group]]],
                                                                         set[int]]:
    """Allocate ``jobs`` in order (rules 1–7) and build their groups for ``colors`` (dual-tree mapping)."""
    from dcnlab.controller.multicast.allocation import JobAllocator, Refused
    from dcnlab.controller.multicast.planning import mapping_for

    mapping = mapping_for(h, colors, dual=True)
    alloc = JobAllocator(h)
    taken: set[int] = set()
    placed = []
    for spec in jobs:
        job = alloc.allocate(spec.size)
        if isinstance(job, Refused):
            raise UserError(f"job of {spec.size} terminals does not fit {h.fabric.spec}: {job.reason}")
        placed.append((job, spec, job_groups(h, mapping, colors, job, spec, taken)))
    return alloc, placed, taken


def merges_in_model(h: Any, colors: int, variant: str, jobs: Sequence[JobSpec]) -> int:
    """Groups sharing a (first-plane) tree with another group when the initial jobs are laid out and planned
    with ``colors`` colors (model only)."""
    from dcnlab.controller.multicast.planning import make_planner

    _, placed, _ = place_jobs(h, colors, jobs)
    planner = make_planner(h, f"cmr4lms-{variant}", colors, True, record_ops=False)
    for _, _, groups in placed:
        for g in groups:
            planner.add_group(g.mgid, g.members)
    return sum(t.tfi for t in planner.trees() if t.plane == 0 and t.tfi > 1)


# -- link failure detection ------------------------------------------------------------------------------------
_MONITOR_LINE = re.compile(r"^(?:Deleted\s+)?\d+:\s+([^:@\s]+)(?:@\S+)?:\s+<([^>]*)>")


class LinkWatcher:
    """``ip -n <netns> -o monitor link`` in the run's namespace: calls ``on_down(interface, perf_counter time)``
    the first time an interface loses its carrier (no ``LOWER_UP``)."""

    def __init__(self, net: Any, on_down: Callable[[str, float], None]) -> None:
        import os

        self.on_down = on_down
        self.down: dict[str, float] = {}
        self.errors: list[str] = []
        self.proc = subprocess.Popen(["ip", "-n", net.netns, "-o", "monitor", "link"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, **net.run.tag))
        net.run.record_process("monitor:links", self.proc.pid, "ip")
        self.thread = threading.Thread(target=self._loop, name="link-watcher", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        from dcnlab.controller.runtime.errors import RuntimeErrorBase

        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            now = time.perf_counter()
            m = _MONITOR_LINE.match(line)
            if not m or line.startswith("Deleted"):
                continue
            name, flags = m.group(1), set(m.group(2).split(","))
            if "LOWER_UP" in flags or name in self.down:
                continue
            self.down[name] = now
            try:
                self.on_down(name, now)
            except (RuntimeErrorBase, UserError, ValueError) as e:   # reported; the watcher keeps watching
                log.error("failover for %s failed: %s", name, e)
                self.errors.append(f"{name}: {type(e).__name__}: {e}")

    def close(self) -> None:
        from dcnlab.traffic.hostctl import stop_child
        stop_child(self.proc)
        self.thread.join(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def choose_cut(dp: Any) -> int:
    """The link above L0 of a first-plane tree carried by the most groups (ties: highest level, then lowest
    id); an L0 up-link only if no tree reaches above L0.  Above L0 both ends belong to the first plane only,
    which matters for the ``down`` cut (see :data:`CUTS`)."""
    h = dp.h
    load: Counter[int] = Counter()
    for t in dp.trees():
        if t.plane == 0:
            for lk in t.links:
                if lk >= h.num_hosts:
                    load[lk] += t.tfi
    if not load:
        raise UserError("no group's tree crosses a switch-to-switch link: nothing to cut")
    return max(load, key=lambda lk: (h.link_level(lk) >= 1, load[lk], h.link_level(lk), -lk))


# -- results ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WindowResult:
    name: str
    flow: int
    count: int
    streams: int
    messages: int
    """(stream, sequence number) pairs sent."""
    frames: int
    receptions: int
    """Member receptions due: every other member of the group, for every message."""
    delivered: int
    lost: int
    dups: int
    outsider_delivered: int
    """Messages a host delivered to its application for a group it is not in (must be 0)."""
    filtered: int
    """Copies hosts dropped because they are not in the group."""
    model_checked: bool
    """Whether this window compares copies and counters with the model (no state change during it)."""
    filtered_model: int = 0
    copies_model_ok: bool = True
    copy_mismatches: tuple[str, ...] = ()
    link_packets: int = 0
    link_model: int = 0
    links_compared: int = 0
    link_mismatches: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def exact(self) -> bool:
        return self.delivered == self.receptions and self.lost == 0

    @property
    def counters_ok(self) -> bool:
        return not self.model_checked or (not self.link_mismatches and self.link_packets == self.link_model)


@dataclass(frozen=True)
class Failover:
    cut: str
    """How the link was cut (:data:`CUTS`)."""
    link: tuple[str, str]
    interfaces: tuple[str, str]
    cut_at: float
    """Seconds into the failure window."""
    detected: bool
    detection_seconds: float | None
    """From the cut until the controller was told (``down``: the watcher's notice of the carrier loss;
    ``drop``: the injector's port-status notification right after the cut)."""
    failover_seconds: float | None
    """From the watcher's notice until the edge entries were rewritten."""
    compute_seconds: float | None
    write_seconds: float | None
    total_seconds: float | None
    """From the cut until traffic was switched."""
    groups: tuple[int, ...]
    trees: tuple[tuple[int, int], ...]
    updates: int
    switches: int
    rescued: int
    """Receptions in the failure window that arrived in fewer copies than before the cut (one tree's copy was
    lost; the other delivered)."""
    lost_while_switching: int
    timeline: tuple[tuple[float, float, float], ...] = ()
    """(seconds after the cut, copies received / copies the model gave before the cut, for the moved groups and
    for the others) per bin of one sending period, by message send time."""
    compute_cpu_seconds: float | None = None


@dataclass(frozen=True)
class EmuResult:
    spec: str
    switches: int
    hosts: int
    colors: int
    variant: str
    feed: str
    groups: tuple[dict, ...]
    jobs: tuple[dict, ...]
    install: tuple[dict, ...]
    churn: tuple[dict, ...]
    readback: dict
    windows: tuple[WindowResult, ...]
    failover: Failover | None
    merges: int
    merges_more_colors: int
    entries_per_port_max: int
    trees: int
    bringup_seconds: float
    total_seconds: float
    link_points: tuple[tuple[int, int], ...] = field(default=(), repr=False)
    """(model, measured) packets per directed link over the model-checked windows, for the plot."""

    def checks(self) -> dict[str, bool]:
        w = self.windows
        out = {"exactly_once": all(x.exact for x in w if x.name != "failure"),
               "outsiders": all(x.outsider_delivered == 0 for x in w)
               and all(x.filtered == x.filtered_model for x in w if x.model_checked),
               "counters": all(x.copies_model_ok and x.counters_ok for x in w if x.model_checked),
               "readback": bool(self.readback.get("ok", False))}
        if self.failover is not None:
            fail = next(x for x in w if x.name == "failure")
            out["failover_detected"] = self.failover.detected
            if self.feed == "both":
                out["failover_no_loss"] = fail.exact and fail.outsider_delivered == 0
        return out

    def ok(self) -> bool:
        return all(self.checks().values())

    def summary_lines(self) -> list[str]:
        """The run in lines of at most 100 columns: setup, updates, readback, a table of the windows,
        failover and the checks."""
        import textwrap

        from dcnlab.experiments.tables import MAX_WIDTH, Column, table

        def prose(text: str) -> list[str]:
            return textwrap.wrap(text, MAX_WIDTH, subsequent_indent=" " * 10)

        lines = prose(f"C-MR4LMS on BMv2: {self.spec} ({self.switches} switches, {self.hosts} hosts), "
                      f"C={self.colors}, {self.variant}, dual trees fed '{self.feed}'")
        lines += prose(f"workload  {len(self.jobs)} jobs at the end, {len(self.groups)} groups on {self.trees} trees "
                       f"per plane; {self.merges} groups share a tree (model with C={COMPARE_COLORS}: "
                       f"{self.merges_more_colors}); entries per port max {self.entries_per_port_max} "
                       f"(C={self.colors})")
        for name, ops in (("install", self.install), ("churn", self.churn)):
            if ops:
                ups = sum(o["updates"] for o in ops)
                sws = sum(o["switches"] for o in ops)
                ms = 1e3 * sum(o["compute_seconds"] + o["write_seconds"] for o in ops)
                kinds = Counter(o["op"] for o in ops)
                lines += prose(f"{name:<9} {', '.join(f'{n} {k}' for k, n in kinds.items())}: {ups} updates over "
                               f"{sws} switch writes, {ms:.0f} ms")
        rb = self.readback
        lines += prose(f"readback  {rb.get('entries', 0)} tree_replicate entries and {rb.get('groups', 0)} PRE "
                       f"groups on {rb.get('switches', 0)} switches equal the from-scratch compilation: {rb.get('ok')}"
                       + (f" ({'; '.join(rb.get('problems', [])[:3])})" if rb.get("problems") else ""))
        rows = []
        for x in self.windows:
            checked = x.model_checked
            rows.append((x.name, f"{x.messages}/{x.streams}", f"{x.delivered}/{x.receptions}", f"{x.lost}/{x.dups}",
                         x.outsider_delivered, f"{x.filtered} ({x.filtered_model})" if checked else f"{x.filtered}",
                         f"{x.link_packets} ({x.link_model})" if checked else "-",
                         x.links_compared if checked else "-", len(x.link_mismatches) if checked else "-"))
        lines += table([Column("window"), Column("msgs/streams", "count", ">"), Column("delivered", "of due", ">"),
                        Column("lost/dups", "count", ">"), Column("outsiders", "count", ">"),
                        Column("filtered", "model", ">"), Column("link pkts", "model", ">"),
                        Column("links", "count", ">"), Column("differ", "links", ">")], rows,
                       notes=["delivered: receptions delivered exactly once, of those due; outsiders: messages a "
                              "host outside the group delivered (must be 0); filtered: copies hosts dropped; link "
                              "pkts: packets the switches counted on the model's links ('-': a window that changes "
                              "state is not compared)."]).splitlines()
        f = self.failover
        if f is not None:
            if f.detected:
                how = "carrier loss seen by ip monitor" if f.cut == "down" else "port-down notification"
                lines.append(f"failover  cut ({f.cut}) {f.link[0]}-{f.link[1]} at {f.cut_at:.2f} s; {how} after "
                             f"{1e3 * f.detection_seconds:.1f} ms")
                lines.append(f"          controller failover {1e3 * f.failover_seconds:.1f} ms (compute "
                             f"{1e3 * f.compute_seconds:.1f} [CPU {1e3 * (f.compute_cpu_seconds or 0):.1f}], writes "
                             f"{1e3 * f.write_seconds:.1f}); cut-to-switched {1e3 * f.total_seconds:.1f} ms")
                lines += prose(f"          moved groups {list(f.groups)} ({f.updates} updates on {f.switches} "
                               f"switches); {f.rescued} receptions saved by the second tree, "
                               f"{f.lost_while_switching} lost")
            else:
                lines += prose(f"failover  cut {f.link[0]}-{f.link[1]}: NOT detected within the timeout")
        checks = self.checks()
        lines += prose("checks    " + "  ".join(f"{k}={'PASS' if v else 'FAIL'}" for k, v in checks.items()))
        lines.append(f"time      bring-up {self.bringup_seconds:.1f} s, total {self.total_seconds:.1f} s")
        return lines

    def to_json(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k not in ("windows", "failover", "link_points")}
        d["windows"] = [asdict(w) | {"exact": w.exact, "counters_ok": w.counters_ok} for w in self.windows]
        d["failover"] = asdict(self.failover) if self.failover else None
        d["link_points"] = [list(p) for p in self.link_points]
        d["checks"] = self.checks()
        d["ok"] = self.ok()
        return d


# -- the run ---------------------------------------------------------------------------------------------------
@dataclass
class _Run:
    net: Any
    fabric: Any
    dp: Any
    cfg: EmuConfig
    frames: dict[str, bytes]
    say: Progress
    joined: dict[str, set[int]] = field(default_factory=dict)
    link_points: list[tuple[int, int]] = field(default_factory=list)

    def host_name(self, x: int) -> str:
        return self.fabric.host_name(x)


def _sync_membership(run: _Run) -> None:
    """Tell every host agent the groups it is in now (joins and leaves as differences)."""
    want: dict[str, set[int]] = {name: set() for name in run.net.agents}
    for mgid, members in run.dp.groups().items():
        for x in members:
            want[run.host_name(x)].add(mgid)
    handles, reqs = [], []
    for name, mgids in want.items():
        have = run.joined.get(name, set())
        for m in sorted(mgids - have):
            handles.append(run.net.agent(name))
            reqs.append({"cmd": "multicast.join", "mgid": m})
        for m in sorted(have - mgids):
            handles.append(run.net.agent(name))
            reqs.append({"cmd": "multicast.leave", "mgid": m})
    for a, r in zip(handles, reqs):   # one agent may get several; in order
        a.call(r)
    run.joined = want


def _streams(run: _Run, flow: int) -> dict[str, list[tuple[int, int, int]]]:
    out: dict[str, list[tuple[int, int, int]]] = {name: [] for name in run.net.agents}
    for mgid, members in sorted(run.dp.groups().items()):
        if len(members) < 2:
            continue
        color = run.dp.color(mgid)
        for x in sorted(members):
            out[run.host_name(x)].append((mgid, color, flow))
    return {k: v for k, v in out.items() if v}


def _predictions(run: _Run, streams: dict[str, list[tuple[int, int, int]]]) -> dict[tuple[str, int], Counter]:
    return {(s, mgid): run.dp.predicted_copies(s, mgid) for s, ss in streams.items() for mgid, _, _ in ss}


def _submit(run: _Run, streams: dict[str, list[tuple[int, int, int]]], count: int) -> list[Any]:
    from dcnlab.traffic.multicast_agent import send_request

    rate = run.cfg.rate_pps
    agents = []
    for i, (h, ss) in enumerate(sorted(streams.items())):
        a = run.net.agent(h)
        a.submit(send_request(a.host.iface, run.frames[h], ss, count, rate, 0, offset_s=i / len(streams) / rate))
        agents.append(a)
    return agents


def _evaluate(run: _Run, name: str, flow: int, count: int, streams: dict[str, list[tuple[int, int, int]]],
              reports: dict[str, dict], preds: dict[tuple[str, int], Counter], model: bool, frames: int,
              counters: Any, seconds: float) -> WindowResult:
    from dcnlab.traffic import measure

    fabric = run.fabric
    info = {h.name: h for h in fabric.hosts()}
    name_of_ip = {h.ip: h.name for h in info.values()}
    members = {mgid: {run.host_name(x) for x in m} for mgid, m in run.dp.groups().items()}
    receptions = sum(len(members[mgid]) - 1 for ss in streams.values() for mgid, _, _ in ss) * count
    delivered = lost = dups = outsider = filtered = 0
    copy_bad: list[str] = []
    want_filtered: Counter[tuple[str, int, str]] = Counter()
    want_copies: Counter[tuple[str, int, str]] = Counter()
    for (src, mgid), pred in preds.items():
        for (a, b), n in pred.items():
            if b in info and a == info[b].node and b != src:
                (want_copies if b in members[mgid] else want_filtered)[(b, mgid, src)] += n * count
    got_filtered: Counter[tuple[str, int, str]] = Counter()
    for host, rep in reports.items():
        for mgid_s, by_src in rep["groups"].items():
            mgid = int(mgid_s)
            for src_ip, flows in by_src.items():
                f = flows.get(str(flow))
                if f is None:
                    continue
                src = name_of_ip.get(src_ip, src_ip)
                if host not in members.get(mgid, ()):
                    outsider += f["delivered"]
                    continue
                delivered += min(f["delivered"], count)
                lost += f["missing"]
                dups += f["dups"]
                if model and f["copies"] != want_copies[(host, mgid, src)] and len(copy_bad) < MISMATCHES_LISTED:
                    copy_bad.append(f"{host} got {f['copies']} copies of group {mgid} from {src}, model "
                                    f"{want_copies[(host, mgid, src)]}")
        for mgid_s, by_src in rep["filtered"].items():
            for src_ip, flows in by_src.items():
                n = flows.get(str(flow), 0)
                filtered += n
                got_filtered[(host, int(mgid_s), name_of_ip.get(src_ip, src_ip))] += n
    link_packets = link_model = compared = 0
    link_bad: list[str] = []
    if model:
        for key in set(got_filtered) | set(want_filtered):
            if got_filtered[key] != want_filtered[key] and len(copy_bad) < MISMATCHES_LISTED:
                copy_bad.append(f"{key[0]} filtered {got_filtered[key]} copies of group {key[1]} from {key[2]}, "
                                f"model {want_filtered[key]}")
        total: Counter[tuple[str, str]] = Counter()
        for pred in preds.values():
            for edge, n in pred.items():
                total[edge] += n * count
        for ll in measure.link_loads(fabric, counters):
            lk = ll.link
            for (a, b), pc in (((lk.a, lk.b), ll.a_to_b), ((lk.b, lk.a), ll.b_to_a)):
                compared += 1
                link_packets += pc.packets
                link_model += total[(a, b)]
                run.link_points.append((total[(a, b)], pc.packets))
                if pc.packets != total[(a, b)] and len(link_bad) < MISMATCHES_LISTED:
                    link_bad.append(f"{a}->{b}: {pc.packets} packets, model {total[(a, b)]}")
    nstreams = sum(len(s) for s in streams.values())
    return WindowResult(name, flow, count, nstreams, nstreams * count, frames, receptions, delivered, lost, dups,
                        outsider, filtered, model, sum(want_filtered.values()), not copy_bad, tuple(copy_bad),
                        link_packets, link_model, compared, tuple(link_bad), seconds)


def _expect(run: _Run, streams: dict[str, list[tuple[int, int, int]]], count: int) -> dict[str, list]:
    ip_of = {h.name: h.ip for h in run.fabric.hosts()}
    out: dict[str, list] = {name: [] for name in run.net.agents}
    for src, ss in streams.items():
        for mgid, _, flow in ss:
            for x in run.dp.groups()[mgid]:
                dst = run.host_name(x)
                if dst != src:
                    out[dst].append([mgid, ip_of[src], flow, count])
    return out


def _window(run: _Run, name: str, flow: int, count: int, model: bool,
            during: Callable[[float], None] | None = None) -> tuple[WindowResult, dict[str, dict], dict]:
    from dcnlab.traffic import measure
    from dcnlab.traffic.hostctl import call_all

    t0 = time.perf_counter()
    net = run.net
    hosts = sorted(net.agents)
    handles = [net.agent(h) for h in hosts]
    streams = _streams(run, flow)
    preds = _predictions(run, streams)
    call_all(handles, [{"cmd": "multicast.recv_start"}] * len(handles))
    sends: list[dict] = []
    try:
        before = measure.snapshot(net.controller) if model else None
        t_window = time.perf_counter()
        agents = _submit(run, streams, count)
        if during is not None:
            during(t_window)
        sends = [a.result() for a in agents]
        time.sleep(run.cfg.settle)
        after = measure.snapshot(net.controller) if model else None
    finally:
        expect = _expect(run, streams, count)
        replies = call_all(handles, [{"cmd": "multicast.recv_stop", "expect": expect[h], "seqs": not model}
                                     for h in hosts])
    reports = dict(zip(hosts, replies))
    counters = after - before if model and after is not None and before is not None else None
    frames = sum(s["frames"] for s in sends)
    result = _evaluate(run, name, flow, count, streams, reports, preds, model, frames, counters,
                       time.perf_counter() - t0)
    starts = {h: s["start"] for h, s in zip(sorted(streams), sends)}
    run.say(f"window {name}: delivered {result.delivered}/{result.receptions}, lost {result.lost}, dups {result.dups}, "
            f"filtered {result.filtered}" + (f", link packets {result.link_packets} (model {result.link_model})"
                                             if model else "") + f"; {result.seconds:.1f} s")
    return result, reports, {"streams": streams, "preds": preds, "starts": starts}


def _readback(run: _Run) -> dict:
    """Read ``tree_replicate`` (kind 1) and the PRE groups the entries use back from every switch and compare
    them with the data plane's record and with a from-scratch compilation."""
    from dcnlab.controller.replication import KIND_MULTICAST, REPLICATE_TABLE
    from dcnlab.controller.runtime.entities import MulticastGroup
    from dcnlab.controller.runtime.errors import RuntimeErrorBase

    dp, ctl = run.dp, run.net.controller
    problems = list(dp.verify())
    installed = dp.installed()
    entries = groups = 0
    groups_read = True
    for sw in sorted(run.net.switches):
        rep = installed.get(sw)
        want = {e.key(): e for e in rep.entries} if rep else {}
        have = {e.key(): e for e in ctl.read_table(sw, REPLICATE_TABLE) if dict(e.match)["hdr.tree.kind"] == KIND_MULTICAST}
        entries += len(have)
        if have != want:
            problems.append(f"{sw}: {len(have)} entries on the switch, {len(want)} recorded; first difference "
                            f"{next(iter(set(have.items()) ^ set(want.items())))}")
        if not rep or not rep.groups:
            continue
        try:
            raw = list(ctl.client(sw).read(ctl.pipeline.p4info, [MulticastGroup(g.mgid) for g in rep.groups]))
        except RuntimeErrorBase as e:
            groups_read = False
            log.warning("reading PRE groups of %s failed (%s); comparing table entries only", sw, e)
            continue
        got = {}
        for ent in raw:
            g = ent.packet_replication_engine_entry.multicast_group_entry
            got[g.multicast_group_id] = tuple(sorted((r.egress_port, r.instance) for r in g.replicas))
        groups += len(got)
        for g in rep.groups:
            if got.get(g.mgid) != tuple(sorted(g.replicas)):
                problems.append(f"{sw}: PRE group {g.mgid} has {got.get(g.mgid)}, recorded {g.replicas}")
    return {"ok": not problems, "problems": problems[:MISMATCHES_LISTED], "entries": entries, "groups": groups,
            "groups_read": groups_read, "switches": len(installed)}


def _failure_window(run: _Run, link: int) -> tuple[WindowResult, Failover]:
    from dcnlab.emu import faults
    from dcnlab.emu.network import intf_name

    cfg, dp = run.cfg, run.dp
    u, up, d, dn = dp.h.link_ends(link)
    intfs = (intf_name(u, up), intf_name(d, dn))
    port_of = {intfs[0]: (u, up), intfs[1]: (d, dn)}
    state: dict[str, Any] = {}
    done = threading.Event()

    def on_down(intf: str, when: float) -> None:
        if intf not in port_of or "stats" in state:
            return
        state["detected"] = when
        stats = dp.port_down(*port_of[intf])
        state["stats"] = stats
        state["switched"] = time.perf_counter()
        done.set()

    def cut(t_window: float) -> None:
        time.sleep(max(0.0, cfg.cut_at - (time.perf_counter() - t_window)))
        state["cut"] = time.perf_counter()
        state["cut_wall"] = time.time()
        state["cut_offset"] = state["cut"] - t_window
        faults.cut(run.net.netns, intfs, cfg.cut)   # "down": the watcher notices the carrier loss
        if cfg.cut == "drop":
            for intf in intfs:                    # the port-status event a switch raises on loss of signal
                on_down(intf, time.perf_counter())

    watcher = LinkWatcher(run.net, on_down) if cfg.cut == "down" else None
    try:
        if watcher is not None:
            time.sleep(0.2)   # let ip monitor subscribe
        result, reports, meta = _window(run, "failure", FLOW_FAILURE, cfg.fail_count, model=False, during=cut)
        detected = done.wait(cfg.detect_timeout)
    finally:
        if watcher is not None:
            watcher.close()
    if not detected:   # make the controller react anyway, so the next window runs on a consistent state
        dp.port_down(u, up)
    if watcher is not None and watcher.errors:
        raise EmulationError("failover failed: " + "; ".join(watcher.errors))
    stats = state.get("stats")
    moved = tuple(stats.groups) if stats else ()
    rescued, lost_switching, timeline = _copy_timeline(run, reports, meta, meta["preds"], state, moved)
    fo = Failover(cfg.cut, (u, d), intfs, state.get("cut_offset", cfg.cut_at), detected,
                  state["detected"] - state["cut"] if detected else None,
                  state["switched"] - state["detected"] if detected else None,
                  stats.compute_seconds if stats else None, stats.write_seconds if stats else None,
                  state["switched"] - state["cut"] if detected else None, moved,
                  tuple(stats.trees) if stats else (), stats.updates if stats else 0,
                  stats.switches if stats else 0, rescued, lost_switching, timeline,
                  stats.compute_cpu_seconds if stats else None)
    return result, fo


def _copy_timeline(run: _Run, reports: dict[str, dict], meta: dict, preds: dict, state: dict,
                   moved: tuple[int, ...]) -> tuple[int, int, tuple[tuple[float, float, float], ...]]:
    """Receptions that came in fewer copies than the model's count before the cut (one tree's copy was lost,
    the other delivered: rescued) or in none (lost), and, per bin of one sending period, the copies received
    as a fraction of that count, for the moved groups and for the others."""
    info = {h.name: h for h in run.fabric.hosts()}
    name_of_ip = {h.ip: h.name for h in info.values()}
    rate = run.cfg.rate_pps
    cut_wall = state.get("cut_wall")
    rescued = lost = 0
    bins: dict[int, list[list[int]]] = {}
    for host, rep in reports.items():
        node = info[host].node
        for mgid_s, by_src in rep["groups"].items():
            mgid = int(mgid_s)
            for src_ip, flows in by_src.items():
                f = flows.get(str(FLOW_FAILURE))
                src = name_of_ip.get(src_ip)
                if f is None or src is None or (src, mgid) not in preds:
                    continue
                want = preds[(src, mgid)][(node, host)]
                start = meta["starts"].get(src)
                for seq, copies in enumerate(f.get("seqs", [])):
                    if copies == 0:
                        lost += 1
                    elif copies < want:
                        rescued += 1
                    if start is not None and cut_wall is not None:
                        b = int((start + seq / rate - cut_wall) * rate // 1)
                        slot = bins.setdefault(b, [[0, 0], [0, 0]])[0 if mgid in moved else 1]
                        slot[0] += copies
                        slot[1] += want
    timeline = tuple(((b + 0.5) / rate, (m[0] / m[1]) if m[1] else float("nan"),
                      (o[0] / o[1]) if o[1] else float("nan")) for b, (m, o) in sorted(bins.items()))
    return rescued, lost, timeline


def run_experiment(cfg: EmuConfig, progress: Progress | None = None, options: Any = None) -> EmuResult:
    """Bring the fabric up, run the timeline of the module docstring, tear down (also on errors)."""
    from dcnlab.controller.multicast.dataplane import MulticastDataplane
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.metrics import compute
    from dcnlab.controller.multicast.planning import mapping_for
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.topos.midplane import Midplane
    from dcnlab.topos.spec import parse_spec
    from dcnlab.traffic.multicast_agent import multicast_frame

    say = progress or (lambda m: log.info("%s", m))
    cfg.validate()
    fabric = parse_spec(cfg.spec)
    if not isinstance(fabric, Midplane):
        raise UserError(f"multicast emulation runs on a midplane fat-tree (midplane:...), got {cfg.spec}")
    h = hierarchy_for(fabric)
    if h.m < 2:
        raise UserError(f"multicast emulation uses dual trees: midplane parameter m={h.m}; valid: m >= 2")
    t_start = time.perf_counter()
    mapping = mapping_for(h, cfg.colors, dual=True)
    alloc, placed, taken = place_jobs(h, cfg.colors, cfg.jobs)
    all_groups = [g for _, _, gs in placed for g in gs]
    merges = merges_in_model(h, cfg.colors, cfg.variant, cfg.jobs)
    merges_more = merges_in_model(h, max(COMPARE_COLORS, cfg.colors), cfg.variant, cfg.jobs)
    frames = {info.name: multicast_frame(info.mac, info.ip, cfg.size) for info in fabric.hosts()}
    net = FabricNetwork(fabric, options or NetOptions(routes=False), progress=say)
    install: list[dict] = []
    churn: list[dict] = []
    windows: list[WindowResult] = []
    failover: Failover | None = None
    readback: dict = {}
    try:
        net.start()
        bringup = net.timings.total()
        dp = MulticastDataplane(net.controller, h, cfg.colors, cfg.variant, dual=True, feed=cfg.feed)
        run = _Run(net, fabric, dp, cfg, frames, say)
        for g in all_groups:
            install.append(asdict(dp.add_group(g.mgid, g.members)))
        _sync_membership(run)
        say(f"installed {len(all_groups)} groups: {sum(o['updates'] for o in install)} updates")
        windows.append(_window(run, "steady", FLOW_STEADY, cfg.count, model=True)[0])
        if cfg.churn:
            churn = _churn(run, alloc, placed, mapping, taken)
            _sync_membership(run)
            windows.append(_window(run, "churned", FLOW_CHURNED, cfg.count, model=True)[0])
        readback = _readback(run)
        say(f"read back {readback['entries']} entries and {readback['groups']} PRE groups: "
            f"{'equal' if readback['ok'] else 'DIFFERENT'}")
        link = choose_cut(dp)
        result, failover = _failure_window(run, link)
        windows.append(result)
        windows.append(_window(run, "failed-over", FLOW_FAILED_OVER, cfg.count, model=cfg.cut == "drop")[0])
        time.sleep(2 * net.opts.monitor_interval)
        net.check_switches()
        trees = dp.trees()
        m = compute(h, trees, 0, 0.0, cfg.colors)
        groups_json = []
        jobs_of = {g.mgid: (g.job, g.label) for _, _, gs in placed for g in gs}
        for mgid, members in sorted(dp.groups().items()):
            t0, t1 = dp.group_trees(mgid)
            groups_json.append({"mgid": mgid, "job": jobs_of.get(mgid, (None, ""))[0],
                                "label": jobs_of.get(mgid, (None, ""))[1], "color": dp.color(mgid),
                                "members": [run.host_name(x) for x in sorted(members)],
                                "root": t0.root(h), "backup_root": t1.root(h),
                                "merged_with": [g for g in t0.groups if g != mgid],
                                "links": [list(e) for e in t0.directed_links(h)],
                                "backup_links": [list(e) for e in t1.directed_links(h)]})
        jobs_json = [{"job": j.job, "class": j.cls, "terminals": [run.host_name(x) for x in j.terminals]}
                     for j in alloc.jobs()]
    finally:
        net.stop()
    return EmuResult(fabric.spec, sum(1 for _ in fabric.forwarding_nodes()), fabric.num_hosts(), cfg.colors,
                     cfg.variant, cfg.feed, tuple(groups_json), tuple(jobs_json), tuple(install), tuple(churn),
                     readback, tuple(windows), failover, merges, merges_more, m.entries_per_port_max, m.trees,
                     bringup, time.perf_counter() - t_start, tuple(run.link_points))


def _churn(run: _Run, alloc: Any, placed: list, mapping: Any, taken: set[int]) -> list[dict]:
    """A job leaves, one of the same shape arrives, a member leaves a group and a terminal joins one."""
    from dcnlab.controller.multicast.allocation import Refused

    dp, h = run.dp, run.dp.h
    ops: list[dict] = []
    victim_i = len(placed) - 2 if len(placed) >= 2 else 0
    job, spec, groups = placed[victim_i]
    for g in groups:
        ops.append(asdict(dp.remove_group(g.mgid)))
    alloc.release(job.job)
    new = alloc.allocate(spec.size)
    if isinstance(new, Refused):
        raise EmulationError(f"the arriving job of {spec.size} terminals does not fit: {new.reason}")
    new_groups = job_groups(h, mapping, run.cfg.colors, new, spec, taken)
    for g in new_groups:
        ops.append(asdict(dp.add_group(g.mgid, g.members)))
    placed[victim_i] = (new, spec, new_groups)
    first_world = next((g for g in placed[0][2] if g.label == "world"), placed[0][2][-1])
    members = sorted(dp.planner.members(first_world.mgid))
    if len(members) > 2:
        ops.append(asdict(dp.leave(first_world.mgid, members[-1])))
    new_world = next((g for g in new_groups if g.label == "world"), new_groups[-1])
    joiner = sorted(placed[-1][0].terminals)[0] if victim_i != len(placed) - 1 else None
    if joiner is not None and joiner not in dp.planner.members(new_world.mgid):
        ops.append(asdict(dp.join(new_world.mgid, joiner)))
    run.say(f"churn: {len(ops)} operations, {sum(o['updates'] for o in ops)} updates")
    return ops


# -- output ----------------------------------------------------------------------------------------------------
def slug(spec: str) -> str:
    return spec.replace("midplane:", "midplane-").replace(",", "-").replace("=", "")


def plot(result: EmuResult, path: Path) -> None:
    """(a) packets per directed link, BMv2 counters vs the model; (b) copies per reception around the cut."""
    from dcnlab.experiments import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(15, 5.2), layout="constrained")
    ax = axes[0]
    pts = result.link_points
    ok = all(w.counters_ok for w in result.windows if w.model_checked)
    ax.set_title(f"(a) copies per directed link: {'all equal' if ok else 'MISMATCH'}")
    if pts:
        xs, ys = zip(*pts)
        top = max(max(xs), max(ys), 1)
        ax.plot([0, top], [0, top], color="grey", lw=0.8, ls="--", label="measured = model")
        ax.scatter(xs, ys, s=14, alpha=0.6, color="tab:blue", label=f"{len(pts)} directed links × windows")
        plotstyle.legend_outside(ax)
    else:
        plotstyle.note(ax, "no window was checked against the model")
    ax.set_xlabel("packets predicted from the trees (count)")
    ax.set_ylabel("packets counted by the switches (count)")
    ax.grid(alpha=0.3)
    ax = axes[1]
    f = result.failover
    if f is not None and f.timeline:
        ts = [t for t, _, _ in f.timeline]
        ax.plot(ts, [m for _, m, _ in f.timeline], "o-", color="tab:red", ms=4,
                label=f"groups moved to the second tree {list(f.groups)}")
        ax.plot(ts, [o for _, _, o in f.timeline], "s--", color="tab:green", ms=4, mfc="none", label="other groups")
        ax.axvline(0, color="black", lw=1, label=f"cut {f.link[0]}-{f.link[1]}")
        if f.detected and f.total_seconds is not None:
            ax.axvline(f.total_seconds, color="tab:orange", lw=1, ls="--",
                       label=f"failover done (+{1e3 * f.total_seconds:.1f} ms)")
        ax.set_ylim(0, 1.25)
        fail = next(w for w in result.windows if w.name == "failure")
        ax.set_title(f"(b) failure window: lost {fail.lost} of {fail.receptions} receptions")
        plotstyle.legend_outside(ax)
    else:
        ax.set_title("(b) failure window")
        plotstyle.note(ax, "no link was cut in this run")
    ax.set_xlabel("time after the cut (s, message send time)")
    ax.set_ylabel("copies received / copies before the cut (ratio)")
    ax.grid(alpha=0.3)
    fig.suptitle(plotstyle.title("001", None, f"C-MR4LMS on BMv2, {result.spec}, C={result.colors}, dual trees "
                                              f"(feed {result.feed})"))
    plotcheck.save(fig, path, dpi=120)


def emulation_note(result: EmuResult) -> str:
    """What ran on BMv2, for ``summary.json`` and the report."""
    checks = result.checks()
    return (f"ran on BMv2: C-MR4LMS on {result.spec} ({result.switches} switches), C={result.colors}; checks "
            + ", ".join(f"{k} {'ok' if v else 'FAILED'}" for k, v in checks.items())
            + " (delivery and per-link copies against the model; none of the paper's figures)")


def write_outputs(result: EmuResult, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    name = f"emulation-{slug(result.spec)}"
    png, js = out / f"{name}.png", out / f"{name}.json"
    plot(result, png)
    js.write_text(json.dumps(result.to_json(), indent=1) + "\n")
    return png, js
