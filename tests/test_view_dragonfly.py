"""The live view's Dragonfly drawing (dcnlab.view.dragonfly) and the label boxes it is checked with
(dcnlab.view.labels), without a browser: compact groups on a circle, framed and labelled, hosts outside,
global links between groups, local links inside them, and no two labels overlapping."""

from __future__ import annotations

import math

import pytest

from dcnlab.topos.spec import parse_spec
from dcnlab.view import layout
from dcnlab.view.labels import overlap, overlapping, ray_box, rect, text_width, topology_boxes

SPECS = ["dragonfly:p=1,a=4,h=2", "dragonfly:p=2,a=6,h=4", "dragonfly:p=1,a=4,h=2,arrangement=absolute",
         "dragonfly:p=2,a=4,h=2,arrangement=circulant", "dragonfly:p=2,a=6,h=4,arrangement=absolute",
         "dragonfly:p=2,a=6,h=4,arrangement=circulant", "dragonfly:p=5,a=1,h=1", "dragonfly:p=1,a=6,h=2",
         "dragonfly:p=0,a=8,h=4", "dragonfly:p=1,a=2,h=1", "dragonfly:p=3,a=3,h=1"]
"""The issue's two fabrics, every arrangement, the BMv2 congestion experiment's D(5,1,1), the BMv2 CIST
experiment's D(1,6,2), no hosts, and small odd ones."""


def _drawn(spec: str):
    fabric = parse_spec(spec)
    topo = layout.topology(fabric)
    pos = {n["id"]: (n["x"], n["y"]) for n in topo["nodes"]}
    return fabric, topo, pos


def _dist(p, q) -> float:
    return math.hypot(p[0] - q[0], p[1] - q[1])


@pytest.mark.parametrize("spec", SPECS)
def test_groups_are_compact_framed_labelled_clusters_on_a_circle_with_their_hosts_outside(spec):
    fabric, topo, pos = _drawn(spec)
    g, a = fabric.g, fabric.a
    groups = topo["groups"]
    assert [x["label"] for x in groups] == [f"G{i}" for i in range(g)]
    centre = (sum(x["x"] for x in groups) / g, sum(x["y"] for x in groups) / g)
    radii = [_dist((x["x"], x["y"]), centre) for x in groups]
    assert max(radii) - min(radii) < 1e-6 * max(radii) + 0.2                 # the frames' centres on one circle
    apart = min(_dist((x["x"], x["y"]), (y["x"], y["y"])) for x in groups for y in groups if x is not y)
    for i, grp in enumerate(groups):
        mine = [pos[fabric.router_name(i, j)] for j in range(a)]
        spread = max((_dist(p, q) for p in mine for q in mine), default=0.0)
        assert spread < 0.6 * apart, (i, spread, apart)                      # compact: far less than between groups
        assert all(_dist(p, (grp["x"], grp["y"])) < grp["r"] for p in mine)  # inside the group's frame
        assert grp["r"] < apart / 2                                           # frames apart
        label = (grp["lx"], grp["ly"])
        for j in range(a):
            for x in range(fabric.p):
                h = pos[f"h{i}_{j}_{x}"]
                assert _dist(h, (grp["x"], grp["y"])) > grp["r"]              # outside its cluster
                assert _dist(h, centre) > _dist(pos[fabric.router_name(i, j)], centre)   # radially outward
                assert _dist(label, centre) > _dist(h, centre)               # the label beyond the hosts
    assert all(0 <= x <= topo["width"] and 0 <= y <= topo["height"] for x, y in pos.values())


@pytest.mark.parametrize("spec", SPECS)
def test_local_links_stay_inside_their_frame_and_global_links_join_two_frames(spec):
    fabric, topo, pos = _drawn(spec)
    frame = {x["id"]: x for x in topo["groups"]}

    def inside(n: str, grp: dict) -> bool:
        return _dist(pos[n], (grp["x"], grp["y"])) < grp["r"]
    for l in fabric.links():
        ga, gb = fabric.node(l.a).label[0], fabric.node(l.b).label[0]
        if not (fabric.node(l.a).forwards and fabric.node(l.b).forwards):
            continue
        fa, fb = frame[f"group{ga}"], frame[f"group{gb}"]
        assert inside(l.a, fa) and inside(l.b, fb)                           # a frame is a circle: convex
        assert (ga == gb) == (fa is fb)


