"""Algorithms as plug-ins: the registries, entry points, references, and the validators a
user's algorithm must pass before its result is used (the same ones dcnlab's own pass)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from dcnlab.controller import registry as reg
from dcnlab.controller.aggregation import incast_tree
from dcnlab.controller.aggregation import registry as agg_reg
from dcnlab.controller.cist import registry as cist_reg
from dcnlab.controller.multicast import registry as mc_reg
from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.planning import ALGOS, mapping_for, plan
from dcnlab.controller.multicast.validate import routing_problems
from dcnlab.controller.multicast.workload import build_pattern
from dcnlab.controller.registry import PluginError
from dcnlab.topos.errors import UserError
from dcnlab.topos.spec import parse_spec

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "plugins" / "dcnlab_example_plugins"
SPT = f"{EXAMPLES / 'multicast.py'}:ShortestPathTrees"
TM = f"{EXAMPLES / 'aggregation.py'}:takahashi_matsuyama"


@pytest.fixture
def entry_points(tmp_path, monkeypatch):
    """Install entry points the way an installed distribution declares them (a .dist-info on sys.path)."""
    def install(group: str, **names: str) -> None:
        dist = tmp_path / "user_plugins-1.2.dist-info"
        dist.mkdir(exist_ok=True)
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: user-plugins\nVersion: 1.2\n")
        lines = [f"[{group}]"] + [f"{k} = {v}" for k, v in names.items()]
        with (dist / "entry_points.txt").open("a") as f:
            f.write("\n".join(lines) + "\n")
        reg._entry_points.cache_clear()
    monkeypatch.syspath_prepend(str(tmp_path))
    yield install
    reg._entry_points.cache_clear()


def write_module(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


# -- the registry itself --------------------------------------------------------------------------------------
def test_every_mechanism_lists_its_builtins_with_a_summary():
    for r, names in ((mc_reg.REGISTRY, ALGOS), (agg_reg.REGISTRY, ("irs", "m2", "updown", "kmb", "optimal")),
                     (cist_reg.REGISTRY, ("generic", "algorithm3"))):
        listed = {name: summary for name, origin, summary in r.listing()}
        assert set(names) <= set(listed)
        assert all(listed[n] for n in names)
        assert r.format_listing().splitlines()[-1].startswith("interface: ")


def test_an_entry_point_is_found_listed_with_its_distribution_and_cannot_shadow_a_builtin(entry_points, tmp_path):
    write_module(tmp_path, "user_mc", """
        from dcnlab.multicast import Placement, TreeRouter
        class Mine(TreeRouter):
            '''My router.'''
            def place(self, mgid, members):
                tnid, x = next(self.roots(members))
                free = self.free_colors(members, tnid, x)
                return Placement(tnid, x, free[0]) if free else None
        """)
    entry_points("dcnlab.multicast", mine="user_mc:Mine", global_="user_mc:Mine")
    entry_points("dcnlab.multicast", **{"global": "user_mc:Mine", "broken": "user_mc_missing:X"})
    rows = {name: (origin, summary) for name, origin, summary in mc_reg.REGISTRY.listing() if name != "global"}
    assert rows["mine"] == ("entry point dcnlab.multicast (user-plugins 1.2: user_mc:Mine)", "My router.")
    assert rows["broken"][1].startswith("BROKEN: ")
    shadow = [r for r in mc_reg.REGISTRY.listing() if r[0] == "global"]
    assert [r[1] for r in shadow] == ["built-in", "entry point dcnlab.multicast (user-plugins 1.2: user_mc:Mine)"]
    assert mc_reg.get("global").builtin                     # the built-in keeps its name
    assert mc_reg.get("mine").obj.__name__ == "Mine"
    with pytest.raises(PluginError, match=r"^--algo: the plug-in 'broken' \(user_mc_missing:X, from user-plugins 1.2\) "
                                          r"failed to load: ModuleNotFoundError"):
        mc_reg.get("broken")


@pytest.mark.parametrize("ref, message", [
    ("nosuchmodule_xyz:thing", r"cannot import 'nosuchmodule_xyz' \(ModuleNotFoundError"),
    ("json:nosuchname", r"'json' has no 'nosuchname'"),
    ("json:__version__", r"'json:__version__' cannot be a multicast algorithm: a str, not callable"),
    ("a b:c", r"'a b' is not a module name"),
    ("json:", r"is not a reference; valid: package.module:name or path/to/file.py:name"),
    ("/nonexistent/file.py:x", r"/nonexistent/file.py"),
    ("nosuchname", r"'nosuchname' is not a multicast algorithm; valid: cmr4lms-fixed, .*package.module:name"),
])
def test_a_bad_reference_is_one_line_naming_it(ref, message):
    with pytest.raises(PluginError, match=message) as e:
        mc_reg.get(ref)
    assert "\n" not in str(e.value) and str(e.value).startswith("--algo: ")


def test_a_file_that_fails_to_import_is_one_line(tmp_path):
    path = write_module(tmp_path, "bad", "raise RuntimeError('my bug')\n")
    with pytest.raises(PluginError, match=r"failed to load: RuntimeError: my bug"):
        mc_reg.get(f"{path}:X")
    assert not [m for m in sys.modules if m.startswith("dcnlab_plugin_") and "bad" in m]


# -- multicast -----------------------------------------------------------------------------------------------
SMALL = ("fattree:k=4", "fattree:k=8", "midplane:q=4,m=2,p=2,k=2,w=2,cns=4,terminals=2")


@pytest.mark.parametrize("spec", SMALL)
@pytest.mark.parametrize("seed", range(4))
def test_every_builtin_router_passes_the_validator(spec, seed):
    h = hierarchy_for(parse_spec(spec))
    colors = 2
    wl = build_pattern(h, f"random:{3 * h.num_hosts}:seed={seed}:ppn=2", mapping_for(h, colors))
    for algo in ALGOS:
        r = plan(h, wl, algo, colors, check=True)
        assert r.metrics.groups + r.metrics.refused == len(wl.groups)


def test_the_example_router_runs_beside_the_papers_and_is_checked():
    h = hierarchy_for(parse_spec("fattree:k=8"))
    wl = build_pattern(h, "random:200:seed=3:ppn=2", mapping_for(h, 4))
    spt = plan(h, wl, SPT, 4)
    cmr = plan(h, wl, "cmr4lms-fixed", 4)
    assert spt.algo == SPT and spt.metrics.tfi_max == 1     # no merging: one group per tree
    assert spt.metrics.groups + spt.metrics.refused == len(wl.groups)
    assert spt.metrics.entries_per_port_max <= 4
    assert routing_problems(h, spt.trees, {g.mgid: frozenset(g.members) for g in spt.groups},
                            {g.mgid: g.tree for g in spt.groups}, 4) == []
    assert cmr.metrics.refused == 0


BAD_ROUTERS = {
    "one color for all": ("return Placement(tnid, x, 0)", r"table entries are used by two trees, e\.g\. color 0 on "),
    "color past the table": ("return Placement(tnid, x, 99)", r"tree 0 has color 99; valid: 0\.\.3"),
    "raises": ("raise KeyError('oops')", r"failed on random:.*: KeyError: 'oops'"),
}


@pytest.mark.parametrize("case", BAD_ROUTERS)
def test_an_invalid_routing_is_one_error_naming_the_algorithm(case, tmp_path):
    body, message = BAD_ROUTERS[case]
    path = write_module(tmp_path, "badrouter", f"""
        from dcnlab.multicast import Placement, TreeRouter
        class Bad(TreeRouter):
            def place(self, mgid, members):
                tnid, x = next(self.roots(members))
                {body}
        """)
    h = hierarchy_for(parse_spec("fattree:k=4"))
    wl = build_pattern(h, "random:20:seed=1:ppn=2", mapping_for(h, 4))
    with pytest.raises(PluginError, match=rf"^multicast algorithm {path}:Bad .*{message}"):
        plan(h, wl, f"{path}:Bad", 4)


def test_a_router_that_leaves_a_member_out_is_caught(tmp_path):
    path = write_module(tmp_path, "lossy", """
        from dcnlab.multicast import Placement, TreeRouter
        class Lossy(TreeRouter):
            def place(self, mgid, members):
                return Placement(0, 0, len(self._members) % self.colors)
            def add_group(self, mgid, hosts):
                hosts = sorted(hosts)
                ok = super().add_group(mgid, hosts[:-1] if len(hosts) > 1 else hosts)
                self._members[mgid] = frozenset(hosts)
                return ok
        """)
    h = hierarchy_for(parse_spec("fattree:k=4"))
    wl = build_pattern(h, "random:4:seed=1:ppn=2", mapping_for(h, 16))
    with pytest.raises(PluginError, match=r"group \d+: its tree \d+ does not reach member h"):
        plan(h, wl, f"{path}:Lossy", 16)


def test_a_router_class_without_the_interface_is_named(tmp_path):
    path = write_module(tmp_path, "half", "class Half:\n    def __init__(self, h, colors): pass\n")
    h = hierarchy_for(parse_spec("fattree:k=4"))
    wl = build_pattern(h, "random:4:seed=1", mapping_for(h, 2))
    with pytest.raises(PluginError, match=r"its router lacks add_group, trees, groups, tree_id"):
        plan(h, wl, f"{path}:Half", 2)


# -- aggregation --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, receiver, senders", [
    ("bcube:n=4,k=2", "v0", ["v5", "v21", "v63", "v42", "v17", "v33"]),
    ("bcube:n=3,k=2", "v26", [f"v{i}" for i in range(0, 26, 3)]),
    ("fattree:k=4", "h0_0_0", ["h1_0_0", "h3_1_1", "h0_1_0", "h2_0_1"]),
])
def test_the_example_tree_builder_gives_a_checked_tree_no_cheaper_than_the_optimum(spec, receiver, senders):
    fabric = parse_spec(spec)
    tm = incast_tree(fabric, receiver, senders, TM, delta=0.0)
    best = incast_tree(fabric, receiver, senders, "optimal", delta=0.0, time_limit=60)
    assert tm.algorithm == TM and set(tm.senders) == set(senders)
    if best.info.get("status") == "optimal":
        assert tm.cost >= best.cost
    tm.check_fabric(fabric)


BAD_TREES = {
    "cycle": ("return {s: receiver for s in senders} | {receiver: senders[0]}", r"the receiver v0 has a parent \(v5\)"),
    "a sender left out": ("return {senders[0]: receiver}", r"sender v\d+ does not reach the receiver v0"),
    "not a hop": ("return {s: receiver for s in senders}", r"v\d+ -> v0 is not a hop of bcube:n=4,k=2 \(their addresses differ in more than one digit\)"),
    "a switch": ("return {s: 'w0' for s in senders} | {'w0': receiver}", r"w0 is a switch"),
    "unknown node": ("return {s: 'zz' for s in senders}", r"'zz' is not a node of bcube"),
    "not a mapping": ("return [receiver]", r"returned a list; valid: a mapping"),
    "raises": ("raise ValueError('nope')", r"failed on bcube:n=4,k=2: ValueError: nope"),
}


@pytest.mark.parametrize("case", BAD_TREES)
def test_an_invalid_tree_is_one_error_naming_the_builder(case, tmp_path):
    body, message = BAD_TREES[case]
    path = write_module(tmp_path, "badtree", f"def build(fabric, receiver, senders, seed):\n    {body}\n")
    with pytest.raises(PluginError, match=rf"^aggregation algorithm {path}:build .*{message}"):
        incast_tree(parse_spec("bcube:n=4,k=2"), "v0", ["v5", "v63", "v42"], f"{path}:build")


def test_a_builder_for_one_fabric_kind_is_refused_on_the_other(tmp_path):
    path = write_module(tmp_path, "onlyft", """
        def build(fabric, receiver, senders, seed):
            return {}
        build.fabrics = ("fattree",)
        """)
    with pytest.raises(UserError, match=r"does not apply to bcube; valid: irs"):
        incast_tree(parse_spec("bcube:n=4,k=2"), "v0", ["v5"], f"{path}:build")


# -- CIST ------------------------------------------------------------------------------------------------------
def test_a_cist_construction_is_checked_like_the_builtins(tmp_path):
    good = write_module(tmp_path, "goodcist", """
        from dcnlab.controller.cist.plan import plan_cists
        def build(fabric, graph):
            return [[(v, u) for u, v in t.edges] for t in plan_cists(fabric).trees]    # reversed edges: fine
        """)
    bad = write_module(tmp_path, "badcist", """
        from dcnlab.controller.cist.plan import plan_cists
        def build(fabric, graph):
            t = plan_cists(fabric).trees
            return [list(t[0].edges), list(t[0].edges)]                                 # the same tree twice
        """)
    fabric = parse_spec("dragonfly:p=1,a=4,h=2")
    mine = cist_reg.trees_for(fabric, f"{good}:build")
    assert [sorted(map(sorted, t.edges)) for t in mine] == \
        [sorted(map(sorted, t.edges)) for t in cist_reg.trees_for(fabric, "generic")]
    with pytest.raises(PluginError, match=r"not completely independent spanning trees: trees 0 and 1 share edge"):
        cist_reg.trees_for(fabric, f"{bad}:build")


# -- congestion ----------------------------------------------------------------------------------------------
def test_a_policy_plugin_runs_in_the_tenant_experiment_beside_the_papers(tmp_path):
    from dcnlab.controller.congestion import scenarios as sc

    path = write_module(tmp_path, "mypolicy", """
        from dcnlab.controller.congestion.policy import TenantPolicy
        class TwoToOne(TenantPolicy):
            '''Tenant 1 gets twice tenant 2's share.'''
            def _per_bottleneck(self):
                out = super()._per_bottleneck()
                for b, incs in out.items():
                    if "tenant2" in incs and "tenant1" in incs:
                        incs["tenant2"] = 2 * incs["tenant2"]
                return out
        """)
    shares = {}
    for policy in ("tenant-fair", "per-flow", f"{path}:TwoToOne"):
        s = sc.tenant_fair(phase_s=0.2, mode="cc", policy=policy)
        three = sc.summarize_tenants(s, s.run())[2]                   # tenant 2 with 3 flows
        shares[policy] = three.tenant_ratio
    assert abs(shares["tenant-fair"] - 1) < 0.1                        # the paper: 1:1 whatever the flows
    assert abs(shares["per-flow"] - 1 / 3) < 0.05                      # plain CC: 1:3
    assert 1.7 < shares[f"{path}:TwoToOne"] < 2.3                     # tenant 1 / tenant 2: about 2


@pytest.mark.parametrize("body, message", [
    ("return [FlowUpdate(f.flow, 0, 150, None)]", r"flow A->B: CCTI_Increase=0; valid: 1\.\.255"),
    ("return [FlowUpdate('ghost', 1, 150, None)]", r"an update for flow 'ghost', which is not active"),
    ("return [FlowUpdate(f.flow, 1, 70000, None)]", r"CCTI_Timer=70000; valid: 1\.\.65535"),
    ("raise RuntimeError('bug')", r"RuntimeError: bug"),
])
def test_an_invalid_policy_update_is_one_error_naming_the_policy(tmp_path, body, message):
    from dcnlab.controller.congestion import scenarios as sc
    from dcnlab.controller.congestion.fluid import FlowDef, ModelConfig
    from dcnlab.controller.congestion.policy import Tenant

    path = write_module(tmp_path, "badpolicy", f"""
        from dcnlab.controller.congestion.policy import FlowUpdate
        class Bad:
            def __init__(self, tenants, **kw): pass
            def add_flow(self, f):
                {body}
            def remove_flow(self, name): return []
            def meter_rates(self): return []
        """)
    flows = [FlowDef("A->B", "t1")]
    with pytest.raises(PluginError, match=rf"^congestion policy {path}:Bad: .*{message}"):
        sc.policy_schedule(flows, [Tenant("t1")], ModelConfig(), policy_name=f"{path}:Bad")


def test_meters_beyond_the_bottleneck_are_refused(tmp_path):
    from dcnlab.controller.congestion import scenarios as sc
    from dcnlab.controller.congestion.fluid import FlowDef, ModelConfig
    from dcnlab.controller.congestion.policy import Tenant

    path = write_module(tmp_path, "greedy", """
        from dcnlab.controller.congestion.policy import MeterRate, TenantPolicy
        class Greedy(TenantPolicy):
            def meter_rates(self):
                return [MeterRate("bottleneck", t, i, 1e12, 4096) for i, t in enumerate(self.tenants)]
        """)
    with pytest.raises(PluginError, match=r"meters at bottleneck add up to 2e\+12 bit/s, more than its"):
        sc.policy_schedule([FlowDef("A->B", "t1")], [Tenant("t1"), Tenant("t2")], ModelConfig(),
                           policy_name=f"{path}:Greedy")
