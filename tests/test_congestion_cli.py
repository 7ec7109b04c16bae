"""``dcnlab plan|reproduce|bench congestion``: output, files, one-line errors."""

from __future__ import annotations

import json

import pytest

from dcnlab.controller.congestion import scenarios as sc
from dcnlab import cli
from dcnlab.reproduce.congestion import model as congestion_model


def test_plan_paper_tenants(capsys):
    assert cli.main(["plan", "congestion", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {r["tenant"]: r for r in data["tenants"]}
    assert rows["tenant1"]["ccti_increase"] == 1 and rows["tenant2"]["ccti_increase"] == 3
    assert rows["tenant1"]["target_share"] == 0.5 and rows["tenant2"]["meter_bps"] == 4e9


def test_plan_with_model_prediction(capsys):
    assert cli.main(["plan", "congestion", "--tenant", "a:1:1", "--tenant", "b:2:3", "--model",
                     "--seconds", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "CCTI_Inc" in out and "model" in out
    lines = {ln.split()[0]: ln.split() for ln in out.splitlines()[1:3]}
    assert lines["a"][3] == "2" and lines["b"][3] == "3"      # loads 1/1 : 3/2 -> 2 : 3


@pytest.mark.parametrize("arg, msg", [
    ("a:0:1", "WEIGHT=0 is out of range"),
    ("a:1:0", "FLOWS=0 is out of range"),
    ("a-1-1", "is not NAME:WEIGHT:FLOWS"),
])
def test_plan_bad_tenant_is_one_line(capsys, arg, msg):
    with pytest.raises(SystemExit) as e:
        cli.main(["plan", "congestion", "--tenant", arg])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and len(err.splitlines()) == 1


def test_bench_json(capsys):
    assert cli.main(["bench", "congestion", "--flows", "2", "20", "--seconds", "0.01", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["flows"] for r in rows] == [2, 20] and all(r["sim_per_wall"] > 0 for r in rows)


def test_reproduce_writes_plots_and_json(tmp_path, capsys, monkeypatch):
    def small(quick: bool):
        return [sc.fairness_incast(False, 0.1), sc.fairness_incast(True, 0.1),
                sc.tenant_fair(0.2, "cc"), sc.tenant_fair(0.2, "meter"),
                sc.proportional(2, 0.3, 0.1), sc.proportional(3, 0.3, 0.1),
                sc.large_scale(20, 4, 1, 0.2, 0.1, "free")]

    monkeypatch.setattr(congestion_model, "build_scenarios", small)
    out = tmp_path / "res"
    assert cli.main(["reproduce", "congestion", "--emulate", "off", "--quick", "--out", str(out), "--json",
                     "--workers", "1"]) == 0
    io = capsys.readouterr()
    summary = json.loads(io.out)
    assert "model backend" in io.err and "BMv2: not run: --emulate off" in io.err
    assert summary["note"] == congestion_model.BACKEND_NOTE and summary["backend"] == "model"
    assert summary["reason"] == "run by dcnlab reproduce congestion" and summary["emulation"] is None
    assert summary["emulation_why"] == "not run: --emulate off"
    names = {p.split("/")[-1] for p in summary["files"]}
    assert names == {"fig3_fairness.png", "theorem1_ratios.png", "fig5_tenants_cc.png",
                     "fig5_tenants_meter.png", "large_scale.png", "results.json", "summary.json"}
    for f in summary["files"]:
        assert (tmp_path / "res" / f.split("/")[-1]).stat().st_size > 1000
    full = json.loads((out / "results.json").read_text())
    assert set(full["series"]) >= {"tenant_fair_cc", "proportional_1_2"}
    assert len(full["series"]["tenant_fair_cc"]["times"]) == 10          # 1 s sampled every 100 ms
    assert [c["ok"] for c in summary["checks"] if c["scenario"].startswith("(b)")] == [True, True]
    assert summary["becn_per_sample"]["paper"] == {"1": 790, "2": 480, "3": 320}


def test_reproduce_bad_out_dir(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli.main(["reproduce", "congestion", "--out", str(blocker / "sub")]) == 2
    assert "cannot create the directory" in capsys.readouterr().err
