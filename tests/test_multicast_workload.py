"""Workloads: the paper's patterns, MGID layers (formula (5), the counterexample, greedy), groups files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.layers import apportion, direction_layers, grid_lines
from dcnlab.controller.multicast.mapping import SptMapping
from dcnlab.controller.multicast.planning import mapping_for
from dcnlab.controller.multicast.workload import build_pattern, load_groups_file, parse_pattern
from dcnlab.topos import parse_spec
from dcnlab.topos.errors import UserError


@pytest.fixture(scope="module")
def paper():
    return hierarchy_for(parse_spec("midplane:"))


def no_terminal_twice_per_layer(wl) -> bool:
    seen = set()
    for g in wl.groups:
        for x in g.members:
            if (x, g.layer) in seen:
                return False
            seen.add((x, g.layer))
    return True


@pytest.mark.parametrize("pattern,groups", [
    ("512x64", 576), ("181x181", 362), ("100x327", 427), ("64x32x16", 3584), ("32x32x32", 3072),
    ("25x50x26", 3200), ("256x32x16:ppn=4", 12800), ("128x32x32:ppn=4", 9216), ("100x50x26:ppn=4", 8900)])
def test_paper_pattern_group_counts_and_layers(paper, pattern, groups):
    m = mapping_for(paper, 32)
    wl = build_pattern(paper, pattern, m)
    # lines only, no global group: our count (C-MR4LMS (Chen et al.), §4.1, names the patterns, not their groups)
    assert len(wl.groups) == groups
    assert len({g.mgid for g in wl.groups}) == groups
    assert no_terminal_twice_per_layer(wl)
    for g in wl.groups:                                   # every MGID's color lies in its layer's colors
        c0, c1 = wl.layers[g.layer].colors
        assert c0 <= m.color_tnid(g.mgid)[0] < c1
    assert sum(lay.colors[1] - lay.colors[0] for lay in wl.layers) == 32


def test_topology_matched_512x64(paper):
    wl = build_pattern(paper, "512x64", mapping_for(paper, 32))
    xs = [g for g in wl.groups if g.label.startswith("x-line")]
    assert len(xs) == 64
    assert all(len({paper.key(1, x) for x in g.members}) == 1 for g in xs)     # each x-line fills one CN


def test_dhondt_colors(paper):
    assert apportion([512, 1024, 2048], 32) == [4, 9, 19]
    assert apportion([1024, 1024, 1024], 32) == [10, 11, 11]
    assert apportion([1, 1000], 3) == [1, 2]
    with pytest.raises(UserError, match="needs 4 MGID layers"):
        apportion([1, 1, 1, 1], 3)
    wl = build_pattern(paper, "64x32x16", mapping_for(paper, 32))
    assert [lay.colors for lay in wl.layers] == [(0, 4), (4, 13), (13, 32)]


def test_formula_counterexample_falls_back_to_greedy():
    """Our reconstruction of C-MR4LMS (Chen et al.)'s formula (5) (lost in the text) has a counterexample:
    X = Y = 10, P = 4: y-line windows cannot be colored by x mod 4, so the lines are colored greedily."""
    dims, ppn = (10, 10, 2), 4
    lines = grid_lines(dims, ppn)
    y = direction_layers(dims, lines[1], ppn)
    assert y.method == "greedy"
    x = direction_layers(dims, lines[0], ppn)
    assert x.method == "formula" and x.layers <= ppn
    h = hierarchy_for(parse_spec("midplane:q=4,m=2,p=2,k=2,w=2,cns=4,terminals=4"))
    wl = build_pattern(h, "10x10x2:ppn=4", mapping_for(h, 32))
    assert no_terminal_twice_per_layer(wl)


@pytest.mark.parametrize("dims,ppn", [((8, 4, 4), 4), ((12, 6), 3), ((6, 6, 6), 2), ((5, 7, 3), 2)])
def test_theorem3_layers(dims, ppn):
    """P < every dimension: each terminal's groups of a direction fall in distinct layers."""
    lines = grid_lines(dims, ppn)
    for d, ln in enumerate(lines):
        dl = direction_layers(dims, ln, ppn)
        term = np.arange(int(np.prod(dims))) // ppn
        lay = dl.line_layer[ln.line_of_rank]
        pairs = set(zip(term.tolist(), ln.line_of_rank.tolist()))
        per = {}
        for t, line in pairs:
            per.setdefault(t, set()).add(line)
        for t, ls in per.items():
            assert len({int(dl.line_layer[x]) for x in ls}) == len(ls), (d, t)
        del lay


