"""The multicast planners' invariants over many generated workloads (seeded random loops; patterns with few colors).

No two trees of one color share a link; every member is on its group's tree (and each tree is exactly
its members' up-paths to its root); at most C entries per port; merging only adds links and keeps the
color and spanning tree (fixed variant, Theorem 2: one merge suffices); dual trees are link-disjoint
above L0; jobs placed by the allocator share no link.
"""

from __future__ import annotations

import random

import pytest

from dcnlab.controller.multicast.allocation import CLASSES, JobAllocator, Job, footprint
from dcnlab.controller.multicast.cmr4lms import CMR4LMS
from dcnlab.controller.multicast.dual import DualCMR4LMS
from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.planning import make_planner, mapping_for
from dcnlab.controller.multicast.workload import build_pattern
from test_multicast_model import check_invariants
from dcnlab.topos import parse_spec

MID = "midplane:q=2,m=2,p=2,k=4,w=2,cns=8,terminals=2"
MID3 = "midplane:q=3,m=3,p=2,k=2,w=3,cns=6,terminals=2"
FAT = "fattree:k=6"


def random_groups(rng: random.Random, n_hosts: int, count: int, spread: int) -> list[tuple[int, list[int]]]:
    """Groups of random size, members clustered around a random terminal (spread = window size)."""
    out = []
    for _ in range(count):
        size = rng.randint(1, 6)
        lo = rng.randrange(n_hosts)
        window = [(lo + d) % n_hosts for d in range(spread)]
        out.append((rng.randrange(200), rng.sample(window, min(size, len(window)))))
    return out


def snapshot(planner) -> dict[int, object]:
    return {g: planner.group_tree(g) for g in planner.groups()}


@pytest.mark.parametrize("spec", [MID, MID3, FAT])
@pytest.mark.parametrize("variant", ["fixed", "dynamic"])
@pytest.mark.parametrize("colors", [1, 2, 3])
def test_random_workloads(spec, variant, colors):
    h = hierarchy_for(parse_spec(spec))
    merges = refusals = 0
    for seed in range(12):
        rng = random.Random(seed * 31 + colors)
        pl = CMR4LMS(h, colors, variant)
        used: set[int] = set()
        for mgid, members in random_groups(rng, h.num_hosts, 25, rng.choice([4, 12, h.num_hosts])):
            if mgid in used:
                continue
            used.add(mgid)
            before = snapshot(pl)
            ch = pl.add_group(mgid, members)
            if not ch.accepted:
                refusals += 1
                assert "MGID layers" in ch.reason
                assert snapshot(pl) == before          # a refusal changes nothing
                continue
            new = pl.group_tree(mgid)
            assert set(members) <= new.links
            for g in ch.merged:
                old = before[g]
                merges += 1
                assert old.color == new.color
                if variant == "fixed":
                    assert old.links <= new.links       # merging only adds links
                    assert (old.tnid, old.x) == (new.tnid, new.x)
                    names = {n for e in new.directed_links(h) for n in e}
                    assert old.root(h) in names          # the old root stays on the (same) spanning tree
            if variant == "fixed":
                assert ch.merge_rounds <= 1              # Theorem 2
            for g, old in before.items():                # groups not involved keep their tree
                if g not in ch.merged:
                    assert pl.group_tree(g) == old
        check_invariants(h, pl, colors)
    assert merges > 0
    assert refusals >= 0


@pytest.mark.parametrize("spec,pattern,colors", [
    (MID, "8x4", 2), (MID, "4x4x2", 3), (MID, "4x4x2:ppn=2", 6), (MID, "random:40:seed=3:ppn=2", 4),
    (FAT, "9x6", 2), (FAT, "6x3x3:ppn=2", 6), (FAT, "random:30:seed=1", 2),
])
@pytest.mark.parametrize("algo", ["cmr4lms-fixed", "cmr4lms-dynamic", "mr4lms", "opensm", "global"])
def test_patterns_all_algorithms(spec, pattern, colors, algo):
    h = hierarchy_for(parse_spec(spec))
    wl = build_pattern(h, pattern, mapping_for(h, colors))
    pl = make_planner(h, algo, colors)
    for g in wl.groups:
        pl.add_group(g.mgid, g.members)
    if algo.startswith("cmr4lms"):
        assert not pl.refused                            # MGID layers prevent terminal conflicts
    if algo == "opensm":
        assert len(pl.groups()) == min(colors, len(wl.groups))
    trees = check_invariants(h, pl, colors)
    if algo == "global":
        assert len(trees) == 1 and all(x in trees[0].links for x in range(h.num_hosts))


