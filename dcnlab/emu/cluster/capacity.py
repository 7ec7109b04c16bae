"""Capacity plan: a fabric over N machines (``dcnlab plan cluster SPEC --machines N``).

Per machine of the placement (:func:`~dcnlab.emu.cluster.partition.place`): switches and hosts,
memory, expected bring-up time, cut links, and the tunnel traffic and switch CPU of the all-pairs
check. Every figure comes from :class:`Figures`, measured per switch and per host on the 2-core,
24 GiB development VM (see README, "One fabric over several machines"):

* memory: a BMv2 process adds its PSS, ``switch_mib + port_mib × ports`` (libpcap's 2 MiB capture
  ring per port, plus BMv2's heap and the loaded program), plus ``entry_kib`` per routing entry;
  a host adds its shell's; a host on another machine also adds an SSH client on the first machine
  (its shell is a session of that machine's SSH master) and its share of the sshd processes there;
* bring-up: machines start their switches at once, each at its cores' pace
  (``switch_cpu_s`` of CPU per BMv2 start, ``host_cpu_s`` per host), after ``connect_s`` of SSH and
  agents; then the controller, on the first machine, pushes pipelines and routes
  (``entries / write_rate``), the same on one machine or many;
* all-pairs check: one probe per ordered host pair, routed over every shortest path with equal
  split at each hop (what ECMP does on average); a probe crossing a cut link is one VXLAN frame
  of ``probe_frame + 50`` bytes, and costs the switch at each hop ``hop_cpu_ms`` of CPU.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx

from dcnlab.emu.cluster.partition import Placement, place, switch_graph
from dcnlab.emu.cluster.tunnels import OVERHEAD
from dcnlab.topos.errors import UserError
from dcnlab.topos.model import Fabric, Role
from dcnlab.traffic import wire

__all__ = ["MEASURED", "CapacityPlan", "Figures", "MachineRow", "all_pairs_loads", "plan"]

GIB = 1024.0


@dataclass(frozen=True)
class Figures:
    """Per-switch and per-host figures (MiB, seconds) and the machine they were measured on."""

    switch_mib: float = 8.6
    """PSS of a BMv2 process with no port, the program loaded (README's table: PSS minus rings)."""
    port_mib: float = 2.6
    """libpcap's capture ring per port (2 MiB buffer, BMv2 does not set it)."""
    entry_kib: float = 1.0
    """A routing table entry in BMv2 (a host route with its action data)."""
    host_mib: float = 0.3
    """PSS of a Mininet host's shell (bash, own namespace; measured 0.3 MiB of its 3.1 MiB RSS)."""
    ssh_client_mib: float = 1.2
    """PSS of the SSH client that carries a remote host's shell, on the first machine (RSS 7.6 MiB)."""
    sshd_session_mib: float = 0.36
    """sshd's share per remote host on its machine (one sshd per connection of 8 sessions)."""
    os_gib: float = 1.5
    """Left to the system and to dcnlab (controller, Mininet) on each machine."""
    switch_cpu_s: float = 0.055
    """CPU seconds to start one BMv2 process (mostly the dynamic linker, 85 libraries)."""
    host_cpu_s: float = 0.024
    """CPU seconds to start one host here (measured: 32 in 0.39 s of wall time on 2 cores)."""
    remote_host_cpu_s: float = 0.48
    """CPU seconds to start one remote host: an SSH session, whose login shell reads root's ~/.bashrc
    (measured: 32 in 7.7 s of wall time on 2 cores, most of it the development VM's ``pyenv init`` in
    that file; a stock .bashrc returns at once for a non-interactive shell)."""
    connect_s: float = 2.0
    """SSH masters, agents and their checks, per run (all machines at once)."""
    write_rate: float = 50_000.0
    """P4Runtime entries per second, batched (README: 46,000-56,000)."""
    hop_cpu_ms: float = 0.25
    """BMv2 CPU per packet and hop."""
    cores: int = 2
    machine_gib: float = 24.0


MEASURED = Figures()
"""The development VM's figures (README, "One fabric over several machines")."""


@dataclass(frozen=True)
class MachineRow:
    machine: str
    switches: int
    hosts: int
    memory_gib: float
    bringup_s: float
    """This machine's part: its switches and hosts, at its cores' pace."""
    cut_links: int
    tunnel_frames: int
    """VXLAN frames this machine sends or receives during the all-pairs check (first round)."""
    tunnel_mb: float
    check_cpu_s: float
    """Switch CPU seconds of the all-pairs check on this machine."""

    @property
    def check_s(self) -> float:
        return self.check_cpu_s


@dataclass
class CapacityPlan:
    spec: str
    figures: Figures
    placement: Placement
    rows: list[MachineRow]
    route_entries: int
    controller_s: float
    """Pipelines and routes, pushed from the first machine."""
    probes: int
    notes: list[str] = field(default_factory=list)

    @property
    def bringup_s(self) -> float:
        return self.figures.connect_s + max(r.bringup_s for r in self.rows) + self.controller_s

    @property
    def check_s(self) -> float:
        """The all-pairs check's duration if switch CPU bounds it: the busiest machine's CPU over its cores."""
        return max(r.check_cpu_s for r in self.rows) / self.figures.cores

    @property
    def fits(self) -> bool:
        return all(r.memory_gib <= self.figures.machine_gib for r in self.rows)

    def table(self) -> str:
        fg = self.figures
        n = len(self.rows)
        lines = [f"{self.spec} over {n} machine(s) of {fg.cores} cores and {fg.machine_gib:g} GiB "
                 f"({self.placement.method} placement, {len(self.placement.cut)} cut links):",
                 "  machine  switches  hosts  memory GiB  bring-up s  cut links  tunnel frames  tunnel MB  check CPU s"]
        for r in self.rows:
            lines.append(f"  {r.machine:<7}  {r.switches:>8}  {r.hosts:>5}  {r.memory_gib:>10.1f}  {r.bringup_s:>10.1f}"
                         f"  {r.cut_links:>9}  {r.tunnel_frames:>13,}  {r.tunnel_mb:>9.1f}  {r.check_cpu_s:>11.1f}")
        lines.append(f"  up in about {self.bringup_s:.0f} s: {fg.connect_s:g} s SSH and agents, "
                     f"{max(r.bringup_s for r in self.rows):.1f} s the slowest machine's switches and hosts, "
                     f"{self.controller_s:.1f} s pipelines and {self.route_entries:,} route entries from the first "
                     f"machine; all-pairs check ({self.probes:,} probes) about {self.check_s:.0f} s of switch CPU "
                     f"on the busiest machine's {fg.cores} cores")
        lines.append("  fits: " + ("yes" if self.fits else f"no: a machine needs more than {fg.machine_gib:g} GiB"))
        lines += [f"  note: {x}" for x in self.notes]
        return "\n".join(lines)


def all_pairs_loads(fabric: Fabric) -> tuple[dict[tuple[str, str], float], dict[str, float]]:
    """Probes of the all-pairs check (one per ordered host pair) per directed switch-to-switch link
    ``(from, to)`` and per forwarding node, routed over all shortest paths with an equal split at each
    hop. Pairs on the same switch touch no switch-to-switch link."""
    g = switch_graph(fabric)
    hosts_at: dict[str, int] = defaultdict(int)
    for h in fabric.hosts():
        hosts_at[h.node] += 1
    link_load: dict[tuple[str, str], float] = defaultdict(float)
    node_load: dict[str, float] = defaultdict(float)
    sources = [v for v in g if hosts_at[v]]
    for t in sources:
        dist = nx.single_source_shortest_path_length(g, t)
        flow: dict[str, float] = defaultdict(float)
        for v in sources:
            if v != t and v in dist:
                flow[v] += hosts_at[v] * hosts_at[t]
            elif v == t:
                node_load[t] += hosts_at[t] * (hosts_at[t] - 1)     # host to host on one switch
        for v in sorted(dist, key=lambda x: -dist[x]):
            f = flow.get(v, 0.0)
            if not f:
                continue
            node_load[v] += f
            if v == t:
                continue
            nxt = [(u, d.get("weight", 1)) for u, d in g[v].items() if dist.get(u) == dist[v] - 1]
            ways = sum(w for _, w in nxt)
            for u, w in nxt:
                share = f * w / ways
                link_load[(v, u)] += share
                flow[u] += share
    return dict(link_load), dict(node_load)


def plan(fabric: Fabric, machines: int, figures: Figures = MEASURED, placement: Placement | None = None
         ) -> CapacityPlan:
    """The capacity plan of ``fabric`` over ``machines`` machines (``placement``: default :func:`place`)."""
    if not 1 <= machines <= 64:
        raise UserError(f"argument --machines: {machines} is out of range; valid: 1 <= --machines <= 64")
    names = [f"m{i}" for i in range(machines)]
    pl = placement or place(fabric, names)
    fg = figures
    counts = fabric.counts()
    n_hosts = counts.get(Role.HOST, 0)
    link_load, node_load = all_pairs_loads(fabric)
    ports = {n.name: sum(1 for p in range(n.ports) if fabric.peer(n.name, p) is not None)
             for n in fabric.forwarding_nodes()}
    frame = wire.MIN_FRAME
    remote_hosts = [len(p.hosts) for i, p in enumerate(pl.parts) if i > 0]
    rows = []
    for i, part in enumerate(pl.parts):
        sw_mib = sum(fg.switch_mib + fg.port_mib * ports[s] + fg.entry_kib * n_hosts / 1024 for s in part.switches)
        host_mib = len(part.hosts) * (fg.host_mib + (fg.sshd_session_mib if i > 0 else 0.0))
        if i == 0:
            host_mib += sum(remote_hosts) * fg.ssh_client_mib
        mem = fg.os_gib + (sw_mib + host_mib) / GIB
        cpu = len(part.switches) * fg.switch_cpu_s + len(part.hosts) * (fg.host_cpu_s if i == 0 else
                                                                         fg.remote_host_cpu_s)
        frames = 0.0
        for link in part.cut_links:
            frames += link_load.get((link.a, link.b), 0.0) + link_load.get((link.b, link.a), 0.0)
        check_cpu = sum(node_load.get(s, 0.0) for s in part.switches) * fg.hop_cpu_ms / 1000
        rows.append(MachineRow(part.machine, len(part.switches), len(part.hosts), mem, cpu / fg.cores,
                               len(part.cut_links), round(frames), frames * (frame + OVERHEAD) / 1e6, check_cpu))
    entries = len(pl.machine_of) and sum(len(p.switches) for p in pl.parts) * n_hosts
    notes = []
    if machines > 1:
        notes.append(f"the first machine also runs an SSH client per remote host ({sum(remote_hosts):,}) and "
                     f"the controller")
    return CapacityPlan(fabric.spec, fg, pl, rows, entries, entries / fg.write_rate, n_hosts * (n_hosts - 1), notes)


def plans(fabric: Fabric, machine_counts: Sequence[int], figures: Figures = MEASURED) -> list[CapacityPlan]:
    return [plan(fabric, n, figures) for n in machine_counts]
