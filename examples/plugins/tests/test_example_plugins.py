"""The example plug-ins beside the papers' algorithms, installed (``pip install -e examples/plugins``) or not.

Run: ``python -m pytest examples/plugins`` (dcnlab's own test command runs them too: ``testpaths``)."""

from importlib import metadata

import pytest

from dcnlab.controller.aggregation import incast_tree
from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.planning import mapping_for, plan
from dcnlab.controller.multicast.workload import build_pattern
from dcnlab.topos.spec import parse_spec
from dcnlab_example_plugins.aggregation import takahashi_matsuyama
from dcnlab_example_plugins.multicast import ShortestPathTrees

REF_SPT = "dcnlab_example_plugins.multicast:ShortestPathTrees"
REF_TM = "dcnlab_example_plugins.aggregation:takahashi_matsuyama"
INSTALLED = any(e.name == "spt" for e in metadata.entry_points(group="dcnlab.multicast"))


def test_shortest_path_trees_never_merge_and_stay_in_the_table():
    h = hierarchy_for(parse_spec("fattree:k=8"))
    wl = build_pattern(h, "64x2", mapping_for(h, 8))
    r = plan(h, wl, REF_SPT, 8)
    assert r.metrics.tfi_max == 1 and r.metrics.entries_per_port_max <= 8
    assert r.metrics.groups == len(wl.groups) - r.metrics.refused


def test_the_router_class_itself_places_a_group():
    h = hierarchy_for(parse_spec("fattree:k=4"))
    router = ShortestPathTrees(h, 2)
    assert router.add_group(1, [0, 5, 9])
    (tree,) = router.trees()
    assert tree.groups == (1,) and {0, 5, 9} <= tree.links


@pytest.mark.parametrize("spec, receiver, senders", [
    ("bcube:n=4,k=2", "v0", ["v5", "v21", "v63", "v42"]),
    ("fattree:k=4", "h0_0_0", ["h1_0_0", "h3_1_1", "h0_1_0"]),
])
def test_takahashi_matsuyama_is_a_tree_no_cheaper_than_kmb_allows(spec, receiver, senders):
    fabric = parse_spec(spec)
    parent = takahashi_matsuyama(fabric, receiver, senders)
    assert set(senders) <= set(parent)
    tm = incast_tree(fabric, receiver, senders, REF_TM)
    opt = incast_tree(fabric, receiver, senders, "optimal", time_limit=60)
    assert tm.cost >= opt.cost or opt.info.get("status") != "optimal"


@pytest.mark.skipif(not INSTALLED, reason="dcnlab-example-plugins is not installed (pip install -e examples/plugins)")
def test_installed_they_answer_to_their_entry_point_names():
    h = hierarchy_for(parse_spec("fattree:k=4"))
    wl = build_pattern(h, "random:10:seed=1", mapping_for(h, 2))
    assert plan(h, wl, "spt", 2).algo == "spt"
    assert incast_tree(parse_spec("fattree:k=4"), "h0_0_0", ["h1_0_0"], "tm").algorithm == "tm"


def test_every_entry_point_names_an_object_of_the_package():
    """pyproject.toml's entry points (installed or not): each group is a dcnlab registry's, each value resolves."""
    import importlib
    import sys
    from pathlib import Path

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    groups = project["entry-points"]
    assert set(groups) == {"dcnlab.multicast", "dcnlab.aggregation", "dcnlab.congestion", "dcnlab.cist",
                           "dcnlab.reproductions"}
    from dcnlab.reproduce.protocol import Reproduction
    for label, group in groups.items():
        for value in group.values():
            module, _, name = value.partition(":")
            obj = getattr(importlib.import_module(module), name)
            # an algorithm is a callable (or a class); a reproduction is one Reproduction object
            assert isinstance(obj, Reproduction) if label == "dcnlab.reproductions" else callable(obj)