def test_random_pattern(paper):
    m = mapping_for(paper, 32)
    a = build_pattern(paper, "random:1000:seed=1:ppn=4", m)
    b = build_pattern(paper, "random:1000:ppn=4:seed=1", m)
    assert a.groups == b.groups and len(a.layers) == 4
    assert sum(len(g.members) for g in a.groups) == 4 * paper.num_hosts
    assert no_terminal_twice_per_layer(a)
    c = build_pattern(paper, "random:1000:seed=2:ppn=4", m)
    assert c.groups != a.groups


@pytest.mark.parametrize("text,msg", [
    ("12", "not understood"), ("random", "group count"), ("random:x", "group count"), ("4x4:ppn=0", "ppn"),
    ("4x4:seed=3", "unknown option 'seed=3'"), ("4x0", ">= 1"), ("2x2x2x2", "not understood"),
    ("random:10:ppn=x", "must be a non-negative integer")])
def test_bad_patterns(text, msg):
    with pytest.raises(UserError, match=msg):
        parse_pattern(text)


def test_pattern_must_fit(paper):
    h = hierarchy_for(parse_spec("fattree:k=4"))
    with pytest.raises(UserError, match="needs 20 terminals but fattree:k=4 has only 16"):
        build_pattern(h, "10x8:ppn=4", mapping_for(h, 4))
    with pytest.raises(UserError, match="needs 5 MGID layers .* colors=3"):
        build_pattern(h, "4x2x2:ppn=2", SptMapping(3, 2, 2))
    with pytest.raises(UserError, match="at least ppn=4 groups"):
        build_pattern(h, "random:3:ppn=4", mapping_for(h, 4))


def test_groups_file(tmp_path):
    h = hierarchy_for(parse_spec("fattree:k=4"))
    good = tmp_path / "g.json"
    good.write_text(json.dumps([{"mgid": 3, "members": ["h0_0_0", "h1_1_1"]}, {"mgid": 9, "members": ["h3_0_1"]}]))
    wl = load_groups_file(h, good)
    assert [(g.mgid, g.members) for g in wl.groups] == [(3, (0, 7)), (9, (13,))]
    cases = [
        ("{", "not valid JSON"), ("{}", "expected a JSON list"), ("[]", "expected a JSON list"),
        ('[{"mgid": 1}]', "item 0: expected"), ('[{"mgid": -1, "members": ["h0_0_0"]}]', "non-negative integer"),
        ('[{"mgid": true, "members": ["h0_0_0"]}]', "non-negative integer"),
        ('[{"mgid": 1, "members": []}]', "non-empty list"),
        ('[{"mgid": 1, "members": ["h0_0_0"]}, {"mgid": 1, "members": ["h0_0_1"]}]', "mgid 1 appears twice"),
        ('[{"mgid": 1, "members": ["h0_0_0", "h0_0_0"]}]', "listed twice"),
        ('[{"mgid": 4, "members": ["h0_0_0", "h9_9_9"]}]', r"item 0 \(mgid 4\): unknown member 'h9_9_9'"),
        ('[{"mgid": 4, "members": ["e0_0"]}]', "is a switch"),
        ('[{"mgid": 4, "members": ["h0_0_0"], "extra": 1}]', "expected"),
    ]
    for text, msg in cases:
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        with pytest.raises(UserError, match=msg):
            load_groups_file(h, bad)
    with pytest.raises(UserError, match="missing.json.: does not exist"):
        load_groups_file(h, tmp_path / "missing.json")
