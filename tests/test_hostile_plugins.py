"""Plug-ins that do what a plug-in should not: exit (``sys.exit()`` while running or at import, any
``BaseException``), return the wrong types, return without end, change dcnlab's graph, or define their own
``add_flow``. Each is one line naming the plug-in and a non-zero status, or is run as the interface promises;
nothing is read further than it can be right."""

from __future__ import annotations

import inspect
import itertools
import json
import textwrap
from pathlib import Path

import pytest

from dcnlab.cli import main
from dcnlab.controller import registry as reg
from dcnlab.controller.registry import PluginError


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def run(argv: list[str]) -> int:
    """``dcnlab ARGV`` in this process: its status, from a return or a ``SystemExit`` (argparse's)."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)


def one_error_line(capsys) -> str:
    """The one error line the command ended with (``reproduce`` says first what it runs)."""
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert lines and "Traceback" not in err and out == "", (out, err)
    assert [x for x in lines if "error" in x] == lines[-1:], err
    return lines[-1]


# -- item 1: a plug-in that exits, at import or while running --------------------------------------------------
EXITS = """
    import sys
    from dcnlab.controller.congestion.policy import TenantPolicy
    def build(*args, **kwargs):
        sys.exit()
    def says(*args, **kwargs):
        sys.exit("message from the plug-in")
    class Router:
        def __init__(self, h, colors):
            self.refused = {}
        def add_group(self, mgid, hosts):
            sys.exit(3)
        def trees(self): return []
        def groups(self): return {}
        def tree_id(self, mgid): return 0
    class MakeExits:
        def __init__(self, tenants, **kwargs):
            sys.exit()
    class AddExits(TenantPolicy):
        def add_flow(self, flow):
            sys.exit("bye")
    """


@pytest.mark.parametrize("argv, attr, how", [
    (["plan", "aggregation", "--topo", "bcube:n=2,k=1", "--receiver", "v0", "--senders", "v1"], "build",
     "it called sys.exit()"),
    (["plan", "aggregation", "--topo", "bcube:n=2,k=1", "--receiver", "v0", "--senders", "v1"], "says",
     "it called sys.exit('message from the plug-in')"),
    (["plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2"], "build", "it called sys.exit()"),
    (["plan", "multicast", "--topo", "fattree:k=4", "--pattern", "random:4:seed=1"], "Router",
     "it called sys.exit(3)"),
    (["plan", "congestion"], "MakeExits", "it called sys.exit()"),
    (["plan", "congestion"], "AddExits", "it called sys.exit('bye')"),
    (["reproduce", "congestion", "--emulate", "off", "--quick", "--out", "OUT"], "AddExits",
     "it called sys.exit('bye')"),
])
def test_a_plugin_that_calls_sys_exit_is_one_line_naming_it_and_a_failure(argv, attr, how, tmp_path, capsys,
                                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    ref = f"{write(tmp_path, 'exits', EXITS)}:{attr}"
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert run([*argv, "--algo", ref]) != 0
    line = one_error_line(capsys)
    assert ref in line and line.endswith(how)


def test_a_plugin_module_that_exits_at_import_is_one_line_naming_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "quits", "import sys\nsys.exit()\ndef build(*a): pass\n")
    assert run(["plan", "aggregation", "--topo", "bcube:n=2,k=1", "--receiver", "v0", "--senders", "v1",
                "--algo", "quits.py:build"]) == 2
    assert one_error_line(capsys) == ("dcnlab plan aggregation: error: argument --algo: 'quits.py' failed to load: "
                                      "it called sys.exit() (see dcnlab plan aggregation --help)")


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """An installed distribution ``exitpkg 1.0`` whose module ``exitmod`` exits when imported, with an entry
    point ``quits`` in the aggregation group."""
    dist = tmp_path / "exitpkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: exitpkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[dcnlab.aggregation]\nquits = exitmod:build\n")
    (tmp_path / "exitmod.py").write_text("import sys\nsys.exit(5)\ndef build(*a): pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg._entry_points.cache_clear()
    yield
    reg._entry_points.cache_clear()


def test_algo_list_shows_an_entry_point_that_exits_at_import_as_broken(installed, capsys):
    assert run(["plan", "aggregation", "--algo", "list"]) == 0
    out = capsys.readouterr().out
    assert "\n  irs " in out and out.rstrip().splitlines()[-1].startswith("interface: ")
    assert ("  quits    BROKEN: plug-in: the plug-in 'quits' (exitmod:build, from exitpkg 1.0) failed to load: "
            "it called sys.exit(5)\n") in out
    assert run(["plan", "aggregation", "--topo", "bcube:n=2,k=1", "--receiver", "v0", "--senders", "v1",
                "--algo", "quits"]) == 2
    assert "the plug-in 'quits' (exitmod:build, from exitpkg 1.0) failed to load: it called sys.exit(5)" in \
        one_error_line(capsys)


class Ended(BaseException):
    """Neither an Exception nor an exit: what a plug-in may raise still."""


def test_plugin_code_turns_every_end_but_ctrl_c_into_one_plugin_error():
    from dcnlab.controller.registry import plugin_code

    for end, how in ((SystemExit(), "it called sys.exit()"), (SystemExit(2), "it called sys.exit(2)"),
                     (Ended("odd"), "Ended: odd"), (ValueError("two\nlines"), "ValueError: two lines"),
                     (RuntimeError("x" * 1000), "RuntimeError: " + "x" * reg.MAX_MESSAGE + "...")):
        with pytest.raises(PluginError) as e, plugin_code("multicast algorithm mine"):
            raise end
        assert str(e.value) == f"multicast algorithm mine: {how}"
    with pytest.raises(KeyboardInterrupt), plugin_code("multicast algorithm mine"):
        raise KeyboardInterrupt
    with pytest.raises(PluginError, match="^dcnlab's own check$"), plugin_code("multicast algorithm mine"):
        raise PluginError("dcnlab's own check")
    with pytest.raises(SystemExit), plugin_code("multicast algorithm cmr4lms-fixed", builtin=True):
        raise SystemExit(1)                                  # dcnlab's own code: not the plug-in's to answer for


# -- item 3: a multicast plug-in's results of the wrong types -------------------------------------------------
ROUTER = """
    import itertools
    from dataclasses import replace
    from dcnlab.multicast import Placement, TreeRouter
    PULLED = [0]
    class Router(TreeRouter):
        def place(self, mgid, members):
            tnid, x = next(self.roots(members))
            free = self.free_colors(members, tnid, x)
            return Placement(tnid, x, free[0]) if free else None
