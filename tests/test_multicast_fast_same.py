"""The fast multicast planners give what straightforward implementations of their rules give.

MR4LMS-like scores every root candidate at once on numpy masks, keeps loads as arrays and a merging group's
key counts incrementally; here :func:`reference_mr4lms` re-does each decision from scratch (every candidate's
tree as a link set, the colors on it read from every tree, loads sorted as Python dicts) and the two must build
the same trees, in the same order, with the same ids, on many random instances. C-MR4LMS keeps its (link, color)
owners per color: they must be exactly the links of its trees. Grid workloads, built per direction in numpy,
must equal the per-line construction; :func:`plan_metrics` must equal ``plan(...).metrics``."""

from __future__ import annotations

import gc
import itertools
import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from dcnlab.controller.multicast.baselines import MR4LMSLike
from dcnlab.controller.multicast.cmr4lms import CMR4LMS, _Probe
from dcnlab.controller.multicast.hierarchy import Hierarchy, hierarchy_for
from dcnlab.controller.multicast.layers import DIRS, direction_layers, grid_lines
from dcnlab.controller.multicast.planning import gc_paused, mapping_for, plan, plan_metrics
from dcnlab.controller.multicast.tree import shape, tree_links
from dcnlab.controller.multicast.workload import (GroupSpec, Workload, _finish, _fits, build_pattern, join_order,
                                                  parse_pattern)
from dcnlab.topos import parse_spec

SPECS = ["midplane:q=2,m=2,p=2,k=4,w=2,cns=8,terminals=2", "midplane:q=3,m=3,p=2,k=2,w=3,cns=6,terminals=2",
         "fattree:k=4", "fattree:k=6"]


def _candidates(h: Hierarchy, level: int) -> list[tuple[int, int]]:
    if level == 0:
        return [(0, 0)]
    if level == 1:
        return [(g * h.p, 0) for g in range(h.m)]
    if level == h.top:
        return [(t, x) for t in range(h.num_tns) for x in range(h.w)]
    return [(t, 0) for t in range(h.num_tns)]


def reference_mr4lms(h: Hierarchy, colors: int, groups: list[tuple[int, list[int]]],
                     merge: str = "any-color") -> tuple[list[tuple[Any, ...]], dict[int, int]]:
    """MR4LMS-like (:mod:`dcnlab.controller.multicast.baselines`' docstring) decision by decision: candidates by
    load then node order; while some color has no tree, the first candidate with a free color and its lowest;
    else the lowest color free on some candidate, on the first such; else merge the trees holding the color
    with the fewest trees on the least-loaded candidate's tree and place the union again."""
    trees: dict[int, dict[str, Any]] = {}
    load: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
    tids = itertools.count()
    tree_of: dict[int, int] = {}
    for mgid, members in groups:
        gset, hosts, fixed = {mgid}, dict.fromkeys(members, 1), None
        exclude: set[int] = set()
        while True:
            cnts, level = shape(h, hosts)
            key = next(iter(cnts[level])) if level < h.top else 0
            cls = (level, 0 if level == h.top else key)
            ld = load.get(cls, {})
            order = sorted(_candidates(h, level), key=lambda c: ld.get(c, 0))
            used: dict[tuple[int, int], dict[int, set[int]]] = {}
            for c in order:
                links = tree_links(h, hosts, cnts, level, *c)
                used[c] = {}
                for tid, t in trees.items():
                    if tid not in exclude and t["links"] & links:
                        used[c].setdefault(t["color"], set()).add(tid)
            per_color = Counter(t["color"] for t in trees.values())
            found = None
            if fixed is not None:
                hit = next((c for c in order if fixed not in used[c]), None)
                found = (hit, fixed) if hit is not None else None
            elif any(per_color[k] == 0 for k in range(colors)):
                for c in order:
                    free = [k for k in range(colors) if k not in used[c]]
                    if free:
                        found = (c, free[0])
                        break
            else:
                for k in range(colors):
                    hit = next((c for c in order if k not in used[c]), None)
                    if hit is not None:
                        found = (hit, k)
                        break
            if found is not None:
                for tid in exclude:
                    old = trees.pop(tid)
                    if old["level"]:
                        load[old["cls"]][old["cand"]] -= 1
                (tn, x), color = found
                tid = next(tids)
                trees[tid] = {"color": color, "tn": tn, "x": x, "level": level, "key": key, "groups": set(gset),
                              "hosts": dict(hosts), "links": tree_links(h, hosts, cnts, level, tn, x), "cls": cls,
                              "cand": (tn, x)}
                if level:
                    load.setdefault(cls, {})
                    load[cls][(tn, x)] = load[cls].get((tn, x), 0) + 1
                for g in gset:
                    tree_of[g] = tid
                break
            u = used[order[0]]
            pick = fixed if fixed is not None else min(sorted(u), key=lambda k: len(u[k]))
            if merge == "same-color":
                fixed = pick
            for tid in u[pick]:
                gset |= trees[tid]["groups"]
                for host, n in trees[tid]["hosts"].items():
                    hosts[host] = hosts.get(host, 0) + n
            exclude |= u[pick]
    out = [(tid, t["color"], t["tn"], t["x"], t["level"], t["key"], tuple(sorted(t["groups"])),
            frozenset(t["links"])) for tid, t in trees.items()]
    return out, tree_of


