"""What ``dcnlab bench cist`` measures: construction plus validation of Dragonfly(a=16,h=8) for every arrangement
(goal <= 2 s each), and the log-log slopes of the construction time against N (Theorems 5-7;
:mod:`dcnlab.reproduce.cist.scaling`, the ``--quick`` sizes) of each case's arrangement."""

from __future__ import annotations

from typing import Any

BENCH_SPECS = tuple(f"dragonfly:p=1,a=16,h=8,arrangement={arr}" for arr in ("relative", "absolute", "circulant"))


BENCH_GOAL_SECONDS = 2.0


def bench_case(spec: str) -> dict[str, Any]:
    """Phase times of construction plus validation for one fabric (imports excluded)."""
    import time

    from dcnlab.controller.cist.graph import SwitchGraph
    from dcnlab.controller.cist.partition import cist_partition
    from dcnlab.controller.cist.trees import build_trees
    from dcnlab.controller.cist.validate import check_cists
    from dcnlab.topos.spec import parse_spec

    times: dict[str, float] = {}
    t0 = time.perf_counter()
    fabric = parse_spec(spec)
    graph = SwitchGraph.from_fabric(fabric)
    times["switch graph"] = time.perf_counter() - t0
    t = time.perf_counter()
    partition = cist_partition(fabric, graph)  # type: ignore[arg-type]
    times["partition (+ Araki check)"] = time.perf_counter() - t
    t = time.perf_counter()
    trees = build_trees(partition, graph)
    times["trees"] = time.perf_counter() - t
    t = time.perf_counter()
    validation = check_cists(graph.to_networkx(), partition.names(), [tr.edges for tr in trees])
    times["full validation"] = time.perf_counter() - t
    total = time.perf_counter() - t0
    return {"spec": spec, "switches": len(graph), "links": graph.num_edges(), "trees": len(trees),
            "diameters": [tr.diameter for tr in trees], "valid": validation.ok, "seconds": total, "phases": times}


def bench_slopes(arrangements: list[str]) -> dict[str, dict[str, float]]:
    """Per arrangement, ``{"partition", "alg3_per_tree", "alg3", "roots"}`` slopes of the quick scaling
    measurement (:func:`dcnlab.reproduce.cist.scaling.measure`)."""
    from dcnlab.reproduce.cist import scaling as cs

    data = cs.measure(True, arrangements=arrangements)
    out = {}
    for arr, f in data["fits"].items():
        out[arr] = {"partition": f["alg2" if "alg2" in f else "alg1"]["slope"]}
        out[arr].update({key: f[key]["slope"] for key in ("alg3_per_tree", "alg3", "roots")})
    return out
