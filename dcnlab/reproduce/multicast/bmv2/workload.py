"""The experiment's workload: jobs placed on the fabric and the multicast groups they create.

**Workload: jobs.**  Jobs arrive and leave; :class:`dcnlab.controller.multicast.allocation.JobAllocator` places them
by rules 1–7 (no two jobs share a link).  A job with a process grid (1 process per terminal) creates one
group per grid line with at least two members plus one group of the whole job (its "world"); MGIDs come
from the job's own MGID layers (:mod:`dcnlab.controller.multicast.layers`: rows, columns, world; colors split
between the layers by D'Hondt) and are made unique across jobs by adding multiples of C·m/2, which keeps
each group's color and spanning tree.  Default: an 8-terminal job with a 4×2 grid, a 4-terminal job with
2×2 and two 2-terminal jobs (world only) = 14 groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dcnlab.reproduce.multicast.bmv2.setup import JobSpec
from dcnlab.topos.errors import UserError


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
    from dcnlab.controller.multicast.layers import (
        DIRS,
        apportion,
        color_ranges,
        direction_layers,
        grid_lines,
        layer_mgids,
    )

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
