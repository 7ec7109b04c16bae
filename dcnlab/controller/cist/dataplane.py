"""CIST broadcast in the P4 data plane: trees -> ``tree_replicate`` state, installed through the controller.

Dragonfly CISTs (Bian et al., Computer Science 2022) build the trees; the paper itself has no data plane, so this
one is ours.

A broadcast packet carries the tree shim of ``p4src/headers.p4`` (UDP port 7701, then ``kind``, ``tree``,
``group``) with ``kind = 2`` (broadcast) and ``tree`` = the id of the tree it travels on. Every switch
replicates it by (ingress port, kind, tree) to that tree's out-ports (:func:`dcnlab.controller.cist.forwarding.
broadcast_ports`: every tree port and host port but the ingress), through a PRE group; a copy leaving on a
host port gets the host's MAC and IP in egress (``tree_host_port``). :mod:`dcnlab.controller.replication` compiles
the ``{TreeKey: out-ports}`` maps into those entities; this module builds the maps and installs, replaces and
removes the state through :class:`dcnlab.controller.runtime.controller.Controller`.

Decisions (none of this is in the paper):

* **Tree ids.** A :class:`~dcnlab.controller.cist.trees.CistTree` goes on the wire as its ``tree_id`` (0..k-1).
  Callers may pass ``{tree id: tree}`` instead, e.g. to install a baseline tree next to the CISTs;
  :data:`BASELINE_TREE` (255, the largest 8-bit id) is the id the experiments give the single BFS tree, so it
  can never collide with a CIST id (k = ⌊a/2⌋ <= 64 within the program's table sizes).
* **Same state for every source.** CISTs are independent for every root (the paper's definition, §2.1), so one entry per
  (in-port, tree) serves every source; no per-source state exists.
* **PRE group ids.** CIST groups live in ``GROUP_BASE..GROUP_BASE + 2·GROUP_BANK - 1`` (16384..24575) so they
  never meet the groups of the multicast mechanism, which start at 1. The range is split in two banks, and
  each install uses the bank the previous one did not use.
* **Replacing the trees** (the forwarding state is swapped atomically) is make-before-break, in three
  rounds over all switches: (1) insert the new groups (other bank) and any new host-port entries; (2) point
  every ``tree_replicate`` entry at its new group — MODIFY for a key both sets have, INSERT for a new key;
  (3) delete the keys only the old set has, the host-port entries no longer used, and the old groups. Each
  entry switches from old to new replication in one step, no entry ever points at a missing group, and a
  packet is replicated either by the old trees or by the new ones at each switch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from dcnlab.controller.cist.forwarding import broadcast_ports
from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.controller.cist.trees import CistTree
from dcnlab.controller.replication import KIND_BROADCAST, SwitchReplication, TreeKey, switch_replication
from dcnlab.controller.runtime.entities import MulticastGroup, TableEntry, Update
from dcnlab.topos.model import Fabric

log = logging.getLogger(__name__)

BASELINE_TREE = 255
"""Tree id under which experiments install the single-BFS-tree baseline next to the CISTs."""
MAX_TREE_ID = 255
GROUP_BASE = 0x4000
"""First PRE multicast group id of CIST broadcast (bank 0)."""
GROUP_BANK = 0x1000
"""Group ids per bank; bank b starts at ``GROUP_BASE + b·GROUP_BANK``."""

Trees = Sequence[CistTree] | Mapping[int, CistTree]


class Writer(Protocol):
    """What the installer needs of :class:`dcnlab.controller.runtime.controller.Controller`."""

    def write(self, updates: Mapping[str, Sequence[Update]]) -> None: ...


def tree_ids(trees: Trees) -> dict[int, CistTree]:
    """``{tree id: tree}``; a sequence is keyed by each tree's own ``tree_id``. Ids must be 0..255, unique."""
    items = list(trees.items()) if isinstance(trees, Mapping) else [(t.tree_id, t) for t in trees]
    out: dict[int, CistTree] = {}
    for tid, tree in items:
        if not 0 <= tid <= MAX_TREE_ID:
            raise ValueError(f"tree id {tid} does not fit the 8-bit tree field of the shim; valid: 0..{MAX_TREE_ID}")
        if tid in out:
            raise ValueError(f"tree id {tid} is given twice")
        out[tid] = tree
    return out


def broadcast_rules(graph: SwitchGraph, trees: Trees) -> dict[str, dict[TreeKey, tuple[int, ...]]]:
    """Per switch, ``{TreeKey(in_port, 2, tree id): out-ports}`` for every tree (host ports included)."""
    rules: dict[str, dict[TreeKey, tuple[int, ...]]] = {name: {} for name in graph.names}
    for tid, tree in sorted(tree_ids(trees).items()):
        for switch, table in broadcast_ports(graph, tree, hosts=True).items():
            for in_port, outs in table.items():
                rules[switch][TreeKey(in_port, KIND_BROADCAST, tid)] = outs
    return rules


def host_addresses(fabric: Fabric) -> dict[str, dict[int, tuple[str, str]]]:
    """switch -> {host port: (host MAC, host IP)}, for the egress rewrite of copies that leave to hosts."""
    out: dict[str, dict[int, tuple[str, str]]] = {}
    for h in fabric.hosts():
        out.setdefault(h.node, {})[h.node_port] = (h.mac, h.ip)
    return out


