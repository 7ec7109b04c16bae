"""``dcnlab plan cist`` and ``dcnlab bench cist``."""

from __future__ import annotations

import json

import pytest

from dcnlab.cli import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_plan_json_exact(capsys):
    rc, out, _ = _run(capsys, "plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2", "--json")
    assert rc == 0
    data = json.loads(out)
    assert list(data) == ["parts", "trees", "diameters", "valid"]
    assert data["valid"] is True and data["diameters"] == [11, 9]
    assert data["parts"][0][:4] == ["s0_0", "s0_3", "s1_0", "s1_3"]
    assert len(data["trees"]) == 2 and all(len(t) == 35 for t in data["trees"])
    names = {f"s{i}_{j}" for i in range(9) for j in range(4)}
    assert {v for t in data["trees"] for e in t for v in e} == names
    assert all(isinstance(e, list) and len(e) == 2 for t in data["trees"] for e in t)


@pytest.mark.parametrize("arrangement", ["absolute", "circulant"])
def test_plan_text(capsys, arrangement):
    rc, out, _ = _run(capsys, "plan", "cist", "--topo", f"dragonfly:p=1,a=5,h=4,arrangement={arrangement}")
    assert rc == 0
    assert "trees       2 = ⌊a/2⌋" in out and "valid       yes" in out and "diameters" in out
    assert "V_0: 63 switches" in out and "V_1: 42 switches" in out
    assert "(104 edges; --json lists them all)" in out  # 105 switches: long edge lists are summarised


def test_plan_failures_json(capsys):
    rc, out, _ = _run(capsys, "plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2", "--json",
                      "--fail", "s0_0,s1_3-s1_0", "--adversary", "switch")
    data = json.loads(out)
    assert rc == 0 and list(data) == ["parts", "trees", "diameters", "valid", "failures"]
    given = data["failures"]["given"]
    assert given["failed"] == ["s0_0", "s1_0-s1_3"]
    assert given["cists"]["lost"] == 0 and given["cists"]["pairs"] == 35 * 34
    assert given["single_tree"]["lost"] > 0
    assert data["failures"]["adversary"]["cists"]["lost"] > 0


def test_plan_plot(tmp_path, capsys):
    png = tmp_path / "trees.png"
    rc, _, err = _run(capsys, "plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2", "--plot", str(png), "--json")
    assert rc == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "wrote" in err


@pytest.mark.parametrize("spec,message", [
    ("dragonfly:p=1,a=5,h=1", "relative arrangement with h=1 and a=5"),
    ("dragonfly:p=1,a=9,h=1,arrangement=absolute", "absolute construction for a=9, h=1"),
    ("dragonfly:p=1,a=1,h=2", "valid: a >= 2"),
    ("fattree:k=4", "needs a dragonfly"),
    ("dragonfly:p=1,a=4,h=3,arrangement=circulant", "needs an even h"),
])
def test_plan_errors(capsys, spec, message):
    rc, out, err = _run(capsys, "plan", "cist", "--topo", spec)
    assert rc == 2 and out == "" and err.startswith("dcnlab: error: ") and message in err
    assert "Traceback" not in err


def test_plan_bad_failure(capsys):
    rc, _, err = _run(capsys, "plan", "cist", "--topo", "dragonfly:a=4,h=2", "--fail", "s0_0-s0_0")
    assert rc == 2 and "no link" in err


def test_algorithm3_rule(capsys):
    rc, out, _ = _run(capsys, "plan", "cist", "--topo", "dragonfly:p=0,a=6,h=2", "--rule", "algorithm3", "--json")
    assert rc == 0 and json.loads(out)["valid"] is True
    rc, _, err = _run(capsys, "plan", "cist", "--topo", "dragonfly:p=0,a=6,h=2,arrangement=absolute",
                      "--rule", "algorithm3")
    assert rc == 2 and "use rule 'generic'" in err


def test_bench_small_spec(capsys):
    rc, out, _ = _run(capsys, "bench", "cist", "--spec", "dragonfly:p=1,a=6,h=3", "--repeat", "1", "--json")
    data = json.loads(out)
    assert rc == 0 and len(data) == 1
    r = data[0]
    assert r["valid"] is True and r["trees"] == 3 and r["switches"] == 6 * 19
    assert set(r["phases"]) == {"switch graph", "partition (+ Araki check)", "trees", "full validation"}
    assert set(r["slope"]) == {"partition", "alg3_per_tree", "alg3", "roots"}     # values are timings
