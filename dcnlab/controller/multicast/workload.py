"""Multicast workloads: process-grid communicators, random joins, and groups files (C-MR4LMS (Chen et al.), §4.1:
the experiments' communication patterns).

Pattern syntax (``--pattern``):

* ``AxB`` / ``AxBxC`` with optional ``:ppn=P`` — a 2-D or 3-D process grid, A fastest, placed on the
  terminals in index order with P processes per terminal (default 1); one group per grid line, in
  direction order (all x-lines, then y-lines, then z-lines).  No global communicator is added (the
  paper's group counts, e.g. 576 for 512×64, count lines only).  512×64 at ppn 1 is the paper's
  topology-matched case: its 64 x-lines of 512 terminals each fill one CN of the paper instance.
  ``:order=O`` sets the order in which the lines join (the paper never states it):
  a permutation of the directions (``xyz``, the default, ``zyx``, ``yxz``, ...: every line of the first
  direction, then the next), or ``shuffle`` (a random order, drawn from ``:seed=S``, default 0).  The
  MGIDs (layers) do not depend on the order; which groups merge does, and MR4LMS's merges snowball
  differently (:mod:`dcnlab.results.open_settings`).
* ``random:G`` with optional ``:seed=S`` and ``:ppn=P`` — every process of every terminal joins one of G
  groups uniformly at random ("processes randomly join a group").  **Decision**: the groups are split into
  P layers (group g in layer g mod P) and process n of each terminal joins a group of layer n, so a
  terminal is in at most one group per layer (the paper's MGID-layer rule); empty groups are dropped.

MGIDs come from :mod:`dcnlab.controller.multicast.layers`.  A groups file is JSON
``[{"mgid": int, "members": [terminal names]}, ...]`` with the MGIDs used as given.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.layers import (
    DIRS,
    MAX_MGID,
    apportion,
    color_ranges,
    direction_layers,
    grid_lines,
    layer_mgids,
)
from dcnlab.controller.multicast.mapping import SptMapping
from dcnlab.topos.errors import UserError
from dcnlab.topos.inputs import MAX_INPUT_BYTES, quote, read_json
from dcnlab.topos.numbers import MAX_DIGITS, UINT

PATTERN_HELP = "AxB[:ppn=P][:order=O[:seed=S]], AxBxC[:ppn=P][:order=O[:seed=S]] or random:G[:seed=S][:ppn=P]"
ORDER_HELP = "a permutation of the grid's directions (xyz, zyx, ...) or shuffle"
MAX_GROUPS = MAX_MGID + 1
"""Groups of a pattern at most: each needs its own MGID, and the data plane's are 16 bits."""
MAX_PROCESSES = 1 << 20
"""Processes of a workload at most (grid cells, or terminals x ppn for random; the paper's largest
pattern has 130,000)."""
MAX_PPN = 1024
MAX_SEED = 2**32 - 1
MAX_GROUPS_FILE_BYTES = MAX_INPUT_BYTES
"""A groups file is read up to this size (64 MiB of JSON; ``/dev/zero`` is an error, not a hang)."""


@dataclass(frozen=True)
class GroupSpec:
    mgid: int
    members: tuple[int, ...]
    """Terminal (host) indices, sorted."""
    label: str = ""
    layer: int = -1


@dataclass(frozen=True)
class LayerInfo:
    layer: int
    label: str
    """e.g. ``y/2`` = third layer of the y-lines."""
    method: str
    groups: int
    colors: tuple[int, int]
    """Color interval [first, last+1)."""


@dataclass(frozen=True)
class Workload:
    name: str
    ppn: int
    processes: int
    groups: tuple[GroupSpec, ...]
    layers: tuple[LayerInfo, ...] = ()


@dataclass(frozen=True)
class Pattern:
    text: str
    dims: tuple[int, ...] = ()
    random_groups: int = 0
    seed: int = 0
    ppn: int = 1
    order: str = ""
    """Join order of a grid's lines: a permutation of its directions or ``shuffle``; empty: x, y, z."""