def _random_groups(rng: random.Random, h: Hierarchy, n: int, most: int) -> list[tuple[int, list[int]]]:
    out = []
    for mgid in range(n):
        if rng.random() < 0.3:      # a block of neighbours (a low root), else anywhere
            first = rng.randrange(h.num_hosts)
            members = list(range(first, min(h.num_hosts, first + rng.randint(1, most))))
        else:
            members = rng.sample(range(h.num_hosts), rng.randint(1, min(most, h.num_hosts)))
        out.append((mgid, members))
    return out


def _fast_mr4lms(h: Hierarchy, colors: int, groups: list[tuple[int, list[int]]],
                 merge: str = "any-color") -> tuple[list[tuple[Any, ...]], dict[int, int], int]:
    pl = MR4LMSLike(h, colors, merge=merge)
    for mgid, members in groups:
        pl.add_group(mgid, members)
    out = [(t.tid, t.color, t.tnid, t.x, t.level, t.root_key, t.groups, t.links) for t in pl.trees()]
    return out, {g: pl.tree_id(g) for g, _ in groups}, pl.merges


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("merge", ["any-color", "same-color"])
def test_mr4lms_equals_reference(spec, merge):
    h = hierarchy_for(parse_spec(spec))
    merged = 0
    for seed in range(12):
        rng = random.Random(seed)
        colors = rng.choice([1, 2, 3, 4, 8])
        groups = _random_groups(rng, h, rng.randint(5, 40), rng.choice([3, 8, h.num_hosts]))
        fast, fast_of, merges = _fast_mr4lms(h, colors, groups, merge)
        ref, ref_of = reference_mr4lms(h, colors, groups, merge)
        assert fast == ref, (spec, seed, colors)
        assert fast_of == ref_of
        merged += merges
    assert merged > 0       # the instances do merge


def test_mr4lms_equals_reference_large_groups_and_many_colors():
    """Virtual groups of 256 terminals and more (the numpy key counts) and more than 64 colors (Python-int masks)."""
    h = hierarchy_for(parse_spec("fattree:k=12"))      # 432 terminals, 36 cores
    for seed, colors in ((1, 2), (2, 3), (3, 70)):
        rng = random.Random(seed)
        groups = _random_groups(rng, h, 30 if colors < 64 else 80, 120)
        fast, fast_of, merges = _fast_mr4lms(h, colors, groups)
        ref, ref_of = reference_mr4lms(h, colors, groups)
        assert fast == ref and fast_of == ref_of, (seed, colors)
        assert colors > 64 or merges > 0
        assert colors > 64 or max(len(t[7]) for t in fast) > 256


@pytest.mark.parametrize("spec", SPECS[:3])
@pytest.mark.parametrize("variant,scope", [("fixed", None), ("dynamic", "tn"), ("dynamic", "group")])
def test_cmr4lms_owners_are_its_trees_links(spec, variant, scope):
    """After every add, join and leave, the per-color owners are exactly the trees' (link, color)s, and a probe's
    owners of any links are the trees on them in its color, less the excluded ones."""
    h = hierarchy_for(parse_spec(spec))
    for seed in range(6):
        rng = random.Random(seed)
        colors = rng.choice([1, 2, 4])
        pl = CMR4LMS(h, colors, variant, scope)
        for step in range(40):
            groups = pl.groups()
            if step < 15 or rng.random() < 0.5 or not groups:
                mgid = rng.randrange(20)
                if mgid in groups or rng.random() < 0.5:
                    pl.join(mgid, rng.randrange(h.num_hosts))
                else:
                    pl.add_group(mgid, rng.sample(range(h.num_hosts), rng.randint(1, 6)))
            else:
                mgid = rng.choice(sorted(groups))
                pl.leave(mgid, rng.choice(sorted(groups[mgid])))
            want = {(lk, t.color): t.tid for t in pl.trees() for lk in t.links}
            assert pl._owner == {lk * colors + c: tid for (lk, c), tid in want.items()}
            for _ in range(5):
                color = rng.randrange(colors)
                links = rng.sample(range(h.num_links), 6) + [lk for lk, c in want if c == color][:4]
                exclude = set(rng.sample(sorted({t.tid for t in pl.trees()}), min(1, len(pl.trees()))))
                probe = _Probe(pl, {}, [{} for _ in range(h.top)], None, 0, color, exclude, None)
                assert probe.owners(links) == {want[(lk, color)] for lk in links if (lk, color) in want} - exclude
                assert all(pl.owner(lk, color) == want.get((lk, color)) for lk in links)