@pytest.mark.parametrize("spec", [MID, MID3, FAT])
@pytest.mark.parametrize("variant", ["fixed", "dynamic"])
def test_dual_trees_link_disjoint_above_l0(spec, variant):
    h = hierarchy_for(parse_spec(spec))
    for seed in range(6):
        rng = random.Random(seed)
        pl = DualCMR4LMS(h, 2, variant)
        for mgid, members in random_groups(rng, h.num_hosts, 20, rng.choice([4, h.num_hosts])):
            if mgid not in pl.groups() and mgid not in pl.refused:
                pl.add_group(mgid, members)
        for plane in pl.planes:
            check_invariants(h, plane, 2)
        upper = [{lk for t in plane.trees() for lk in t.links if lk >= h.num_hosts} for plane in pl.planes]
        assert not upper[0] & upper[1]
        for mgid, members in pl.groups().items():
            a, b = pl.group_trees(mgid)
            assert set(members) <= a.links & b.links
            assert a.links & b.links <= set(range(h.num_hosts))
            if len({x // h.t for x in members}) > 1:   # more than one L0: two distinct roots
                assert a.root(h) != b.root(h)


def test_dual_entries_combine_at_l0():
    h = hierarchy_for(parse_spec(MID))
    pl = DualCMR4LMS(h, 2)
    pl.add_group(0, [0, 1, 4])                          # two L0s of CN 0 and CN 1
    tabs = pl.planes[0].trees() + pl.planes[1].trees()
    from dcnlab.controller.multicast.tree import port_tables
    tables = port_tables(h, tabs)
    a, b = pl.group_trees(0)
    l0, port = h.link_ends(0)[:2]
    out = tables[l0][(port, a.color)]
    ups = {p for p, lk in h.port_links(l0) if lk in a.links | b.links and lk >= h.num_hosts}
    assert ups <= out and len(ups) == 2                  # a member's packet enters both trees
    for p in ups:                                       # a copy never crosses into the other tree
        assert not (ups - {p}) & tables[l0][(p, a.color)]


# -- non-interfering job allocation (Theorem 4) --------------------------------------------------
@pytest.mark.parametrize("spec", ["midplane:q=2,m=2,p=2,k=4,w=2,cns=8,terminals=2",
                                  "midplane:q=4,m=2,p=1,k=2,w=3,cns=6,terminals=3", "fattree:k=6"])
def test_allocated_jobs_share_no_link(spec):
    h = hierarchy_for(parse_spec(spec))
    caps = [h.t, h.t * h.divisors[0]] + ([h.t * h.divisors[0] * h.divisors[1]] if len(h.divisors) > 1 else [])
    for seed in range(30):
        rng = random.Random(seed)
        alloc = JobAllocator(h)
        for _ in range(40):
            cap = rng.choice(caps + [h.num_hosts])
            res = alloc.allocate(rng.randint(1, max(1, cap // rng.choice([1, 2, 3]))))
            if isinstance(res, Job):
                assert res.cls == alloc.classify(res.size)
            if rng.random() < 0.15 and alloc.jobs():
                alloc.release(rng.choice(alloc.jobs()).job)
        jobs = alloc.jobs()
        owners: dict[int, int] = {}
        for j in jobs:
            level = CLASSES.index(j.cls)
            keys = [{x // h.t for x in j.terminals}]
            for d in h.divisors:
                keys.append({k // d for k in keys[-1]})
            assert all(len(keys[lv]) == 1 for lv in range(level, len(keys)))   # rules 2-4
            for lk in footprint(h, j.terminals):
                assert lk not in owners, f"jobs {owners[lk]} and {j.job} share link {h.link_ends(lk)}"
                owners[lk] = j.job


def test_jobs_reuse_spanning_trees_without_merging():
    """Groups of different jobs share spanning trees without conflict: each job makes C·m groups (same
    MGIDs in every job, same-color groups of a job disjoint) and nothing merges."""
    h = hierarchy_for(parse_spec("midplane:q=2,m=2,p=2,k=4,w=2,cns=8,terminals=2"))
    alloc = JobAllocator(h)
    jobs = [alloc.allocate(n) for n in (2, 3, 4, 9, 2, 5)]
    colors = 2
    pl = CMR4LMS(h, colors)
    rng = random.Random(5)
    for n, job in enumerate(jobs):
        assert isinstance(job, Job)
        for color in range(colors):
            terms = list(job.terminals)
            rng.shuffle(terms)
            for g in range(h.m):                       # the m groups of one color are member-disjoint
                part = terms[g::h.m] or terms[:1]
                if g >= len(terms):
                    continue
                mgid = 1000 * n + color * h.m + g
                ch = pl.add_group(mgid, part)
                assert ch.accepted and not ch.merged, (job, mgid, ch.reason)
    assert all(t.tfi == 1 for t in pl.trees())
    check_invariants(h, pl, colors)


def test_job_classes_and_refusal():
    h = hierarchy_for(parse_spec("midplane:"))
    alloc = JobAllocator(h)
    assert [alloc.classify(n) for n in (16, 17, 512, 513, 8192, 8193)] == ["T0", "T1", "T1", "T2", "T2", "T3"]
    ft = JobAllocator(hierarchy_for(parse_spec("fattree:k=4")))
    assert [ft.classify(n) for n in (2, 3, 4, 5)] == ["T0", "T1", "T1", "T3"]
    big = ft.allocate(16)
    assert isinstance(big, Job) and big.cls == "T3"
    res = ft.allocate(1)
    assert not isinstance(res, Job) and "free terminals" in res.reason
