"""The rules check of an emulated fabric, after ATPG (Zeng et al., CoNEXT 2012): a check that scales.

The all-pairs check (:mod:`dcnlab.emu.reachability`) sends n·(n−1) probes: 16,256 on fat-tree
k=8, 186,192 on k=12. This check instead

1. **reads every switch's tables back** over P4Runtime, all switches concurrently, and compares
   them with the entries the controller computed (:mod:`dcnlab.controller.runtime.readback`):
   missing, extra and different entries, each named;
2. **plans the fewest probes that exercise every entry** and every ECMP member
   (:mod:`dcnlab.controller.coverage`: exact path model with BMv2's hash, greedy set cover);
3. **sends them** with the all-pairs check's machinery (:func:`~dcnlab.emu.reachability.probe_list`:
   the hosts' own kernels, paced, lost probes resent), each from the UDP source port that steers it
   onto its ECMP members;
4. **localises** (ATPG §5): an entry is *confirmed* when a probe through it arrived. Entries on lost
   probes' paths are suspects; for each, a probe through it that crosses as few other suspects as
   possible is sent, for up to ``localise`` rounds. Entries still unconfirmed are named.

Decisions: the expected state is recomputed from the routing (not taken from the controller's
memory of what it wrote), so a controller that wrote the wrong thing is caught too. A probe that
arrives confirms the entries of the path the model predicts; the BMv2 tests check the prediction
against the switches' port counters. The check needs dcnlab's program and routes (it knows what
every entry should be); with a user's program only the all-pairs check applies.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dcnlab.controller.coverage import PROBE_PORT, ProbePlan, RuleModel, RuleRef
from dcnlab.controller.rules import ECMP_TABLE, HOST_TABLE
from dcnlab.controller.runtime.readback import Mismatch, ReadBack, read_back
from dcnlab.emu.reachability import ProbeHost, deadline_for, probe_list

if TYPE_CHECKING:
    from dcnlab.emu.network import FabricNetwork

log = logging.getLogger(__name__)

SHOW = 20
"""Named entries a summary lists at most (the result keeps them all)."""


@dataclass
class RuleCheck:
    """The result of :func:`check_rules`."""

    switches: int
    hosts: int
    entries: int
    """Entries the controller computed (every switch's ``ipv4_host`` and ``ecmp_member`` entries)."""
    entries_read: int
    mismatches: list[Mismatch]
    probes_planned: int
    probes_sent: int = 0
    probes_received: int = 0
    probe_rounds: int = 0
    localisation_probes: int = 0
    confirmed: int = 0
    unconfirmed: list[RuleRef] = field(default_factory=list)
    """Entries on lost probes' paths that no arrived probe crossed (even after localisation)."""
    uncoverable: list[RuleRef] = field(default_factory=list)
    """Entries no probe can exercise (on no delivered path)."""
    phases: dict[str, float] = field(default_factory=dict)
    """Seconds per phase: read, plan, probe, localise."""

    @property
    def all_pairs(self) -> int:
        """Probes the all-pairs check sends on the same fabric."""
        return self.hosts * (self.hosts - 1)

    @property
    def seconds(self) -> float:
        return sum(self.phases.values())

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.unconfirmed and not self.uncoverable

    @property
    def probes_lost(self) -> int:
        return max(0, self.probes_sent - self.probes_received)

    def summary(self) -> str:
        lines = [f"rules check: {self.entries_read:,} entries read back from {self.switches} switches, "
                 f"{len(self.mismatches)} mismatch(es); {self.probes_planned:,} probes planned "
                 f"(all-pairs: {self.all_pairs:,}), {self.probes_sent:,} sent, {self.probes_received:,} received "
                 f"in {self.probe_rounds} round(s)"
                 + (f" + {self.localisation_probes} to localise" if self.localisation_probes else "")
                 + f"; {self.confirmed:,}/{self.entries:,} entries confirmed, {len(self.unconfirmed)} unconfirmed, "
                 f"{len(self.uncoverable)} no probe can exercise; {self.seconds:.2f} s ("
                 + ", ".join(f"{k} {v:.2f}" for k, v in self.phases.items()) + ")"]
        lines += [f"  {m}" for m in self.mismatches[:SHOW]]
        lines += [f"  unconfirmed: {r}" for r in self.unconfirmed[:SHOW]]
        lines += [f"  no probe can exercise: {r}" for r in self.uncoverable[:SHOW]]
        more = max(0, len(self.mismatches) - SHOW) + max(0, len(self.unconfirmed) - SHOW) + \
            max(0, len(self.uncoverable) - SHOW)
        if more:
            lines.append(f"  ... and {more} more")
        return "\n".join(lines)


def check_rules(net: FabricNetwork, port: int = PROBE_PORT, deadline: float | None = None, attempts: int = 4,
                budget_pps: float | None = None, localise: int = 3) -> RuleCheck:
    """Read back, plan, probe and localise on a running ``net`` with dcnlab's program and routes.
    ``deadline``: for the probes (default: :func:`~dcnlab.emu.reachability.deadline_for` the plan)."""
    if net.controller is None or net.programs or not net.opts.routes or not net.opts.controller:
        raise ValueError("the rules check needs a running fabric with dcnlab's program, routes and controller")
    phases: dict[str, float] = {}
    t = time.perf_counter()
    model = RuleModel.from_routes(net.fabric, net.opts.ecmp, list(net.host_info.values()))
    expected = {sw: nr.hosts + nr.ecmp for sw, nr in model.node_rules.items()}
    rb: ReadBack = read_back(net.controller, expected, tables=[HOST_TABLE, ECMP_TABLE])
    phases["read"] = time.perf_counter() - t
    t = time.perf_counter()
    plan: ProbePlan = model.plan(port)
    phases["plan"] = time.perf_counter() - t
    res = RuleCheck(len(expected), len(model.hosts), len(model.rules), rb.entries_read, rb.mismatches,
                    len(plan.probes), uncoverable=[model.rules[i] for i in plan.uncoverable])

    t = time.perf_counter()
    hosts = [ProbeHost(n, net.host_info[n].ip, h.pid) for n, h in net.hosts.items()]
    confirmed: set[int] = set()
    probed: set[int] = set()

    def send(probes, attempts_: int) -> None:
        r = probe_list(hosts, [(p.src, p.dst, p.sport) for p in probes], port=port,
                       deadline=deadline if deadline is not None else deadline_for(len(probes)),
                       attempts=attempts_, budget_pps=budget_pps, forwarding_nodes=len(net.switches))
        res.probes_sent += r.probes_sent
        res.probes_received += r.probes_received
        res.probe_rounds += r.rounds
        for p, heard in zip(probes, r.heard):
            probed.update(p.entries)
            if heard:
                confirmed.update(p.entries)

    send(plan.probes, attempts)
    phases["probe"] = time.perf_counter() - t
    t = time.perf_counter()
    used: dict[str, list[int]] = {}
    for p in plan.probes:
        if p.sport not in used.setdefault(p.src, []):
            used[p.src].append(p.sport)
    sent = {p.path for p in plan.probes}
    for _ in range(localise):
        suspects = sorted(probed - confirmed)
        if not suspects:
            break
        alts = model.alternatives(suspects, exclude=sent, used=used, dport=port)
        if not alts:
            break
        sent.update(p.path for p in alts)
        sent_before = res.probes_sent
        send(alts, 2)
        res.localisation_probes += res.probes_sent - sent_before
    if res.localisation_probes:
        phases["localise"] = time.perf_counter() - t
    res.phases = phases
    res.confirmed = len(confirmed)
    res.unconfirmed = [model.rules[i] for i in sorted(probed - confirmed)]
    log.info("%s", res.summary())
    return res
