"""Counts, degrees and wiring invariants of every fabric, over many parameter sets."""

from __future__ import annotations

import itertools

import pytest

from dcnlab.topos import BCube, Dragonfly, FatTree, Midplane, Role, parse_spec
from dcnlab.topos.dragonfly import ARRANGEMENTS

BCUBES = [(n, k) for n in range(2, 6) for k in range(0, 3) if n ** (k + 1) <= 256]
FATTREES = [2, 4, 6, 8]
MIDPLANES = [dict(q=2, m=2, p=1, k=2, w=2, cns=4, terminals=1), dict(q=3, m=2, p=2, k=2, w=3, cns=5, terminals=2),
             dict(q=1, m=1, p=1, k=1, w=1, cns=1, terminals=1), dict(q=4, m=3, p=2, k=3, w=2, cns=6, terminals=3)]
DRAGONFLIES = [(p, a, h, arr) for arr in ARRANGEMENTS for a in (1, 2, 3, 4, 5) for h in (1, 2, 3, 4)
               for p in (0, 2) if not (arr == "circulant" and h % 2)]


def all_fabrics():
    yield from (BCube(n, k) for n, k in BCUBES)
    yield from (FatTree(k) for k in FATTREES)
    yield from (Midplane(**m) for m in MIDPLANES)
    yield from (Dragonfly(p, a, h, arr) for p, a, h, arr in DRAGONFLIES)


@pytest.mark.parametrize("fabric", list(all_fabrics()), ids=lambda f: f.spec)
def test_wiring_is_consistent(fabric):
    nodes = list(fabric.nodes())
    links = list(fabric.links())
    assert len(nodes) == sum(fabric.counts().values())
    assert len({n.name for n in nodes}) == len(nodes), "node names are unique"
    assert len(links) == fabric.num_links()
    used = set()
    for l in links:
        for end in ((l.a, l.a_port), (l.b, l.b_port)):
            assert end not in used, f"port {end} used twice"
            used.add(end)
        assert fabric.peer(l.a, l.a_port) == (l.b, l.b_port)
        assert fabric.peer(l.b, l.b_port) == (l.a, l.a_port)
        assert 0 <= l.a_port < fabric.node(l.a).ports and 0 <= l.b_port < fabric.node(l.b).ports
    for n in nodes:
        assert fabric.node(n.name) == n
        wired = sum(fabric.peer(n.name, p) is not None for p in range(n.ports))
        assert wired == sum(1 for e in used if e[0] == n.name)
    for h in fabric.hosts():
        assert fabric.peer(h.node, h.node_port) == (h.name, 0)


@pytest.mark.parametrize("n,k", BCUBES)
def test_bcube_counts_and_degrees(n, k):
    f = BCube(n, k)
    c = f.counts()
    assert c[Role.SERVER] == n ** (k + 1) and c[Role.SWITCH] == (k + 1) * n ** k and c[Role.HOST] == n ** (k + 1)
    for node in f.nodes():
        wired = sum(f.peer(node.name, p) is not None for p in range(node.ports))
        assert wired == {Role.SERVER: k + 2, Role.SWITCH: n, Role.HOST: 1}[node.role]


@pytest.mark.parametrize("n,k", [(2, 2), (3, 1), (4, 1), (3, 2)])
def test_bcube_servers_share_a_switch_iff_one_digit_differs(n, k):
    f = BCube(n, k)
    switches_of = {i: {f.peer(f.server_name(i), j)[0] for j in range(k + 1)} for i in range(f.num_servers)}
    for a, b in itertools.combinations(range(f.num_servers), 2):
        differ = sum(x != y for x, y in zip(f.server_label(a), f.server_label(b)))
        assert bool(switches_of[a] & switches_of[b]) == (differ == 1), (a, b)


def test_bcube_paper_names():
    f = BCube(4, 1)
    assert f.node("v11").label == (2, 3)
    assert f.node("v0").label == (0, 0) and f.node("v15").label == (3, 3)
    # IRS/SRS (Guo et al.), §4.3: the example path v14 -> w6 -> v2 -> w0 -> v0
    assert {f.peer("w6", p)[0] for p in range(4)} >= {"v14", "v2"}
    assert {f.peer("w0", p)[0] for p in range(4)} >= {"v2", "v0"}
    # level-j switch label is the server label without digit j
    assert f.node("w6").label == (1, 2) and f.node("w0").label == (0, 0)
    assert f.peer("v11", 0) == ("w2", 3) and f.peer("v11", 1) == ("w7", 2)


