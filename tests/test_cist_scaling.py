"""Construction time against N (paper 004, Theorems 5-7): the fit, its JSON, the headline, the plot, and the
exact root choice that made Algorithm 3 linear. No test asserts a measured slope (a timing on a shared machine);
the fit is checked on synthetic timings with a known slope."""

from __future__ import annotations

import json
import math

import pytest

from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.controller.cist.partition import absolute_partition, cist_partition, pair_partition
from dcnlab.controller.cist.trees import _centre, _rotation_invariant, build_trees, skeleton_roots, tree_edges
from dcnlab.reproduce.cist.reproduction import NO_EMULATION, REPRODUCTION
from dcnlab.reproduce.protocol import write_summary
from dcnlab.reproduce.cist import scaling as cist_scaling
from dcnlab.reproduce.cist import headlines
from dcnlab.figures import plotcheck
from dcnlab.results import summary
from dcnlab.topos.spec import parse_spec


def _fabric(a: int, h: int, arrangement: str):
    return parse_spec(f"dragonfly:p=1,a={a},h={h},arrangement={arrangement}")


# -- the fit --------------------------------------------------------------------------------------------------

def test_fit_recovers_a_known_slope():
    ns = [264, 876, 2064, 4020, 6936]
    fit = cist_scaling.fit_loglog(ns, [3e-7 * n ** 1.5 for n in ns])
    assert fit.slope == pytest.approx(1.5) and fit.stderr == pytest.approx(0.0, abs=1e-9)
    assert fit.r2 == pytest.approx(1.0) and fit.points == 5
    assert fit.predict(1000) == pytest.approx(3e-7 * 1000 ** 1.5)


def test_fit_stderr_matches_linregress():
    from scipy.stats import linregress

    ns = [100, 300, 1000, 3000, 10000, 30000]
    noise = [1.1, 0.9, 1.05, 0.97, 1.2, 0.93]
    ts = [1e-6 * n * e for n, e in zip(ns, noise)]
    fit = cist_scaling.fit_loglog(ns, ts)
    ref = linregress([math.log10(n) for n in ns], [math.log10(t) for t in ts])
    assert fit.slope == pytest.approx(ref.slope) and fit.stderr == pytest.approx(ref.stderr)
    assert fit.intercept == pytest.approx(ref.intercept) and fit.r2 == pytest.approx(ref.rvalue ** 2)


def test_pooled_fit_shares_the_slope_not_the_intercept():
    ns = [264, 876, 2064, 4020]
    groups = {"x": (ns, [1e-7 * n ** 1.2 for n in ns]), "y": (ns, [5e-6 * n ** 1.2 for n in ns])}
    f = cist_scaling.fit_pooled(groups)
    assert f["slope"] == pytest.approx(1.2) and f["stderr"] == pytest.approx(0.0, abs=1e-9)
    assert f["intercepts"]["y"] - f["intercepts"]["x"] == pytest.approx(math.log10(50)) and f["points"] == 8
    one = cist_scaling.fit_pooled({"x": (ns, [1e-6 * n * e for n, e in zip(ns, (1.1, 0.9, 1.05, 1.2))])})
    ref = cist_scaling.fit_loglog(ns, [1e-6 * n * e for n, e in zip(ns, (1.1, 0.9, 1.05, 1.2))])
    assert one["slope"] == pytest.approx(ref.slope) and one["stderr"] == pytest.approx(ref.stderr)
    with pytest.raises(ValueError, match="at least 4 points"):
        cist_scaling.fit_pooled({"x": ([1, 2], [1, 2]), "y": ([1], [1])})


@pytest.mark.parametrize("ns, ts", [([1, 2], [1, 2]), ([10, 10, 10], [1, 2, 3]), ([1, 2, 3], [0, 0, 1])])
def test_fit_refuses_too_few_points(ns, ts):
    with pytest.raises(ValueError, match="at least 3 points"):
        cist_scaling.fit_loglog(ns, ts)


