"""Congestion policies from the CLI: ``plan congestion --policy`` and ``reproduce congestion --policy``
with examples/plugins' CappedFlows by file reference, a bad policy as one line, and the tenant experiment under a
policy in the model (its rows) and in the BMv2 plans (its pushes and meters)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REF = str(Path(__file__).resolve().parents[1] / "examples/plugins/dcnlab_example_plugins/congestion.py") \
    + ":CappedFlows"


def dcnlab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dcnlab", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


def test_plan_congestion_runs_a_policy_given_by_file_reference():
    r = dcnlab("plan", "congestion", "--policy", REF, "--tenant", "a:1:1", "--tenant", "b:1:2", "--tenant", "c:1:3",
               "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["policy"] == REF and data["origin"] == "reference"
    shares = {t["tenant"]: round(t["target_share"], 9) for t in data["tenants"]}
    assert shares == {"a": 0.2, "b": 0.4, "c": 0.4}      # weight x min(flows, 2)
    inc = {t["tenant"]: t["ccti_increase"] for t in data["tenants"]}
    assert inc == {"a": 2, "b": 2, "c": 3}               # per-flow rate 1/2, 1/2, 1/3: tenants 1/2 : 1 : 1


def test_plan_congestion_default_is_the_papers_policy():
    data = json.loads(dcnlab("plan", "congestion", "--json").stdout)
    assert data["policy"] == "tenant-fair"
    assert [(t["ccti_increase"], t["target_share"]) for t in data["tenants"]] == [(1, 0.5), (3, 0.5)]


@pytest.mark.parametrize("argv", [["plan", "congestion", "--policy", "nope"],
                                  ["reproduce", "congestion", "--emulate", "off", "--policy", "no/such.py:P",
                                   "--out", "OUT"]])
def test_a_bad_policy_is_one_line_and_exit_2_before_any_work(tmp_path, argv):
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    r = dcnlab(*argv, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "--policy" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_the_model_tenant_experiment_gets_rows_per_policy():
    from dcnlab.reproduce.congestion import model

    scenarios = model.build_scenarios(True, ("per-flow", REF))
    extra = [s for s in scenarios if s.meta.get("policy", "tenant-fair") != "tenant-fair"]
    assert sorted((s.meta["policy"], s.meta["mode"]) for s in extra) == sorted(
        (p, m) for p in ("per-flow", REF) for m in ("cc", "meter"))
    results = {s.name: (s.run(), 0.0) for s in extra}
    rows: list[tuple] = []
    policies = model._policy_rows({s.name: s for s in extra}, results, lambda *a: rows.append(a))
    assert [p["name"] for p in policies] == ["per-flow", REF] and policies[1]["origin"] == "reference"
    assert len(rows) == 2 * 2 * 5 and all(r[-1] == "target" for r in rows)
    # per-flow gives tenant 2 more as it opens flows; in its three-flow phase T1:T2 is about 1:3
    three = next(p for p in policies[0]["tenants"]["cc"] if p["tenant2_flows"] == 3)
    assert three["tenant_ratio"] < 0.5


def test_the_bmv2_tenant_plan_uses_the_policy():
    import importlib

    from dcnlab.reproduce.congestion import reproduce

    plans = importlib.import_module("dcnlab.reproduce.congestion.bmv2.plans")

    cfg = reproduce.bmv2_config(True, policy="per-flow")
    assert cfg.policy == "per-flow"
    cc = plans.tenant_plan(cfg, "cc")
    assert cc.meta["policy"] == "per-flow" and {c.params.ccti_increase for c in cc.changes} == {1}
    meter = plans.tenant_plan(cfg, "meter")
    first = [m.rate_bps for m in meter.meters if m.time_s == 0.0][-2:]
    assert first == [cfg.link_bps / 2, cfg.link_bps / 2]
    later = {m.tenant: m.rate_bps for m in meter.meters if 0 < m.time_s < 2 * cfg.phase_c_meter}
    assert later["tenant2"] == pytest.approx(2 * later["tenant1"])   # per flow: tenant 2's two flows get 2:1


def test_the_policies_figure_has_a_series_per_policy_and_tenant(tmp_path, monkeypatch, caplog):
    """fig5_policies.png: each policy's two tenant totals, per mode, the paper's tenant-fair among them; every
    series visible (plotcheck judges the saved figure)."""
    from dcnlab.controller.congestion import scenarios as sc
    from dcnlab.figures import plotcheck, plotstyle
    from dcnlab.reproduce.congestion import plots

    scen = [sc.tenant_fair(0.05, m, policy=p) for p in ("tenant-fair", "per-flow", REF) for m in ("cc", "meter")]
    results = {s.name: (s.run(), 0.0) for s in scen}
    legends, save = [], plotcheck.save

    def keep_legends(fig, path, **kw):
        legends.extend([t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes if ax.get_legend())
        return save(fig, path, **kw)

    monkeypatch.setattr(plotcheck, "save", keep_legends)
    path = plots.plot_policies(scen, results, tmp_path)
    assert path.name == "fig5_policies.png" and path.stat().st_size > 0
    assert legends == [[f"{p}: {t}" for p in ("tenant-fair", "per-flow", "CappedFlows() of congestion.py")
                        for t in ("tenant1", "tenant2")] + ["phase boundary"]] * 2
    assert not [r for r in caplog.records if r.name == "dcnlab.figures.plotcheck"], caplog.text
    plotstyle.pyplot().close("all")
