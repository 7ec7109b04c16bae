"""The experiment's checks: a window's deliveries and copies against the model, the switches' state read back.

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
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

from dcnlab.reproduce.multicast.bmv2.setup import Run

log = logging.getLogger(__name__)

MISMATCHES_LISTED = 20


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


def evaluate(run: Run, name: str, flow: int, count: int, streams: dict[str, list[tuple[int, int, int]]],
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


def read_back(run: Run) -> dict:
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