@pytest.mark.parametrize("k", FATTREES)
def test_fattree_counts_and_degrees(k):
    f = FatTree(k)
    c = f.counts()
    assert c[Role.HOST] == k ** 3 // 4
    layers = {}
    for n in f.nodes():
        layers[n.layer] = layers.get(n.layer, 0) + 1
        wired = sum(f.peer(n.name, p) is not None for p in range(n.ports))
        assert wired == (1 if n.role is Role.HOST else k)
    assert layers == {"core": k * k // 4, "agg": k * k // 2, "edge": k * k // 2, "host": k ** 3 // 4}


def test_midplane_paper_instance():
    f = parse_spec("midplane:q=32,m=16,p=6,k=32,w=16,cns=64,terminals=16")
    assert f.counts() == {Role.SWITCH: 7680, Role.HOST: 32768}
    assert sum(f.counts().values()) == 40448
    assert f.num_tns == 96
    assert parse_spec("midplane:").spec == f.spec  # defaults are the paper's instance
    # Port usage (down+up) L0 16+16, L1 32+6, L2 16+16, L3 32+0
    for name, ports in (("l0_5_3", 32), ("l1_5_3", 38), ("l2_7_1", 32), ("l3_7_1", 32)):
        assert sum(f.peer(name, p) is not None for p in range(f.node(name).ports)) == ports


def _up_paths(f: Midplane, start: str, root: str) -> int:
    """Count strictly upward paths from ``start`` to ``root`` (levels L0 < L1 < L2 < L3)."""
    level = {"L0": 0, "L1": 1, "L2": 2, "L3": 3}
    target = level[f.node(root).layer]

    def walk(name: str) -> int:
        if name == root:
            return 1
        node = f.node(name)
        if level[node.layer] >= target:
            return 0
        total = 0
        for p in range(node.ports):
            far = f.peer(name, p)
            if far and far[0][0] == "l" and level[f.node(far[0]).layer] == level[node.layer] + 1:
                total += walk(far[0])
        return total

    return walk(start)


@pytest.mark.parametrize("params", MIDPLANES, ids=str)
def test_midplane_unique_up_path_to_every_root(params):
    f = Midplane(**params)
    l0s = [n.name for n in f.nodes() if n.layer == "L0"]
    l3s = [n.name for n in f.nodes() if n.layer == "L3"]
    for a in l0s:
        for r in l3s:
            assert _up_paths(f, a, r) == 1, (a, r)


def test_midplane_group_shares_l2():
    f = Midplane(q=2, m=2, p=2, k=3, w=2, cns=6, terminals=1)
    for c in range(6):
        assert f.peer(f"l1_{c}_1", f.q + 1) == (f"l2_3_{c // 2}", c % 2)


@pytest.mark.parametrize("arr", ARRANGEMENTS)
def test_dragonfly_one_global_link_per_group_pair(arr):
    for a in range(1, 9):
        for h in range(1, 6):
            if arr == "circulant" and h % 2:
                continue
            f = Dragonfly(1, a, h, arr)
            pairs: dict[tuple[int, int], int] = {}
            per_router = {}
            for l in f.links():
                na, nb = f.node(l.a), f.node(l.b)
                if na.role is Role.HOST or nb.role is Role.HOST or na.label[0] == nb.label[0]:
                    continue
                key = tuple(sorted((na.label[0], nb.label[0])))
                pairs[key] = pairs.get(key, 0) + 1
                per_router[l.a] = per_router.get(l.a, 0) + 1
                per_router[l.b] = per_router.get(l.b, 0) + 1
            g = a * h + 1
            assert len(pairs) == g * (g - 1) // 2 and set(pairs.values()) == {1}, (a, h)
            assert len(per_router) == a * g and set(per_router.values()) == {h}, (a, h)


def _global_neighbours(f: Dragonfly, name: str) -> set[str]:
    out = set()
    for t in range(f.h):
        out.add(f.peer(name, f.global_port(t))[0])
    return out


def test_dragonfly_paper_examples():
    assert _global_neighbours(Dragonfly(1, 4, 2, "relative"), "s3_2") == {"s8_1", "s0_1"}
    absolute = Dragonfly(1, 4, 2, "absolute")
    assert _global_neighbours(absolute, "s3_2") == {"s5_1", "s6_1"}
    assert _global_neighbours(absolute, "s0_0") == {"s1_0", "s2_0"}
    assert _global_neighbours(Dragonfly(1, 4, 2, "circulant"), "s0_0") == {"s1_0", "s8_0"}


def test_dragonfly_counts():
    for p, a, h, arr in DRAGONFLIES:
        f = Dragonfly(p, a, h, arr)
        g = a * h + 1
        assert f.counts()[Role.SWITCH] == a * g and f.counts().get(Role.HOST, 0) == p * a * g
        for n in f.nodes():
            if n.role is Role.SWITCH:
                assert sum(f.peer(n.name, q) is not None for q in range(n.ports)) == p + a - 1 + h


def test_dragonfly_large_instance_is_cheap():
    f = parse_spec("dragonfly:p=1,a=16,h=8,arrangement=circulant")
    assert f.counts()[Role.SWITCH] == 16 * 129
    assert f.peer("s100_3", f.global_port(0)) is not None


@pytest.mark.parametrize("spec,bad", [("bcube:n=4,k=1", ["v16", "w8", "v01", "x1", "v", "h-1"]),
                                      ("fattree:k=4", ["e4_0", "e0_2", "e00_1", "c4", "h0_0", "z1"]),
                                      ("midplane:q=2,m=2,p=1,k=2,w=2,cns=4,terminals=1",
                                       ["l0_4_0", "l9_0_0", "l2_2_0", "h0_0", "l0_01_0", "l3_0_2x"]),
                                      ("dragonfly:p=1,a=4,h=2", ["s9_0", "s0_4", "h0_0_1", "s0", "r0_0"])])
def test_unknown_names_are_rejected(spec, bad):
    f = parse_spec(spec)
    for name in bad:
        with pytest.raises(KeyError):
            f.node(name)
