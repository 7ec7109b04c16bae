"""Non-interfering job allocation: C-MR4LMS (Chen et al.), rules 1)–7), Theorem 4.

Jobs are classed by terminal count and placed so that no two jobs share a link; then groups of different
jobs may share a spanning tree without conflict, and each job can create C·m groups without merging
(given MGID layers inside the job).

Rules: (1) a terminal belongs to one job; (2) a T0 job lies under one L0; (3) a T1 job in one CN; (4) a T2
job in one CN group (equal ``cnid div w``); (5) an L0 may hold many T0 jobs but at most one job of class
≥ T1; (6) a CN may hold many T1 jobs but at most one of class ≥ T2; (7) a CN group may hold many T2 jobs
but at most one T3 job.

**Decision on the class thresholds.**  The paper uses m, m² and w·m², which equal the capacities of an
L0, a CN and a CN group only when q = m and there are m terminals per L0.  The paper instance has 512
terminals per CN, not m² = 256, so we class by the real capacities: T0 ≤ terminals per L0, T1 ≤ terminals
per CN, T2 ≤ terminals per CN group, T3 larger.  The k-ary fat-tree has no CN-group level: a job larger
than a pod is T3 there (no T2 class).

**Placement** is first fit in terminal order: a job takes free terminals only from switches its class may
still use (an L0 without a ≥ T1 job, a CN without a ≥ T2 job, a CN group without a T3 job), filling each
L0 before the next so that it touches as few switches as possible.  A job that fits nowhere (also through
fragmentation) is refused with a reason; it is never promoted to a larger class.
"""

from __future__ import annotations

from dataclasses import dataclass

from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.topos.errors import UserError

CLASSES = ("T0", "T1", "T2", "T3")


@dataclass(frozen=True)
class Job:
    job: int
    size: int
    cls: str
    terminals: tuple[int, ...]


@dataclass(frozen=True)
class Refused:
    job: int
    size: int
    cls: str
    reason: str


class JobAllocator:
    """Rules 1–7 on one fat-tree; jobs can be released and the space reused."""

    def __init__(self, h: Hierarchy) -> None:
        self.h = h
        self.l0s = h.num_hosts // h.t
        self.cns = self.l0s // h.divisors[0]
        self.groups = self.cns // h.divisors[1] if len(h.divisors) > 1 else 1
        self.caps = [h.t, h.t * h.divisors[0]] + ([h.t * h.divisors[0] * h.divisors[1]] if len(h.divisors) > 1
                                                  else [])
        self._owner = [-1] * h.num_hosts
        self._l0_big = [-1] * self.l0s
        self._cn_big = [-1] * self.cns
        self._grp_big = [-1] * self.groups
        self._jobs: dict[int, Job] = {}
        self._next = 0

    def classify(self, size: int) -> str:
        if size < 1:
            raise UserError(f"allocation: job size {size} is out of range; valid: size >= 1")
        if size > self.h.num_hosts:
            raise UserError(f"allocation: job size {size} exceeds the {self.h.num_hosts} terminals of the fabric")
        for cls, cap in zip(CLASSES, self.caps):
            if size <= cap:
                return cls
        return "T3"

    def jobs(self) -> list[Job]:
        return list(self._jobs.values())

    def allocate(self, size: int) -> Job | Refused:
        cls = self.classify(size)
        jid = self._next
        self._next += 1
        level = CLASSES.index(cls)
        t, q = self.h.t, self.h.divisors[0]
        w = self.h.divisors[1] if len(self.h.divisors) > 1 else self.cns
        if level == 0:
            for l0 in range(self.l0s):
                free = [x for x in range(l0 * t, (l0 + 1) * t) if self._owner[x] < 0]
                if len(free) >= size:
                    return self._take(jid, cls, free[:size])
            return Refused(jid, size, cls, f"no L0 switch has {size} free terminals")
        # the scopes a job of this class may span: one CN (T1), one CN group (T2), the fabric (T3)
        scope = [q, q * w, self.l0s][min(level - 1, 2)]
        for first in range(0, self.l0s, scope):
            picked: list[int] = []
            for l0 in range(first, min(first + scope, self.l0s)):
                if self._l0_big[l0] >= 0 or (level >= 2 and self._cn_big[l0 // q] >= 0) or \
                        (level >= 3 and self._grp_big[l0 // (q * w)] >= 0):
                    continue
                picked.extend(x for x in range(l0 * t, (l0 + 1) * t) if self._owner[x] < 0)
                if len(picked) >= size:
                    job = self._take(jid, cls, picked[:size])
                    for x in job.terminals:
                        l0x = x // t
                        self._l0_big[l0x] = jid
                        if level >= 2:
                            self._cn_big[l0x // q] = jid
                        if level >= 3:
                            self._grp_big[l0x // (q * w)] = jid
                    return job
        where = {1: "CN", 2: "CN group", 3: "fabric"}[level]
        return Refused(jid, size, cls, f"no {where} has {size} free terminals on switches a {cls} job may use")

    def release(self, job: int) -> None:
        j = self._jobs.pop(job)
        for x in j.terminals:
            self._owner[x] = -1
        for arr in (self._l0_big, self._cn_big, self._grp_big):
            for i, v in enumerate(arr):
                if v == job:
                    arr[i] = -1

    def _take(self, jid: int, cls: str, terminals: list[int]) -> Job:
        for x in terminals:
            self._owner[x] = jid
        job = Job(jid, len(terminals), cls, tuple(terminals))
        self._jobs[jid] = job
        return job


def footprint(h: Hierarchy, terminals: tuple[int, ...] | list[int]) -> set[int]:
    """Every link any up/down multicast tree among ``terminals`` can use, on any spanning tree and root:
    their terminal links, and all up-links of every level below the highest level they span."""
    keys = [{x // h.t for x in terminals}]
    for d in h.divisors:
        keys.append({k // d for k in keys[-1]})
    links = set(terminals)
    for lv, ks in enumerate(keys):
        if len(ks) == 1:
            break
        for tn in range(h.num_tns):
            for x in range(h.w if lv == h.top - 1 else 1):
                if lv == 0 and tn % h.p:
                    continue
                links.update(h.uplinks(lv, ks, tn, x))
    return links