"""


def router(tmp_path: Path, name: str, method: str) -> str:
    """A reference to ``Router``: a TreeRouter that places as C-MR4LMS's baselines do, with ``method`` (a
    method's text) added."""
    return f"{write(tmp_path, name, ROUTER + textwrap.indent(textwrap.dedent(method), ' ' * 8))}:Router"


@pytest.mark.parametrize("method, message", [
    ("def trees(self):\n    return ['not a tree', 42]",
     r"trees\(\) gave a str \('not a tree'\); valid: TreeRecord"),
    ("def trees(self):\n    return 7", r"trees\(\) is an int; valid: at most 1 tree per group"),
    ("def trees(self):\n    return [replace(t, links=list(t.links)) for t in super().trees()]",
     r"tree 0: its links are a list; valid: a frozenset of link ids"),
    ("def trees(self):\n    return [replace(t, color='red') for t in super().trees()]",
     r"tree 0: its color is a str \('red'\); valid: an int"),
    ("def add_group(self, mgid, hosts):\n    ok = super().add_group(mgid, hosts)\n"
     "    self.refused['x'] = 'why'\n    self.refused[7] = 'why'\n    return ok",
     r"its refused has a str \('x'\) -> a str \('why'\); valid: int MGID -> reason"),
    ("def add_group(self, mgid, hosts):\n    ok = super().add_group(mgid, hosts)\n"
     "    self.refused[mgid] = None\n    return ok", r"its refused has an int \(\d+\) -> a NoneType; valid:"),
    ("def groups(self):\n    return [1, 2]", r"groups\(\) gave a list; valid: a mapping \{mgid: hosts\}"),
    ("def groups(self):\n    return {g: None for g in super().groups()}", r"groups\(\)\[\d+\] is a NoneType"),
    ("def tree_id(self, mgid):\n    return str(super().tree_id(mgid))", r"tree_id\(\d+\) gave a str"),
])
def test_a_routers_results_of_the_wrong_types_are_one_error_naming_it(tmp_path, method, message, capsys):
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.planning import mapping_for, plan
    from dcnlab.controller.multicast.registry import RouterPlanner
    from dcnlab.controller.multicast.workload import build_pattern
    from dcnlab.topos.spec import parse_spec

    ref = router(tmp_path, "typed", method)
    h = hierarchy_for(parse_spec("fattree:k=4"))
    wl = build_pattern(h, "random:6:seed=1:ppn=2", mapping_for(h, 4))
    with pytest.raises(PluginError, match=rf"^multicast algorithm {ref} on random:6:seed=1:ppn=2: {message}") as e:
        plan(h, wl, ref, 4)
    assert "\n" not in str(e.value)
    planner = RouterPlanner(h, ref, 4)                      # the BMv2 experiment's way: checked after every add
    with pytest.raises(PluginError, match=rf"^multicast algorithm {ref}: ") as e:
        for g in wl.groups:
            planner.add_group(g.mgid, g.members)
    assert "\n" not in str(e.value)
    assert run(["plan", "multicast", "--topo", "fattree:k=4", "--pattern", "random:6:seed=1:ppn=2", "--colors",
                "4", "--algo", ref]) == 2
    assert f"multicast algorithm {ref} on random:6:seed=1:ppn=2: " in one_error_line(capsys)