@pytest.mark.parametrize("spec", ["dragonfly:p=1,a=4,h=2", "dragonfly:p=2,a=6,h=4"])
def test_routers_face_the_groups_their_global_links_reach(spec):
    """Each router is closer to the groups its global links reach than its group's centre is (it sits on
    the side of its cluster facing them), so the global links leave the clusters as chords."""
    fabric, topo, pos = _drawn(spec)
    frames = [(x["x"], x["y"]) for x in topo["groups"]]
    for i in range(fabric.g):
        for j in range(fabric.a):
            peers = [fabric.global_peer(i, j, t)[0] for t in range(fabric.h)]
            mine = sum(_dist(pos[fabric.router_name(i, j)], frames[y]) for y in peers)
            assert mine < sum(_dist(frames[i], frames[y]) for y in peers), (i, j)


@pytest.mark.parametrize("spec", SPECS + ["dragonfly:p=1,a=16,h=2", "dragonfly:p=1,a=16,h=8", "dragonfly:p=1,a=24,h=12",
                                          "dragonfly:p=4,a=8,h=8"])
def test_no_two_labels_overlap(spec):
    """Every switch box, host dot and name and group label, as the page draws them (upper bounds of the
    browser's text widths), apart from every other one; above 1,500 nodes the blocks' labels. Checked
    pair by pair on the small fabrics too, not only through the grid."""
    _, topo, _ = _drawn(spec)
    boxes = topology_boxes(topo)
    assert not overlapping(boxes)
    if len(boxes) <= 300:
        assert not [(x, y) for k, (x, b) in enumerate(boxes) for y, c in boxes[k + 1:] if x != y and overlap(b, c)]


def test_the_issues_overlapping_host_names_are_apart_now():
    """D(1,4,2)'s h3_3_0 and h2_1_0, h6_1_0 and h7_3_0 overlapped in the drawing before."""
    _, topo, _ = _drawn("dragonfly:p=1,a=4,h=2")
    box = {n: [b for m, b in topology_boxes(topo) if m == n] for n in ("h3_3_0", "h2_1_0", "h6_1_0", "h7_3_0")}
    for x, y in (("h3_3_0", "h2_1_0"), ("h6_1_0", "h7_3_0")):
        assert not any(overlap(p, q, 4.0) for p in box[x] for q in box[y])


def test_overlap_is_exact_for_turned_boxes_and_the_grid_finds_every_pair():
    # two thin names at 45 degrees side by side: their upright bounding boxes overlap, they do not
    p, q = ray_box(0, 0, 45, 6, 40, 4), ray_box(12, 0, 45, 6, 40, 4)
    assert not overlap(p, q) and overlap(p, ray_box(4, 0, 45, 6, 40, 4))
    assert overlap(rect(0, 0, 10, 10), rect(9, 9, 10, 10)) and not overlap(rect(0, 0, 10, 10), rect(10.5, 0, 10, 10))
    assert overlap(rect(0, 0, 10, 10), rect(12, 0, 10, 10), gap=3) and not overlap(rect(0, 0, 10, 10), rect(12, 0, 10, 10), gap=1)
    boxes = [(str(k), rect(k * 7.0, (k % 3) * 5.0, 10, 6)) for k in range(60)]
    pairs = {frozenset(x) for x in overlapping(boxes)}
    brute = {frozenset((x, y)) for k, (x, b) in enumerate(boxes) for y, c in boxes[k + 1:] if overlap(b, c)}
    assert pairs == brute and pairs
    assert text_width("h24_5_1", 8) >= 33.44          # chromium's DejaVu Sans draws it 33.44 px wide at 8 px