def _grid_per_line(h: Hierarchy, text: str) -> Workload:
    """A grid workload built line by line (as ``workload._grid`` did before it built a direction at once)."""
    pat = parse_pattern(text)
    dims = pat.dims
    processes = int(np.prod(dims))
    _fits(h, pat, processes)
    infos: list[tuple[str, str, int]] = []
    layer_of: list[int] = []
    members: list[tuple[int, ...]] = []
    labels: list[str] = []
    for lines in grid_lines(dims, pat.ppn):
        dl = direction_layers(dims, lines, pat.ppn)
        base = len(infos)
        counts = np.bincount(dl.line_layer, minlength=dl.layers)
        for j in range(dl.layers):
            infos.append((f"{DIRS[dl.direction]}/{j}", dl.method, int(counts[j])))
        others = [DIRS[i] for i in range(len(dims)) if i != dl.direction]
        shp = tuple(dims[i] for i in range(len(dims)) if i != dl.direction)
        for line, mem in enumerate(lines.members):
            layer_of.append(base + int(dl.line_layer[line]))
            members.append(tuple(int(v) for v in mem))
            coords = np.unravel_index(line, shp, order="F")
            labels.append(f"{DIRS[dl.direction]}-line " + ",".join(f"{a}={int(c)}" for a, c in zip(others, coords)))
    wl = _finish(pat, processes, infos, layer_of, members, labels, mapping_for(h, 32))
    return join_order(wl, pat.order, pat.seed)


def test_grid_workload_equals_per_line_construction():
    h = hierarchy_for(parse_spec("fattree:k=8"))       # 128 terminals
    rng = random.Random(5)
    texts = ["5x4", "7x3x2:ppn=2", "4x4x4:order=zyx", "6x5:ppn=3:order=yx", "3x5x7:ppn=4:order=shuffle:seed=9"]
    for _ in range(25):
        dims = [rng.randint(1, 9) for _ in range(rng.choice([2, 3]))]
        ppn = rng.choice([1, 2, 3, 4])
        if np.prod(dims) > 128 * ppn:
            continue
        order = rng.choice(["", ":order=" + "".join(rng.sample(DIRS[:len(dims)], len(dims))),
                            f":order=shuffle:seed={rng.randrange(100)}"])
        texts.append("x".join(map(str, dims)) + f":ppn={ppn}" + order)
    for text in texts:
        fast = build_pattern(h, text, mapping_for(h, 32))
        assert fast == _grid_per_line(h, text), text
        assert all(type(v) is int for g in fast.groups for v in (*g.members, g.mgid, g.layer))
        assert all(isinstance(g, GroupSpec) and isinstance(g.members, tuple) for g in fast.groups)


@pytest.mark.parametrize("algo", ["cmr4lms-fixed", "cmr4lms-dynamic", "mr4lms", "opensm", "global"])
def test_plan_metrics_equals_plan(algo):
    h = hierarchy_for(parse_spec(SPECS[0]))
    for text in ("4x4:ppn=2", "random:12:seed=3"):
        wl = build_pattern(h, text, mapping_for(h, 4))
        skip = {"seconds", "cpu_seconds"}
        full = {k: v for k, v in plan(h, wl, algo, 4).metrics.as_dict().items() if k not in skip}
        fast = {k: v for k, v in plan_metrics(h, wl, algo, 4).as_dict().items() if k not in skip}
        assert fast == full and full["groups"] + full["refused"] == len(wl.groups)


def test_gc_paused_restores_the_collector():
    was = gc.isenabled()
    try:
        gc.enable()
        with gc_paused():
            assert not gc.isenabled()
            with gc_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()
        with gc_paused(False):
            assert gc.isenabled()
        gc.disable()
        with pytest.raises(ValueError), gc_paused():
            raise ValueError("inside")
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