def _synthetic(slopes: dict[str, dict[str, float]]) -> list[dict]:
    """Points of a balanced family whose step times follow n^slope exactly (alg3 is given per tree)."""
    points = []
    for arr, by_step in slopes.items():
        for a in (8, 12, 16, 20):
            n, k = a * (a * (a // 2) + 1), a // 2
            step = "alg2" if arr == "absolute" else "alg1"
            sec = {step: 1e-7 * n ** by_step["partition"], "roots": 1e-6 * n ** by_step["roots"],
                   "alg3": k * 1e-7 * n ** by_step["alg3_per_tree"]}
            points.append({"arrangement": arr, "a": a, "h": a // 2, "switches": n, "links": 0, "k": k,
                           "seconds": sec, "median_seconds": sec})
    return points


SLOPES = {"relative": {"partition": 1.0, "alg3_per_tree": 1.05, "roots": 1.3},
          "absolute": {"partition": 1.1, "alg3_per_tree": 0.95, "roots": 1.7},
          "circulant": {"partition": 0.9, "alg3_per_tree": 1.0, "roots": 1.3}}


def test_result_json_stores_every_fit_and_the_largest_judged_slope():
    data = cist_scaling.result_json(_synthetic(SLOPES), reps=5, quick=True)
    data = json.loads(json.dumps(data))      # what scaling.json holds
    f = data["fits"]
    assert f["relative"]["alg1"]["slope"] == pytest.approx(1.0)
    assert f["absolute"]["alg2"]["slope"] == pytest.approx(1.1)
    assert f["absolute"]["roots"]["slope"] == pytest.approx(1.7)       # reported, not judged
    assert f["circulant"]["alg3_per_tree"]["slope"] == pytest.approx(1.0)
    # all k trees: per tree times k, and k = a/2 grows as N^(1/3) here, so the total is steeper
    assert f["relative"]["alg3"]["slope"] > f["relative"]["alg3_per_tree"]["slope"] + 0.2
    algs = data["algorithms"]
    assert algs["Algorithm 2"]["slope"] == pytest.approx(1.1) and algs["Algorithm 2"]["arrangements"] == ["absolute"]
    # one slope per algorithm over its arrangements: between the per-arrangement slopes
    assert 0.9 < algs["Algorithm 1"]["slope"] < 1.0 and algs["Algorithm 1"]["arrangements"] == ["circulant", "relative"]
    assert 0.95 < algs["Algorithm 3 per tree"]["slope"] < 1.05 and algs["Algorithm 3 per tree"]["points"] == 12
    assert not algs["skeleton roots (ours)"]["judged"] and not algs["Algorithm 3, all k trees"]["judged"]
    assert data["slope"] == pytest.approx(1.1) and data["slope_of"] == "Algorithm 2"
    assert data["threshold"] == cist_scaling.SLOPE_THRESHOLD and data["a"] == [8, 12, 16, 20]
    assert {"alg1", "alg2", "alg3", "roots", "excluded"} <= set(data["timed"])


def test_a_timing_alone_is_no_verdict():
    """CPU time is a figure (it depends on the load): without instruction counts the O(N) headline is not run,
    however well the timing fits."""
    data = cist_scaling.result_json(_synthetic(SLOPES), reps=5, quick=True)
    h = next(h for h in headlines.cist(None, scaling=data) if "O(N)" in h.statement)
    assert h.verdict == "not run" and h.model is None


def test_headline_without_measurement_is_not_run():
    h = next(h for h in headlines.cist(None) if "O(N)" in h.statement)
    assert h.verdict == "not run" and h.model is None and "scaling.json" in h.reading and h.plot is None


def test_plot_passes_plotcheck_and_summary_reads_the_json(tmp_path, monkeypatch):
    monkeypatch.setenv("DCNLAB_PLOTCHECK", "strict")         # a problem raises instead of a warning
    data = cist_scaling.result_json(_synthetic(SLOPES), reps=5, quick=True)
    png, js = cist_scaling.write_outputs(data, tmp_path)
    assert png.stat().st_size > 10_000 and json.loads(js.read_text())["slope"] == pytest.approx(1.1)
    # the verdict is the instruction counts' (here linear: reproduced); the timing is a figure in the reading
    from dcnlab.reproduce.cist import opcount

    points = [{"arrangement": arr, "family": "a=2h", "a": a, "h": a // 2, "switches": a * (a * a // 2 + 1),
               "links": a * a * a, "k": a // 2,
               "instructions": {"alg2" if arr == "absolute" else "alg1": 20 * a * (a * a // 2 + 1) + 100,
                                "alg3": 40 * a * (a * a // 2 + 1) + 500}}
              for arr in ("relative", "absolute") for a in (8, 12, 16)]
    data["operations"] = opcount.result(points, {"a=2h": [[8, 4], [12, 6], [16, 8]]}, True)
    js.write_text(json.dumps(data))
    write_summary(REPRODUCTION, tmp_path, None, None, NO_EMULATION, quick=True)
    h = next(h for h in summary.read(tmp_path / "summary.json").headlines if "O(N)" in h.statement)
    assert h.verdict == "reproduced" and h.model is not None and h.model <= 0
    assert "CPU time (a figure, not judged): " in h.reading and "Algorithm 2 1.10±" in h.reading


def test_plot_figure_has_no_problems(monkeypatch):
    data = cist_scaling.result_json(_synthetic(SLOPES), reps=5, quick=True)
    found = {}

    def check_only(fig, path, **kwargs):
        import matplotlib.pyplot as plt
        found["problems"] = plotcheck.problems(fig)
        found["axes"] = [(ax.get_xscale(), ax.get_yscale(), ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes]
        found["title"] = fig._suptitle.get_text()
        plt.close(fig)

    monkeypatch.setattr(plotcheck, "save", check_only)
    cist_scaling.plot(data, "unused.png")
    assert found["problems"] == []
    assert len(found["axes"]) == 3 and all(ax[:2] == ("log", "log") for ax in found["axes"])
    assert "(s" in found["axes"][0][3] and "(count" in found["axes"][0][2]
    assert "Bian et al." in found["title"] and "Theorems 5–7" in found["title"]


# -- the timing helpers (shape only: no assertion on a measured time) ----------------------------------------------

def test_time_call_shape_and_budget():
    r = cist_scaling.time_call(lambda: sum(range(2000)), reps=4)
    assert r["runs"] == 4 and r["calls"] >= 1 and 0 < r["min"] <= r["median"]

    def busy() -> None:
        import time
        t = time.process_time()
        while time.process_time() - t < 0.02:
            pass

    r = cist_scaling.time_call(busy, reps=10, budget=0.01)      # over budget: stops at the minimum of runs
    assert r["runs"] == cist_scaling.MIN_RUNS and r["calls"] == 1 and r["min"] >= 0.02
    with pytest.raises(ValueError):
        cist_scaling.time_call(busy, reps=0)


def test_measure_point_times_every_step():
    p = cist_scaling.measure_point("absolute", 4, reps=2, budget=0.05)
    assert p["switches"] == 36 and p["k"] == 2 and set(p["seconds"]) == {"alg2", "roots", "alg3"}
    assert all(v > 0 for v in p["seconds"].values()) and all(r == 2 for r in p["runs"].values())


# -- the exact root choice ------------------------------------------------------------------------------------

@pytest.mark.parametrize("arrangement, a, h", [("relative", 4, 2), ("relative", 7, 2), ("relative", 8, 3),
                                               ("circulant", 5, 2), ("circulant", 8, 4), ("relative", 9, 4)])
def test_rotation_shortcut_finds_the_all_pairs_centre(arrangement, a, h):
    fabric = _fabric(a, h, arrangement)
    graph = SwitchGraph.from_fabric(fabric)
    part = cist_partition(fabric, graph)
    assert _rotation_invariant(part, graph)
    assert skeleton_roots(part, graph) == [_centre(p, graph.adj) for p in part.vertex_parts()]


def test_absolute_is_not_rotation_invariant_and_uses_all_pairs():
    fabric = _fabric(6, 3, "absolute")
    graph = SwitchGraph.from_fabric(fabric)
    part = absolute_partition(6, 3)
    assert not _rotation_invariant(part, graph)
    assert skeleton_roots(part, graph) == [_centre(p, graph.adj) for p in part.vertex_parts()]
    # a pair partition on the absolute graph: the partition is invariant, the graph is not
    assert not _rotation_invariant(pair_partition(6, fabric.g), graph)


def test_tree_edges_are_build_trees_edges():
    fabric = _fabric(6, 3, "relative")
    graph = SwitchGraph.from_fabric(fabric)
    part = cist_partition(fabric, graph)
    roots = skeleton_roots(part, graph)
    edges = tree_edges(part, graph, roots)
    trees = build_trees(part, graph)
    assert [tuple((graph.names[u], graph.names[v]) for u, v in e) for e in edges] == [t.edges for t in trees]
    assert [graph.names[r] for r in roots] == [t.root for t in trees]
    assert all(len(e) == len(graph) - 1 for e in edges)