def compile_broadcast(fabric: Fabric, graph: SwitchGraph, trees: Trees,
                      first_group: int = GROUP_BASE) -> dict[str, SwitchReplication]:
    """Every switch's broadcast state for ``trees``: PRE groups from ``first_group`` on, ``tree_replicate``
    entries, ``tree_host_port`` entries. A switch gets at most :data:`GROUP_BANK` groups."""
    rules = broadcast_rules(graph, trees)
    hosts = host_addresses(fabric)
    out: dict[str, SwitchReplication] = {}
    for switch, switch_rules in rules.items():
        rep = switch_replication(switch_rules, hosts.get(switch, {}), first_group=first_group)
        if len(rep.groups) > GROUP_BANK:
            raise ValueError(f"{switch}: {len(rep.groups)} PRE groups exceed a bank of {GROUP_BANK}")
        out[switch] = rep
    return out


@dataclass(frozen=True)
class InstallStats:
    """What one install/replace/remove wrote, summed over switches."""

    action: str
    trees: tuple[int, ...]
    switches: int
    groups: int
    entries: int
    host_ports: int
    updates: int
    seconds: float


def _by_key(entities: Iterable[TableEntry | MulticastGroup]) -> dict[tuple, TableEntry | MulticastGroup]:
    return {e.key(): e for e in entities}


def replace_rounds(old: Mapping[str, SwitchReplication],
                   new: Mapping[str, SwitchReplication]) -> list[dict[str, list[Update]]]:
    """The three make-before-break write rounds that turn ``old`` into ``new`` (see the module docstring).

    ``old`` and ``new`` must use disjoint group ids (different banks)."""
    rounds: list[dict[str, list[Update]]] = [{}, {}, {}]
    empty = SwitchReplication([], [], [])
    for sw in sorted(set(old) | set(new)):
        o, n = old.get(sw, empty), new.get(sw, empty)
        if {g.mgid for g in o.groups} & {g.mgid for g in n.groups}:
            raise ValueError(f"{sw}: old and new broadcast state share PRE group ids; use another bank")
        o_hp, n_hp = _by_key(o.host_ports), _by_key(n.host_ports)
        o_e, n_e = _by_key(o.entries), _by_key(n.entries)
        r1: list[Update] = [+g for g in n.groups]
        r1 += [+e for k, e in n_hp.items() if k not in o_hp]
        r1 += [~e for k, e in n_hp.items() if k in o_hp and o_hp[k] != e]
        r2: list[Update] = [(~e if k in o_e else +e) for k, e in n_e.items() if o_e.get(k) != e]
        r3: list[Update] = [-e for k, e in o_e.items() if k not in n_e]
        r3 += [-e for k, e in o_hp.items() if k not in n_hp]
        r3 += [-g for g in o.groups]
        for r, ups in zip(rounds, (r1, r2, r3)):
            if ups:
                r[sw] = ups
    return rounds


class BroadcastDataplane:
    """Installs broadcast trees on every switch of an emulated fabric, and swaps or removes them.

    ``controller`` is the run's :class:`~dcnlab.controller.runtime.controller.Controller` (``net.controller``): it
    remembers what was written, so a restarted switch gets the trees back on reconnect."""

    def __init__(self, controller: Writer, fabric: Fabric, graph: SwitchGraph | None = None) -> None:
        self.controller = controller
        self.fabric = fabric
        self.graph = graph or SwitchGraph.from_fabric(fabric)
        self.state: dict[str, SwitchReplication] = {}
        self.trees: dict[int, CistTree] = {}
        self.bank = 1  # the first install uses bank 0

    @property
    def installed(self) -> bool:
        return bool(self.state)

    def _compile(self, trees: Trees) -> tuple[dict[int, CistTree], dict[str, SwitchReplication]]:
        ids = tree_ids(trees)
        bank = 1 - self.bank
        return ids, compile_broadcast(self.fabric, self.graph, ids, GROUP_BASE + bank * GROUP_BANK)

    def _stats(self, action: str, state: Mapping[str, SwitchReplication], updates: int, t0: float) -> InstallStats:
        return InstallStats(action, tuple(sorted(self.trees)), len(state),
                            sum(len(r.groups) for r in state.values()), sum(len(r.entries) for r in state.values()),
                            sum(len(r.host_ports) for r in state.values()), updates, time.perf_counter() - t0)

    def install(self, trees: Trees) -> InstallStats:
        """Install ``trees`` (none may be installed yet: use :meth:`replace`). One batched write per switch."""
        if self.installed:
            raise RuntimeError("broadcast trees are already installed; use replace() or remove() first")
        t0 = time.perf_counter()
        ids, state = self._compile(trees)
        updates = {sw: rep.inserts() for sw, rep in state.items()}
        self.controller.write(updates)
        self.state, self.trees, self.bank = state, ids, 1 - self.bank
        stats = self._stats("install", state, sum(map(len, updates.values())), t0)
        log.info("installed broadcast trees %s: %d groups, %d entries on %d switches in %.2f s", stats.trees,
                 stats.groups, stats.entries, stats.switches, stats.seconds)
        return stats

    def replace(self, trees: Trees) -> InstallStats:
        """Swap the installed trees for ``trees``, make-before-break (three write rounds)."""
        if not self.installed:
            return self.install(trees)
        t0 = time.perf_counter()
        ids, state = self._compile(trees)
        n = 0
        for updates in replace_rounds(self.state, state):
            if updates:
                self.controller.write(updates)
                n += sum(map(len, updates.values()))
        self.state, self.trees, self.bank = state, ids, 1 - self.bank
        stats = self._stats("replace", state, n, t0)
        log.info("replaced broadcast trees with %s: %d updates in %.2f s", stats.trees, n, stats.seconds)
        return stats

    def remove(self) -> InstallStats:
        """Delete every installed entry, host-port entry and group."""
        t0 = time.perf_counter()
        updates = {sw: rep.deletes() for sw, rep in self.state.items()}
        if updates:
            self.controller.write(updates)
        stats = self._stats("remove", self.state, sum(map(len, updates.values())), t0)
        self.state, self.trees = {}, {}
        return stats
