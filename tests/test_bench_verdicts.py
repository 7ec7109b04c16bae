"""Every benchmark line that judges says against what (``bench topo`` once printed ``MISS`` with
its goal only in ``--help``).

The benchmarks themselves take minutes (``bench topo`` builds BCube(8,5)), so their measurements are
replaced by figures chosen to pass and to miss each goal; the commands' own output is then parsed.
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from dcnlab.cli import main

VERDICT = re.compile(r"\b(ok|OK|MISS|MISSED|FAIL|FAILED|PASS|PASSED|met|NOT met)\b")
GOAL = re.compile(r"\((goal:? [^)]+)\)")


def verdict_lines(text: str) -> list[str]:
    """The lines of ``text`` that judge; each must name its goal beside the verdict."""
    judged = [ln for ln in text.splitlines() if VERDICT.search(ln)]
    for ln in judged:
        assert GOAL.search(ln), f"a verdict without its goal: {ln!r}"
    return judged


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_the_checker_catches_a_bare_verdict():
    with pytest.raises(AssertionError, match="without its goal"):
        verdict_lines("bcube(8,5) enumerate   12.0   300  MISS  x")
    assert verdict_lines("case  1.0  ok (goal <= 10 s)\nno verdict here") == ["case  1.0  ok (goal <= 10 s)"]


def test_bench_topo_names_its_goal_on_every_line(capsys, monkeypatch):
    from dcnlab.bench import topo as bench_topo
    from dcnlab.results.goals import verdict
    from dcnlab.bench.topo import BenchResult

    results = [BenchResult("fast and small", 1.5, 300.0, "a"), BenchResult("slow", 12.0, 300.0, "b"),
               BenchResult("large", 2.0, 4000.0, "c")]
    monkeypatch.setattr(bench_topo, "run", lambda progress=None, names=None: results)
    lines = verdict_lines(run(capsys, "bench", "topo"))
    assert len(lines) == len(results)
    assert [ln.split()[0] for ln in lines] == ["fast", "slow", "large"]
    assert ["ok (goal <= 10 s, <= 3 GiB)" in ln for ln in lines] == [True, False, False]
    assert ["MISS (goal <= 10 s, <= 3 GiB)" in ln for ln in lines] == [False, True, True]
    assert bench_topo.TOPO_GOAL in verdict(True, bench_topo.TOPO_GOAL)
    got = json.loads(run(capsys, "bench", "topo", "--json"))
    assert [(r["ok"], r["goal_seconds"], r["goal_peak_mib"]) for r in got] == [(True, 10.0, 3072), (False, 10.0, 3072),
                                                                              (False, 10.0, 3072)]


def test_bench_cist_names_its_goal(capsys, monkeypatch):
    from dcnlab.reproduce.cist import bench as cist_bench

    def case(spec):
        return {"spec": spec, "switches": 24, "trees": 2, "seconds": 3.0 if "a=6" in spec else 0.5, "valid": True,
                "phases": {"partition": 0.1}}

    monkeypatch.setattr(cist_bench, "bench_case", case)
    monkeypatch.setattr(cist_bench, "bench_slopes", lambda arrs: {a: {"partition": 1.0, "alg3_per_tree": 1.0} for a in arrs})
    out = run(capsys, "bench", "cist", "--spec", "dragonfly:p=1,a=4,h=2", "--spec", "dragonfly:p=1,a=6,h=3",
              "--repeat", "1")
    lines = verdict_lines(out)
    assert len(lines) == 2 and "ok (goal <= 2 s, trees valid)" in lines[0] and "MISS (goal <= 2 s" in lines[1], out


def test_bench_aggregation_names_its_goals(capsys, monkeypatch):
    from dcnlab.reproduce.aggregation import bench as aggregation_bench
    from dcnlab.reproduce.aggregation import model as aggregation_model
    from dcnlab.reproduce.aggregation.bench import BenchResult, PhaseCost

    rows = [{"case": "a tree", "seconds": 0.1}, {"case": "the point", "seconds": 75.0, "goal": 60.0}]
    point = {"cpu_seconds": 1.0, "cpu_seconds_per_round": 0.1, "idle_machine_estimate": 1.0, "workers": 2,
             "saving": {"srs": 1.0}}
    monkeypatch.setattr(aggregation_bench, "model_rows", lambda *a, **k: (rows, point))
    monkeypatch.setattr(aggregation_model, "dataplane_missing", lambda tools=(): [])
    res = BenchResult("bcube:n=2,k=0", "w0", 100, 10, 100.0, 1, (PhaseCost("forward", 0, 10, 0, 10.0),
                                                                    PhaseCost("aggregate", 2, 10, 5, 30.0)), ((2, 0.33),))
    monkeypatch.setattr(aggregation_bench, "bench_dataplane", lambda **kw: res)
    lines = verdict_lines(run(capsys, "bench", "aggregation", "--rounds", "1"))
    assert any("MISS (goal <= 60 s)" in ln for ln in lines), lines
    assert any("against forwarding: MISS (goal >= 0.5 x at every fan-in)" in ln for ln in lines), lines


def test_bench_multicast_names_its_goals(capsys, monkeypatch):
    from dcnlab.controller.multicast import planning
    from dcnlab.reproduce.multicast import model as multicast_model

    monkeypatch.setattr(multicast_model, "_workload", lambda pattern: (None, None))
    slow = {"mr4lms": 40.0, "cmr4lms-fixed": 6.0}

    def plan(h, wl, algo, colors):
        s = slow.get(algo, 1.0)
        return SimpleNamespace(metrics=SimpleNamespace(groups=1, seconds=s, cpu_seconds=s))

    monkeypatch.setattr(planning, "plan", plan)
    lines = verdict_lines(run(capsys, "bench", "multicast"))
    assert len(lines) == 2 and "MISS (goal <= 5 s)" in lines[0] and "MISS (goal >= 10x)" in lines[1], lines


def test_bench_emu_rules_verdict_names_its_goal():
    from dcnlab.bench import emu as bench_emu

    assert verdict_lines(f"fattree:k=4 rules 1.0 12 40/41 {bench_emu.RULES_MISS}")