# -- item 4: results read no further than they can be right ---------------------------------------------------
def counted(first, then, pulled, stop=1000):
    """``first``, then ``then`` again and again; how many were taken goes to ``pulled[0]``; past ``stop`` it
    raises (a reader that reads it all would run without end)."""
    for i in itertools.count():
        if i >= stop:
            raise RuntimeError("read without end")
        pulled[0] = i + 1
        yield first[i] if i < len(first) else then


COUNTED = "\n" + inspect.getsource(counted)
"""The same generator in a plug-in's file."""


def plugin_with_counted(tmp_path: Path, name: str, text: str) -> Path:
    path = write(tmp_path, name, text)
    path.write_text(path.read_text() + COUNTED)
    return path


def test_at_most_takes_one_more_than_the_limit_and_no_further():
    from dcnlab.controller.registry import at_most

    pulled = [0]
    with pytest.raises(PluginError, match=r"^algo X: trees\(\) has more than 6 items; valid: one per group$"):
        at_most(counted([], 0, pulled), 6, "algo X: trees()", "one per group")
    assert pulled == [7]
    assert at_most(iter(range(3)), 6, "x", "y") == [0, 1, 2]
    with pytest.raises(PluginError, match=r"^algo X: trees\(\) is an int; valid: a list$"):
        at_most(5, 6, "algo X: trees()", "a list")


def test_more_trees_than_groups_are_refused_before_they_are_read(tmp_path):
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.planning import mapping_for, plan
    from dcnlab.controller.multicast.workload import build_pattern
    from dcnlab.topos.spec import parse_spec

    method = "def trees(self):\n    mine = super().trees()\n    return counted(mine, mine[0], PULLED)\n"
    path = plugin_with_counted(tmp_path, "endless", ROUTER + textwrap.indent(method, " " * 8))
    ref = f"{path}:Router"
    h = hierarchy_for(parse_spec("fattree:k=4"))
    wl = build_pattern(h, "random:6:seed=1:ppn=2", mapping_for(h, 4))
    with pytest.raises(PluginError, match=rf"^multicast algorithm {ref} on random:6:seed=1:ppn=2: trees\(\) has more "
                                          r"than 6 items; valid: at most 1 tree per group \(6 groups added\)"):
        plan(h, wl, ref, 4)
    assert reg.load_reference(f"{path}:PULLED", "test") == [7]


def test_more_updates_than_flows_are_refused_before_they_are_read(tmp_path):
    from dcnlab.reproduce.congestion.plan import plan

    path = plugin_with_counted(tmp_path, "flood", """
        import itertools
        from dcnlab.controller.congestion.policy import FlowUpdate, TenantPolicy
        PULLED = [0]
        class Flood(TenantPolicy):
            def add_flow(self, flow):
                super().add_flow(flow)
                return counted([], FlowUpdate(flow.flow, 1, 150, None), PULLED)
        """)
    ref = f"{path}:Flood"
    with pytest.raises(PluginError, match=rf"^congestion policy {ref}: the updates it returned has more than 1 "
                                          r"item; valid: at most one FlowUpdate per active flow \(1\)$"):
        plan([("t1", 1.0, 1), ("t2", 1.0, 3)], 40e9, 0.1, "reset", False, ref)
    assert reg.load_reference(f"{path}:PULLED", "test") == [2]


def test_more_cist_trees_than_fit_in_the_graph_are_refused_before_they_are_read(tmp_path):
    from dcnlab.controller.cist import registry as cist_reg
    from dcnlab.topos.spec import parse_spec

    path = plugin_with_counted(tmp_path, "manytrees", """
        import itertools
        from dcnlab.controller.cist.plan import plan_cists
        PULLED = [0]
        def build(fabric, graph):
            t = [list(t.edges) for t in plan_cists(fabric).trees]
            return counted(t, t[0], PULLED)
        """)
    fabric = parse_spec("dragonfly:p=1,a=4,h=2")      # 36 switches, 90 links: at most 2 spanning trees
    with pytest.raises(PluginError, match=r"the trees it returned has more than 2 items; valid: at most 2 "
                                          r"edge-disjoint spanning trees \(90 links, 36 switches\)"):
        cist_reg.trees_for(fabric, f"{path}:build")
    assert reg.load_reference(f"{path}:PULLED", "test") == [3]


