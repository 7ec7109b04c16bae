"""``plan aggregation --algo optimal --time-limit``: the limit bounds the whole plan.

No test here asserts a time: each checks what does not depend on load (the command finished within a
hang guard far above its limit, the output says what it reports, the tree is a valid tree of the
fabric, the solver's process is gone).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dcnlab.controller import aggregation as agg
from dcnlab.controller.aggregation import optimal, optimal_run
from dcnlab.controller.aggregation.tree import AggregationTree
from dcnlab.cli import main
from dcnlab.topos.spec import parse_spec

ROOT = Path(__file__).resolve().parent.parent
GUARD = 180
"""Hang guard of the CLI run: a 1-s limit plus Python's start-up take a few seconds on an idle machine
(without the deadline the same plan ran for minutes)."""


def _tree_from_json(fabric, data) -> AggregationTree:
    parent = {c: p for c, p in data["edges"]}
    tree = AggregationTree.build(fabric.spec, data["algorithm"], data["receiver"], data["senders"], parent,
                                 lambda c, p: (c, p), data["delta"])
    tree.check_fabric(fabric)          # every hop a link of the fabric
    return tree                        # build() validated it: one parent each, no cycle, every sender reaches


def test_time_limit_bounds_model_building_and_solving():
    """fattree:k=22 with 300 senders: a 3.3-million-variable model, far more than 1 s of work."""
    argv = [sys.executable, "-m", "dcnlab", "plan", "aggregation", "--topo", "fattree:k=22", "--receiver", "h0_0_0",
            "--senders", "random:300", "--algo", "optimal", "--time-limit", "1", "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=GUARD, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    info = data["info"]
    assert data["algorithm"] == "optimal" and info["time_limit"] == 1
    if info["status"] != "optimal":                   # what a load-independent run can say: best tree + gap,
        assert "gap" in info                          # or the heuristic it fell back to, and why
        assert "fallback" not in info or (info["fallback"] in agg.FALLBACKS["fattree"] and info["why"])
    tree = _tree_from_json(parse_spec("fattree:k=22"), data)
    assert tree.cost == data["cost"] and sorted(tree.senders) == sorted(data["senders"])


def test_text_output_names_the_fallback_in_one_line(capsys, monkeypatch):
    """No tree from the solver by the limit: one status line naming the heuristic tree shown."""
    monkeypatch.setattr(agg, "solve_by", lambda *a, **k: optimal_run.Attempt(None, "the limit came while testing"))
    rc = main(["plan", "aggregation", "--topo", "fattree:k=4", "--receiver", "h0_0_0", "--senders",
               "h1_0_0,h2_1_1,h3_0_1", "--algo", "optimal", "--time-limit", "5"])
    out = capsys.readouterr().out
    status = [line for line in out.splitlines() if line.startswith("status")]
    assert rc == 0 and len(status) == 1
    assert "time limit (5 s): no better tree from the MILP (the limit came while testing)" in status[0]
    assert "this is updown, the cheapest heuristic tree; gap unknown" in status[0]


def test_best_tree_found_is_reported_with_its_gap(capsys, monkeypatch):
    """The solver stopped at its limit with a tree: that tree, with HiGHS's gap against its lower bound."""
    fabric = parse_spec("bcube:n=4,k=1")
    senders = ["v2", "v5", "v9", "v10", "v11", "v14"]
    best = min((agg.incast_tree(fabric, "v0", senders, a) for a in agg.FALLBACKS["bcube"]), key=lambda t: t.cost)
    parent = {int(c[1:]): int(p[1:]) for c, p in best.parent.items()}
    found = optimal.Optimum(parent, best.cost, "time limit", 0.5, 0.3, 0.75 * best.cost)
    monkeypatch.setattr(agg, "solve_by", lambda *a, **k: optimal_run.Attempt(found))
    base = ["plan", "aggregation", "--topo", "bcube:n=4,k=1", "--receiver", "v0", "--senders", ",".join(senders),
            "--algo", "optimal", "--time-limit", "5"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert f"status    time limit (5 s): the best tree HiGHS found, gap 25.0% (lower bound {0.75 * best.cost:g})" in out
    assert main([*base, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["info"]["status"] == "time limit" and data["info"]["gap"] == pytest.approx(0.25)
    assert "fallback" not in data["info"] and data["cost"] == best.cost
    AggregationTree.build(fabric.spec, "optimal", "v0", senders, dict(data["edges"]), agg._bcube_hop(fabric),
                          0.0).check_fabric(fabric)


def test_a_passed_deadline_falls_back_without_starting_the_solver(monkeypatch):
    """A shuffle's later trees may find the limit already passed: no solver process, the cheapest heuristic."""
    def started(*a, **k):
        raise AssertionError("a solver process was started after the deadline")
    monkeypatch.setattr(optimal_run.multiprocessing, "get_context", started)
    fabric = parse_spec("fattree:k=4")
    passed = optimal_run.Deadline(1.0, start=time.monotonic() - 10)
    tree = agg.incast_tree(fabric, "h0_0_0", ["h1_0_0", "h2_1_1"], "optimal", deadline=passed)
    assert tree.algorithm == "optimal" and tree.info["status"] == "no MILP tree"
    assert tree.info["fallback"] == "updown" and "had passed" in str(tree.info["why"])
    tree.check_fabric(fabric)


def _sleep_forever(*a, **k):
    time.sleep(3600)


def test_solver_process_is_ended_at_the_deadline(monkeypatch):
    """A solver that never returns (HiGHS presolving a huge model) is ended when the time is up."""
    monkeypatch.setattr(optimal, "run_model", _sleep_forever)     # inherited by the forked child
    graph = optimal.bcube_hop_graph(2, 2)
    before = set(multiprocessing.active_children())
    attempt = optimal_run.solve_by(graph, 0, [1, 2, 5], 0.0, None, time.monotonic() + 0.5)
    assert attempt.optimum is None and attempt.why.startswith("the limit came while solving the model")
    assert set(multiprocessing.active_children()) <= before


def test_model_building_stops_when_asked():
    graph = optimal.bcube_hop_graph(4, 1)
    calls = []

    def check():
        calls.append(1)
        if len(calls) == 2:
            raise optimal.OutOfTime
    with pytest.raises(optimal.OutOfTime):
        optimal.build_model(graph, 0, list(range(1, 16)), 0.0, check=check)
    assert len(calls) == 2


def test_vectorised_model_solves_as_before():
    """The whole-array model gives the optima the per-row model gave (costs measured on trees)."""
    fabric = parse_spec("bcube:n=3,k=1")
    for delta, expected in ((0.0, 8.0), (1.0, 10.0)):
        tree = agg.incast_tree(fabric, "v0", ["v1", "v4", "v8"], "optimal", delta)
        assert tree.info["status"] == "optimal" and tree.cost == expected
    v, nnz = optimal.model_size(optimal.bcube_hop_graph(3, 1), 0, [1, 4, 8])
    model = optimal.build_model(optimal.bcube_hop_graph(3, 1), 0, [1, 4, 8])
    assert model.variables == v and model.matrix.nnz == nnz
    assert np.all(model.lower <= model.upper)