def parse_pattern(text: str) -> Pattern:
    """Parse ``--pattern``; :class:`UserError` naming the bad part.

    Numbers are ASCII digits only, and sizes are bounded here, arithmetically, before anything is
    built: at most :data:`MAX_GROUPS` groups (the data plane's 16-bit MGIDs), :data:`MAX_PROCESSES`
    grid processes and :data:`MAX_PPN` processes per terminal."""
    parts = [s.strip() for s in text.strip().split(":")]
    head, opts = parts[0], parts[1:]
    random_groups = 0
    dims: tuple[int, ...] = ()
    if head == "random":
        if not opts or not UINT.fullmatch(opts[0]) or len(opts[0]) > MAX_DIGITS:
            raise UserError(f"pattern {text!r}: random needs a group count, e.g. random:1000; valid: {PATTERN_HELP}")
        random_groups = int(opts.pop(0))
        if not 1 <= random_groups <= MAX_GROUPS:
            raise UserError(f"pattern {text!r}: group count {random_groups} is out of range; valid: "
                            f"1..{MAX_GROUPS} (MGIDs are 16 bits)")
    elif re.fullmatch(rf"[0-9]{{1,{MAX_DIGITS}}}(x[0-9]{{1,{MAX_DIGITS}}}){{1,2}}", head):
        dims = tuple(int(v) for v in head.split("x"))
        if min(dims) < 1:
            raise UserError(f"pattern {text!r}: every grid dimension must be >= 1")
        processes = math.prod(dims)
        if processes > MAX_PROCESSES:
            raise UserError(f"pattern {text!r} has {processes:,} processes; valid: at most {MAX_PROCESSES:,}")
        lines = sum(processes // d for d in dims)
        if lines > MAX_GROUPS:
            raise UserError(f"pattern {text!r} has {lines:,} grid lines (groups); valid: at most {MAX_GROUPS:,} "
                            f"(MGIDs are 16 bits)")
    else:
        raise UserError(f"pattern {text!r} is not understood; valid: {PATTERN_HELP}")
    values = {"ppn": 1, "seed": 0}
    order = ""
    shuffled = any(o.replace(" ", "") == "order=shuffle" for o in opts)
    for opt in opts:
        key, eq, raw = opt.partition("=")
        if eq and key == "order" and not random_groups:
            order = raw.strip()
            if order != "shuffle" and sorted(order) != sorted(DIRS[:len(dims)]):
                raise UserError(f"pattern {text!r}: order={raw[:20]!r} is not understood; valid: {ORDER_HELP}")
            continue
        if not eq or key not in values or (key == "seed" and not (random_groups or shuffled)):
            valid = "ppn, seed" if random_groups else "ppn, order" + (", seed" if shuffled else "")
            raise UserError(f"pattern {text!r}: unknown option {opt[:40]!r}; valid options: {valid}")
        if not UINT.fullmatch(raw) or len(raw) > MAX_DIGITS:
            raise UserError(f"pattern {text!r}: option {key}={raw!r} must be a non-negative integer (ASCII digits)")
        values[key] = int(raw)
    if not 1 <= values["ppn"] <= MAX_PPN:
        raise UserError(f"pattern {text!r}: ppn={values['ppn']} is out of range; valid: 1..{MAX_PPN}")
    if values["seed"] > MAX_SEED:
        raise UserError(f"pattern {text!r}: seed={values['seed']} is out of range; valid: 0..{MAX_SEED}")
    return Pattern(text, dims, random_groups, values["seed"], values["ppn"], order)


def build_pattern(h: Hierarchy, pattern: Pattern | str, mapping: SptMapping) -> Workload:
    """The groups of ``pattern`` on fabric ``h`` with layered MGIDs for ``mapping``."""
    pat = parse_pattern(pattern) if isinstance(pattern, str) else pattern
    if pat.random_groups:
        return _random(h, pat, mapping)
    return _grid(h, pat, mapping)


def _fits(h: Hierarchy, pat: Pattern, processes: int) -> None:
    need = -(-processes // pat.ppn)
    if need > h.num_hosts:
        raise UserError(f"pattern {pat.text!r} has {processes:,} processes; at ppn={pat.ppn} it needs {need:,} "
                        f"terminals but {h.fabric.spec} has only {h.num_hosts:,}")


def _grid(h: Hierarchy, pat: Pattern, mapping: SptMapping) -> Workload:
    dims = pat.dims
    processes = int(np.prod(dims))
    _fits(h, pat, processes)
    directions = grid_lines(dims, pat.ppn)
    dlayers = [direction_layers(dims, lines, pat.ppn) for lines in directions]
    infos: list[tuple[str, str, int]] = []
    layer_of: list[int] = []
    members: list[tuple[int, ...]] = []
    labels: list[str] = []
    for lines, dl in zip(directions, dlayers):
        base = len(infos)
        counts = np.bincount(dl.line_layer, minlength=dl.layers)
        for j in range(dl.layers):
            infos.append((f"{DIRS[dl.direction]}/{j}", dl.method, int(counts[j])))
        others = [f"{DIRS[i]}=" for i in range(len(dims)) if i != dl.direction]
        shape = tuple(dims[i] for i in range(len(dims)) if i != dl.direction)
        n = len(lines.members)
        layer_of.extend((base + dl.line_layer[:n]).tolist())
        members.extend(tuple(mem.tolist()) for mem in lines.members)
        coords = zip(*(c.tolist() for c in np.unravel_index(np.arange(n), shape, order="F")))
        head = f"{DIRS[dl.direction]}-line "
        labels.extend(head + ",".join(a + str(c) for a, c in zip(others, cs)) for cs in coords)
    return join_order(_finish(pat, processes, infos, layer_of, members, labels, mapping), pat.order, pat.seed)


def join_order(wl: Workload, order: str, seed: int = 0) -> Workload:
    """``wl`` with its groups in the join ``order``: a permutation of the directions (each group's
    label names its line's direction; stable within a direction), ``shuffle`` (a random permutation from
    ``seed``), or empty / ``xyz`` for the order built (x-lines, then y, then z)."""
    if not order or order == DIRS[:len(order)]:
        return wl
    if order == "shuffle":
        perm = np.random.default_rng(seed).permutation(len(wl.groups))
        groups = tuple(wl.groups[int(i)] for i in perm)
    else:
        rank = {d: i for i, d in enumerate(order)}
        groups = tuple(sorted(wl.groups, key=lambda g: rank[g.label[:1]]))
    return Workload(wl.name, wl.ppn, wl.processes, groups, wl.layers)


def _random(h: Hierarchy, pat: Pattern, mapping: SptMapping) -> Workload:
    g, ppn = pat.random_groups, pat.ppn
    if ppn * h.num_hosts > MAX_PROCESSES:
        raise UserError(f"pattern {pat.text!r}: every process of every terminal joins, {ppn} x {h.num_hosts:,} = "
                        f"{ppn * h.num_hosts:,} processes; valid: at most {MAX_PROCESSES:,}")
    if g < ppn:
        raise UserError(f"pattern {pat.text!r}: random needs at least ppn={ppn} groups (one layer per process slot)")
    rng = np.random.default_rng(pat.seed)
    terms = np.arange(h.num_hosts, dtype=np.int64)
    per_layer = [np.arange(n, g, ppn) for n in range(ppn)]
    joined: list[list[int]] = [[] for _ in range(g)]
    for n in range(ppn):
        choice = per_layer[n][rng.integers(0, per_layer[n].size, size=terms.size)]
        order = np.argsort(choice, kind="stable")
        cuts = np.flatnonzero(np.diff(choice[order])) + 1
        for block in np.split(order, cuts):
            joined[int(choice[block[0]])] = terms[block].tolist()
    infos = [(f"slot/{n}", "random", 0) for n in range(ppn)]
    layer_of, members, labels = [], [], []
    for gid in range(g):
        if joined[gid]:
            layer_of.append(gid % ppn)
            members.append(tuple(joined[gid]))
            labels.append(f"random group {gid}")
    counts = np.bincount(layer_of, minlength=ppn)
    infos = [(lab, meth, int(counts[i])) for i, (lab, meth, _) in enumerate(infos)]
    return _finish(pat, ppn * h.num_hosts, infos, layer_of, members, labels, mapping)


def _finish(pat: Pattern, processes: int, infos: list[tuple[str, str, int]], layer_of: list[int],
            members: list[tuple[int, ...]], labels: list[str], mapping: SptMapping) -> Workload:
    seats = apportion([n for _, _, n in infos], mapping.colors)
    ranges = color_ranges(seats)
    mgids = layer_mgids(layer_of, ranges, mapping)
    if mgids and max(mgids) > MAX_MGID:
        raise UserError(f"pattern {pat.text!r}: {len(mgids):,} groups need MGIDs up to {max(mgids):,} with "
                        f"{mapping.colors} colors; valid: MGIDs 0..{MAX_MGID} (16 bits): fewer groups or more colors")
    groups = tuple(GroupSpec(mg, mem, lab, lay) for mg, mem, lab, lay in zip(mgids, members, labels, layer_of))
    layers = tuple(LayerInfo(i, lab, meth, n, ranges[i]) for i, (lab, meth, n) in enumerate(infos))
    return Workload(pat.text, pat.ppn, processes, groups, layers)


@dataclass(frozen=True)
class GroupsFile:
    """A groups file checked on its own (shape, MGIDs, member lists, sizes): names not yet resolved."""

    path: str
    groups: tuple[tuple[int, tuple[str, ...], str], ...]
    """(mgid, member names, label) per group, in file order."""


def read_groups_file(path: str | Path) -> GroupsFile:
    """Read a groups file and check everything that does not need the fabric, before any fabric is
    built: :class:`UserError` naming the file, the item and what is wrong (a member listed twice, an
    MGID used twice, more than :data:`MAX_PROCESSES` memberships). Linear in the file's size."""
    p = Path(path)
    data = read_json(p, "groups file", MAX_GROUPS_FILE_BYTES)
    shape = 'a JSON list of {"mgid": int, "members": [terminal names]}'
    if not isinstance(data, list) or not data:
        raise UserError(f"groups file {str(p)!r}: expected {shape} with at least one group")
    groups, seen = [], set()
    memberships = 0
    for n, item in enumerate(data):
        where = f"groups file {str(p)!r}: item {n}"
        if not isinstance(item, dict) or set(item) - {"mgid", "members", "label"} or "mgid" not in item \
                or "members" not in item:
            raise UserError(f"{where}: expected {{\"mgid\": int, \"members\": [terminal names]}}, got "
                            f"{quote(item)}")
        mgid = item["mgid"]
        if not isinstance(mgid, int) or isinstance(mgid, bool) or not 0 <= mgid <= MAX_MGID:
            raise UserError(f"{where}: mgid must be a non-negative integer of 16 bits (0..{MAX_MGID}), "
                            f"got {quote(mgid)}")
        if mgid in seen:
            raise UserError(f"{where}: mgid {mgid} appears twice")
        seen.add(mgid)
        names = item["members"]
        if not isinstance(names, list) or not names or not all(isinstance(s, str) for s in names):
            raise UserError(f"{where} (mgid {mgid}): members must be a non-empty list of terminal names")
        memberships += len(names)
        if memberships > MAX_PROCESSES:
            raise UserError(f"{where} (mgid {mgid}): more than {MAX_PROCESSES:,} members over all groups; "
                            f"valid: at most {MAX_PROCESSES:,}")
        listed: set[str] = set()
        for name in names:          # a set, not names.count(): 32,768 members took 34 s that way
            if name in listed:
                raise UserError(f"{where} (mgid {mgid}): member {quote(name)} is listed twice")
            listed.add(name)
        label = item.get("label", "")
        groups.append((mgid, tuple(names), label if isinstance(label, str) else str(label)))
    return GroupsFile(str(p), tuple(groups))


def resolve_groups(h: Hierarchy, file: GroupsFile) -> Workload:
    """The workload of a :func:`read_groups_file` result on fabric ``h``: every name must be a terminal."""
    index: dict[str, int] = {}
    groups = []
    for n, (mgid, names, label) in enumerate(file.groups):
        hosts = []
        for name in names:
            if name not in index:
                try:
                    index[name] = h.host_index(name)
                except UserError as e:
                    raise UserError(f"groups file {file.path!r}: item {n} (mgid {mgid}): {e}") from None
            hosts.append(index[name])
        groups.append(GroupSpec(mgid, tuple(sorted(hosts)), label))
    return Workload(file.path, 1, sum(len(g.members) for g in groups), tuple(groups))


def load_groups_file(h: Hierarchy, path: str | Path) -> Workload:
    """Read a groups file for fabric ``h`` (:func:`read_groups_file`, then :func:`resolve_groups`)."""
    return resolve_groups(h, read_groups_file(path))