# -- item 5: plan and reproduce call a policy the same way -----------------------------------------------------
SEVENS = """
    from dcnlab.controller.congestion.policy import FlowUpdate, TenantPolicy
    class Sevens(TenantPolicy):
        '''Every flow CCTI_Increase 7 (tenant 1's flows 5), by its own add_flow: the README's short way.'''
        def add_flow(self, flow):
            super().add_flow(flow)
            return [FlowUpdate(f, 5 if s.tenant == "tenant1" else 7, 150, None) for f, s in self.flows.items()]
    """


def test_plan_congestion_calls_a_policys_own_add_flow_as_reproduce_does(tmp_path, capsys):
    from dcnlab.controller.congestion import registry as cc_reg
    from dcnlab.controller.congestion import scenarios as sc
    from dcnlab.controller.congestion.fluid import FlowDef, ModelConfig
    from dcnlab.controller.congestion.policy import Tenant, TenantPolicy
    from dcnlab.reproduce.congestion.plan import plan

    ref = f"{write(tmp_path, 'sevens', SEVENS)}:Sevens"
    data = plan([("tenant1", 1.0, 1), ("tenant2", 1.0, 3)], 40e9, 0.1, "reset", False, ref)
    assert [(t["tenant"], t["ccti_increase"]) for t in data["tenants"]] == [("tenant1", 5), ("tenant2", 7)]
    assert run(["plan", "congestion", "--algo", ref, "--json"]) == 0
    assert [t["ccti_increase"] for t in json.loads(capsys.readouterr().out)["tenants"]] == [5, 7]
    # reproduce's replay of the same arrivals ends with the same values, by the same calls
    flows = [FlowDef(f"{n}.f{j}", n) for n, k in (("tenant1", 1), ("tenant2", 3)) for j in range(k)]
    changes, _ = sc.policy_schedule(flows, [Tenant("tenant1"), Tenant("tenant2")], ModelConfig(), policy_name=ref)
    last = {c.flow: c.params.ccti_increase for c in sorted(changes, key=lambda c: c.time_s)}
    assert last == {"tenant1.f0": 5, "tenant2.f0": 7, "tenant2.f1": 7, "tenant2.f2": 7}
    # the built-ins keep one recomputation for many flows (their add_flow is add_flows of one)
    tenants = [Tenant("tenant1")]
    assert cc_reg._batches(TenantPolicy(tenants)) and cc_reg._batches(cc_reg.PerFlowPolicy(tenants))
    assert not cc_reg._batches(load_policy(ref)(tenants))


def load_policy(ref: str):
    return reg.load_reference(ref, "test")


# -- item 6: each CIST plug-in gets its own switch graph -------------------------------------------------------
CIST = """
    from dcnlab.controller.cist.plan import plan_cists

    def emptying(fabric, graph):
        trees = [list(t.edges) for t in plan_cists(fabric).trees]
        graph.index.clear()
        graph.port.clear()
        object.__setattr__(graph, "adj", ())
        object.__setattr__(graph, "names", ())
        return trees

    def probe(fabric, graph):
        if len(graph) != 36 or len(graph.index) != 36 or len(graph.port) != 180:
            raise RuntimeError(f"the graph I got was changed: {len(graph)} switches, {len(graph.port)} ports")
        return [list(t.edges) for t in plan_cists(fabric).trees]
    """


def test_a_cist_plugin_that_empties_its_graph_changes_nothing_for_the_next_or_the_sweep(tmp_path):
    from dcnlab.reproduce.cist.model import model_case

    path = write(tmp_path, "hostile_cist", CIST)
    case = model_case("dragonfly:p=1,a=4,h=2", 2, 1, 0,
                      algos=[("emptying", f"{path}:emptying"), ("probe", f"{path}:probe")])
    assert case["switches"] == 36 and case["links"] == 90 and case["valid"]
    for name in ("emptying", "probe"):                 # the paper's trees, so the paper's survival, draw for draw
        mine = case["algorithms"][name]
        assert mine["valid"] and mine["k"] == case["k"] == 2
        assert mine["sweep"] == case["sweep"] and mine["adversary"] == case["adversary"]
