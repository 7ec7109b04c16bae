"""Every reproduction's figures pass :mod:`dcnlab.figures.plotcheck` (titles naming the paper,
labelled axes with units, legends naming only what is drawn, distinct colours, legends clear of the data, ...)
and every ``reproduce`` table is at most 100 columns wide with unique row labels.

The model backends run at small sizes (quick reproductions or short scenarios); the BMv2 experiments' plots
run on synthetic results. ``DCNLAB_PLOT_DIR=DIR`` keeps the PNGs there (to look at them)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from dcnlab.figures import plotcheck  # noqa: E402
from dcnlab.figures import plotstyle
from dcnlab.results import tables


@pytest.fixture
def figures(monkeypatch, tmp_path) -> Iterator[list[tuple[str, list[str]]]]:
    """Every figure saved during the test, checked just before it is written: (file name, problems)."""
    seen: list[tuple[str, list[str]]] = []
    real = Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        seen.append((Path(str(fname)).name, plotcheck.problems(self)))
        keep = os.environ.get("DCNLAB_PLOT_DIR")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            real(self, Path(keep) / Path(str(fname)).name, *args, **kwargs)
        return real(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    monkeypatch.setenv("DCNLAB_PLOTCHECK", "off")       # plotcheck.save: the fixture checks (once)
    yield seen


def assert_clean(seen: list[tuple[str, list[str]]], expected: int | None = None) -> None:
    bad = {name: p for name, p in seen if p}
    assert not bad, "\n".join(f"{name}: {p}" for name, ps in bad.items() for p in ps)
    if expected is not None:
        assert len(seen) == expected, [n for n, _ in seen]


def assert_table(text: str, labels: list[str] | None = None) -> None:
    lines = text.splitlines()
    too_wide = [line for line in lines if len(line) > tables.MAX_WIDTH]
    assert not too_wide, too_wide
    labels = labels if labels is not None else getattr(text, "labels", None)
    assert labels, "the table has no row labels"
    dup = sorted({x for x in labels if labels.count(x) > 1})
    assert not dup, dup


# -- the checker itself ----------------------------------------------------------------------------------------
def _fig(**kw):
    plt = plotstyle.pyplot()
    return plt.subplots(**kw)


def test_checker_accepts_a_good_figure():
    fig, ax = _fig(figsize=(8, 4), layout="constrained")
    for i, st in enumerate(plotstyle.series_styles(3)):
        ax.plot([1, 2, 3], [i, i + 1, i + 2], label=f"method {i}", **st)
    ax.axhline(1.5, color="#555555", ls=":")
    plotstyle.legend_outside(ax, handles=[*ax.get_legend_handles_labels()[0],
                                          plotstyle.style_key("dotted: the paper's value", ":")])
    ax.set(title="Guo et al. (IRS/SRS), Fig. 5: example", xlabel="m (count)", ylabel="saving (%)")
    assert plotcheck.problems(fig) == []


@pytest.mark.parametrize("flaw, expect", [
    ("no title", "no title"),
    ("no unit", "no unit in parentheses"),
    ("raw name", "raw field name"),
    ("hidden", "is hidden under"),
    ("colour", "share a colour"),
    ("covers", "covers data"),
    ("zero", "every series is zero"),
    ("log", "log y axis shows"),
    ("reference", "reference line"),
    ("yrange", "different y-ranges"),
    ("no legend", "no legend names"),
    ("empty entry", "nothing visible"),
    ("font", "pt; at least"),
    ("overlap", "labels overlap"),
])
def test_checker_finds_each_flaw(flaw, expect):
    fig, axes = _fig(ncols=2, figsize=(10, 4), layout="constrained")
    ax = axes[0]
    x, y = [1, 2, 3, 4], [3.0, 1.0, 4.0, 1.5]
    styles = plotstyle.series_styles(2)
    ax.plot(x, y, label="SRS", **styles[0])
    ax.plot(x, [v + 1 for v in y], label="incast", **styles[1])
    ax.set(title="a panel", xlabel="m (count)", ylabel="saving (%)")
    axes[1].plot(x, y, color="k", label="one")
    axes[1].set(title="another panel", xlabel="m (count)", ylabel="saving (%)")
    axes[1].set_ylim(axes[0].get_ylim())
    legend = True
    if flaw == "no title":
        ax.set_title("")
    elif flaw == "no unit":
        ax.set_ylabel("saving")
    elif flaw == "raw name":
        ax.set_ylabel("receiver_input (MB)")
    elif flaw == "hidden":
        ax.plot(x, y, label="copy", color="tab:green", **{k: v for k, v in styles[0].items() if k != "color"})
    elif flaw == "colour":
        ax.plot(x, [0, 0, 1, 1], label="same colour", color=styles[0]["color"], ls=":")
    elif flaw == "covers":
        ax.legend(loc="center")
        legend = False
    elif flaw == "zero":
        axes[1].lines[0].set_ydata([0, 0, 0, 0])
    elif flaw == "log":
        axes[1].set_yscale("log")
        axes[1].set_ylim(1.1, 9)
        axes[1].set_ylabel("cost (ratio)")
    elif flaw == "reference":
        ax.axvline(2.5, color="tab:purple")
    elif flaw == "yrange":
        axes[1].set_ylim(0, 100)
    elif flaw == "no legend":
        legend = False
    elif flaw == "empty entry":
        ax.plot(x, [float("nan")] * 4, label="never ran", color="tab:olive")
    elif flaw == "font":
        ax.set_xlabel("m (count)", fontsize=5)
    elif flaw == "overlap":
        for i in range(5):
            ax.annotate(f"node{i}", (2, 2), fontsize=8)
    if legend:
        plotstyle.legend_outside(ax)
    found = plotcheck.problems(fig)
    assert any(expect in p for p in found), found
    with pytest.raises(plotcheck.PlotProblem):
        plotcheck.save(fig, Path(os.devnull).with_suffix(".png"), strict=True)


def _panels_with_a_sparse_series(sparse: list[float]):
    """Shaped like multicast_1ppn.png: six panels of grouped bars (some on a log axis), one legend for the
    figure made of Patch proxies, and a third series measured on only some of the patterns (NaN elsewhere)."""
    import numpy as np
    from matplotlib.patches import Patch

    fig, axes = _fig(nrows=2, ncols=3, figsize=(16, 9), layout="constrained", sharex=True)
    colours = plotstyle.colors(3)
    names = ("C-MR4LMS fixed", "C-MR4LMS dynamic", "C-MR4LMS dyn./group")
    xs = np.arange(len(sparse))
    for j, ax in enumerate(axes.flat):
        for i, name in enumerate(names):
            vals = [float(2 + i + k) for k in range(len(sparse))] if i < 2 else [v * (j + 1) for v in sparse]
            ax.bar(xs + (i - 1) * 0.25, vals, 0.25, color=colours[i], label=name)
        if j % 2:
            plotstyle.log_scale(ax)
            ax.set_ylim(0.5, 100)
        ax.set(title=f"({'abcdef'[j]}) panel", ylabel=f"quantity {j} (groups)")
        ax.set_xticks(xs, [f"p{k}" for k in xs])
    for ax in axes[-1]:
        ax.set_xlabel("communication pattern (process grid)")
    plotstyle.legend_below(fig, [Patch(color=colours[i], label=n) for i, n in enumerate(names)], ncol=3)
    fig.suptitle("Chen et al. (C-MR4LMS), Fig. 9: example")
    return fig


def test_figure_legend_entry_of_bars_drawn_on_some_patterns_is_visible():
    """'C-MR4LMS dyn./group' once ran on 2 of the 7 patterns; its bars (a BarContainer, which is a
    tuple) were judged like a legend's handle tuple, every bar needed, so the NaN ones hid it in every panel."""
    nan = float("nan")
    fig = _panels_with_a_sparse_series([nan, nan, nan, 3.0, 4.0, nan, nan])
    assert not [p for p in plotcheck.problems(fig) if "nothing visible" in p]
    # a series with no bar drawn in any panel is still one
    fig = _panels_with_a_sparse_series([nan] * 7)
    assert any("'C-MR4LMS dyn./group': its series has nothing visible" in p for p in plotcheck.problems(fig))


def test_multicast_plot_with_the_group_variant_on_two_patterns(figures, tmp_path):
    """The quick run's multicast_1ppn.png: the group-scope variant only where a reading names it."""
    from dcnlab.reproduce.multicast import plots as mm_plots
    from dcnlab.reproduce.multicast import reproduction as multicast

    rows = [r for r in _multicast_rows() if r["algo"] != "cmr4lms-dynamic/group" or
            r["pattern"] in multicast.QUICK_MC_GROUP]
    assert len(mm_plots.plot(rows, tmp_path)) == 2
    assert_clean(figures, 2)


def test_table_fits_wraps_and_keeps_labels():
    rows = [("a row", "x" * 80, "1.00"), ("another row", "short", "2.00")]
    t = tables.table([tables.Column("case"), tables.Column("what", wrap=True), tables.Column("ours", "%", ">")],
                     rows, notes=["a note " * 30])
    assert_table(t)
    assert t.labels == ["a row", "another row"] and "(%)" in t.splitlines()[1]
    assert tables.verdict("percent", 35.9, 32.87) == ("±3 points", "deviates")
    assert tables.verdict("percent", 18.1, 17.64)[1] == "reproduced"
    assert tables.verdict("ratio", 1.05, 1.0) == ("±10%", "reproduced")
    assert tables.verdict("count", 512, 523)[1] == "deviates"
    assert tables.verdict("percent", 1.0, None) == ("-", "-")


# -- aggregation (Guo et al. IRS/SRS, Fang et al. M2) ---------------------------------------------------------
def test_aggregation_reproduction(figures, tmp_path, capsys):
    from dcnlab.reproduce.aggregation import model as aggregation_model
    from dcnlab.cli import main

    assert main(["reproduce", "aggregation", "--emulate", "off", "--quick", "--rounds", "1", "--workers", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert_clean(figures, 18)
    results = __import__("json").loads((tmp_path / "aggregation.json").read_text())["results"]
    table = aggregation_model.table(results)
    assert_table(table)
    assert table.splitlines()[0] in out and "Guo Fig. 4(a)" in out and "reproduced" in out


def test_aggregation_coinciding_series_stay_visible(figures, tmp_path):
    from dcnlab.reproduce.aggregation.plots import line_chart

    same = [10.0, 20.0, 30.0]
    line_chart(tmp_path / "x.png", "Guo et al. (IRS/SRS), Fig. 5: equal series", "m (count)", "saving (%)",
               [1, 2, 3], {"srs": same, "incast": same, "unicast": [0.0, 1.0, 2.0]}, {"srs": 12.0})
    line_chart(tmp_path / "zero.png", "Fang et al. (M2), Fig. 5(b): all zero", "k (levels)", "aggregators (count)",
               [1, 2], {"m2": [0, 0], "irs": [0, 0]})
    assert_clean(figures, 2)


def _job(exp, algorithm, kind, model, measured, completion):
    return exp.JobResult("bcube:n=4,k=1", kind, algorithm, ("v0",), ("v1",), 8, True, model / 944, model, measured,
                         0, 0, 0, 0, 0, 0, 0, completion, "v1->w1", 944, 8, 0, 0, 0, 3, 1)


def test_aggregation_emulation_plot(figures, tmp_path):
    from dcnlab.reproduce.aggregation import bmv2 as exp

    fabrics = []
    for spec, scale in (("bcube:n=4,k=1", 1.0), ("fattree:k=4", 1.6)):
        jobs = tuple(_job(exp, a, kind, int(m * scale), int(m * scale * 1.01), t)
                     for a, kind, m, t in (("irs", "incast", 6000, 0.7), ("m2", "incast", 5600, 0.69),
                                           ("none", "incast", 11000, 1.41), ("srs", "shuffle", 9000, 2.13),
                                           ("none", "shuffle", 13000, None)))
        fabrics.append(exp.FabricResult(spec, 24, 16, 3.0, jobs))
    exp.plot(exp.EmuResult(exp.EmuConfig(), tuple(fabrics), 10.0), tmp_path / "aggregation-emu.png")
    assert_clean(figures, 1)


# -- multicast (Chen et al., C-MR4LMS) ------------------------------------------------------------------------
def _multicast_rows(seed: int = 3) -> list[dict]:
    from dcnlab.reproduce.multicast import model as mm

    rng = random.Random(seed)
    rows = []
    for p in mm.PATTERNS_1PPN + mm.PATTERNS_4PPN:
        groups = rng.randint(300, 12800)
        for a in mm.ALGOS:
            trees = 1 if a == "global" else rng.randint(32, groups)
            rows.append({"pattern": p, "algo": a, "ppn": 4 if "ppn=4" in p else 1, "groups_in": groups,
                         "groups": groups, "trees": trees, "refused": groups - 32 if a == "opensm" else 0,
                         "efi_max": rng.randint(1, 700), "efi_avg": rng.uniform(1, 90), "tfi_max": rng.randint(1, 400),
                         "tfi_avg": rng.uniform(1, 4), "entries_per_port_max": rng.randint(1, 32),
                         "seconds": rng.uniform(0.003, 600), "cpu_seconds": rng.uniform(0.003, 600)})
    return rows


def test_multicast_plots_and_tables(figures, tmp_path):
    from dcnlab.reproduce.multicast import plots as mm_plots
    from dcnlab.reproduce.multicast import model as mm

    rows = _multicast_rows()
    assert len(mm_plots.plot(rows, tmp_path)) == 2
    quick = [r for r in rows if r["pattern"] in mm.QUICK_PATTERNS and (r["algo"] != "mr4lms"
                                                                      or r["pattern"] in mm.QUICK_MR4LMS)]
    assert len(mm_plots.plot(quick, tmp_path)) == 2           # 4 ppn without MR4LMS-like: says what did not run
    assert_clean(figures, 4)
    assert_table(mm.table(rows))
    claims = mm.claims(rows)
    assert len(claims) >= 8
    ct = mm.claims_table(claims)
    assert_table(ct)
    assert all(c.tolerance for c in claims)


def test_multicast_emulation_plot(figures, tmp_path):
    from dcnlab.reproduce.multicast import bmv2 as exp

    def window(name, **kw):
        base = dict(name=name, flow=1, count=2, streams=2, messages=4, frames=4, receptions=4, delivered=4, lost=0,
                    dups=0, outsider_delivered=0, filtered=0, model_checked=True)
        return exp.WindowResult(**(base | kw))

    timeline = tuple((t / 100, 1.0 if t < 0 or t > 2 else 0.5, 1.0) for t in range(-5, 10))
    fo = exp.Failover("drop", ("l2_0_0", "l1_0_0"), ("l2_0_0-eth0", "l1_0_0-eth2"), 1.0, True, 0.001, 0.01, 0.004,
                      0.006, 0.011, (1, 4), ((0, 3),), 8, 2, 5, 0, timeline)
    windows = (window("steady"), window("failure", model_checked=False, delivered=3, lost=1),
               window("failed-over", link_packets=7, link_model=7, links_compared=10))
    points = tuple((n, n) for n in range(0, 60, 3))
    res = exp.EmuResult(exp.DEFAULT_SPEC, 32, 16, 3, "fixed", "both", (), (), (), (), {"ok": True}, windows, fo,
                        6, 0, 3, 9, 4.0, 12.0, points)
    exp.plot(res, tmp_path / "a.png")
    exp.plot(exp.EmuResult(exp.DEFAULT_SPEC, 32, 16, 3, "fixed", "both", (), (), (), (), {"ok": True}, windows[:1],
                           None, 6, 0, 3, 9, 4.0, 12.0, ()), tmp_path / "b.png")
    assert_clean(figures, 2)


# -- congestion (Zhang et al., IB CC) -------------------------------------------------------------------------
def test_congestion_model_plots_and_table(figures, tmp_path):
    from dcnlab.controller.congestion import scenarios as sc
    from dcnlab.reproduce.congestion import plots as congestion_plots
    from dcnlab.reproduce.congestion import model as congestion_model

    scenarios = [sc.fairness_incast(False, 0.12), sc.fairness_incast(True, 0.12), sc.tenant_fair(0.3, "cc"),
                 sc.tenant_fair(0.3, "meter"), sc.proportional(2, 0.3), sc.proportional(3, 0.3),
                 sc.large_scale(16, 4, 1, 0.15, 0.05, "reset"), sc.large_scale(32, 8, 1, 0.15, 0.05, "free")]
    results = congestion_model.run_all(scenarios, 1)
    summary = congestion_model.summarize(scenarios, results)
    files = congestion_plots.plot_all(scenarios, results, summary, tmp_path)
    assert len(files) == 5
    assert_clean(figures, 5)
    table = congestion_model.checks_table(summary["checks"])
    assert_table(table)
    assert "phase 1" in table and "mean <= 10" in table


def test_congestion_emulation_plots_and_table(figures, tmp_path):
    from dcnlab.controller.congestion.dataplane import PortMarks
    from dcnlab.reproduce.congestion import bmv2 as bp
    from test_congestion_experiment import _fake_replies

    cfg = bp.quick()
    runs = []
    for plan in bp.plans(cfg):
        k = plan.meta["kind"]
        if k == "ratio":
            rate = {"inc1": 600, f"inc{plan.meta['ratio']}": 300}.get
        elif k == "tenants":
            rate = {"C->A": 400}.get
        elif plan.meta["mode"] == "off":
            rate = {"A->C": 200, "B->C": 200}.get
        else:
            rate = {}.get
        becn = (lambda n: 0) if plan.meta["mode"] == "meter" else (lambda n: 2 if n == "D->B" else 1)
        ids, rx, tx = _fake_replies(plan, cfg, lambda n, r=rate: r(n) or 400, becn)
        tenant_of = {f.name: f.tenant for f in plan.flows}
        emu = bp.measured_result(plan, cfg, ids, tenant_of, tx, rx, plan.meta["routes"])
        runs.append(bp.EmuRun(plan, emu, bp.predict(plan, cfg), {"bottleneck": PortMarks(10, 4, 2)}, tx, rx,
                              (1.0, 1.0), 1.0))
    res = bp.ExperimentResult(cfg, runs, 10.0)
    files = bp.plot(res, tmp_path)
    assert len(files) == 4
    assert_clean(figures, 4)
    table = bp.summary_table(res.summary())
    assert_table(table)
    assert "cc, phase 2, 2 T2 flows" in table and "cc, phase 4, 2 T2 flows" in table


# -- cist (Bian et al., CISTs on Dragonfly) -------------------------------------------------------------------
def test_cist_reproduction(figures, tmp_path, capsys):
    from dcnlab.reproduce.cist import model as cist_model
    from dcnlab.cli import main

    assert main(["reproduce", "cist", "--emulate", "off", "--quick", "--workers", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert_clean(figures, 2)  # model-sweep.png and operations.png (instructions against N; --quick times nothing)
    assert sorted(name for name, _ in figures) == ["model-sweep.png", "operations.png"]
    cases = __import__("json").loads((tmp_path / "model.json").read_text())
    table = cist_model.model_table(cases)
    assert_table(table)
    assert table.splitlines()[2] in out and "reproduced" in out
    grid = cist_model.instances_table(cases)
    assert_table(grid)
    assert grid.splitlines()[0] in out


def test_cist_emulation_plot(figures, tmp_path):
    from dcnlab.controller.cist import plan_cists, single_tree
    from dcnlab.controller.cist.dataplane import BASELINE_TREE, compile_broadcast
    from dcnlab.reproduce.cist import bmv2 as exp
    from dcnlab.topos.dragonfly import Dragonfly
    from test_cist_dataplane import Switches, as_state
    from test_cist_experiment import outcomes

    fabric = Dragonfly(p=1, a=4, h=2)
    plan = plan_cists(fabric)
    baseline = single_tree(plan.graph)
    switches = Switches(as_state(compile_broadcast(fabric, plan.graph, {t.tree_id: t for t in plan.trees}
                                                   | {BASELINE_TREE: baseline})))
    setup = (fabric, plan, baseline, switches)
    cfg = exp.EmuConfig(fabric.spec, during=4, after=2)
    phases = []
    for case in exp.failure_cases(plan.graph, plan.trees, ("switch", "link"), 2, restored_check=False):
        cist, single = outcomes(setup, case)
        phases.append(exp.PhaseResult(case.name, case.kind, tuple(str(case.failures).split(",")) if case.f else (),
                                      case.cut_pair, 0.5 if case.f else None, 36, cist, single, 1.0))
    result = exp.EmuResult(fabric.spec, 36, 36, 36, 2, (11, 9), baseline.root, baseline.diameter, cfg,
                           tuple(phases), 3.0, 0.2, 20.0, 1000)
    exp.plot(result, tmp_path / "emu.png")
    assert_clean(figures, 1)
    lines = result.summary_lines()
    assert max(len(line) for line in lines) <= tables.MAX_WIDTH, max(lines, key=len)


# -- fabric and tree drawings ---------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["fattree:k=4", "bcube:n=4,k=1", "bcube:n=3,k=2", "dragonfly:p=1,a=4,h=2",
                                  "midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=2"])
def test_fabric_drawings(figures, tmp_path, spec):
    from dcnlab.figures.render import render
    from dcnlab.topos.spec import parse_spec

    render(parse_spec(spec), tmp_path / "f.png")
    assert_clean(figures, 1)


@pytest.mark.parametrize("argv", [
    ["--topo", "fattree:k=4", "--receiver", "h0_0_0", "--senders", "random:6"],
    ["--topo", "fattree:k=6", "--receiver", "h0_0_0", "--senders", "random:20"],
    ["--topo", "bcube:n=4,k=1", "--receiver", "v0", "--senders", "v2,v5,v9,v10,v11,v14"],
    ["--topo", "bcube:n=3,k=2", "--shuffle", "--receivers", "random:3", "--senders", "random:6"]])
def test_tree_drawings(figures, tmp_path, capsys, argv):
    from dcnlab.cli import main

    assert main(["plan", "aggregation", *argv, "--plot", str(tmp_path / "t.png")]) == 0
    assert_clean(figures, 1)


@pytest.mark.parametrize("spec", ["dragonfly:p=1,a=4,h=2", "dragonfly:p=1,a=6,h=2"])
def test_cist_tree_drawings(figures, tmp_path, capsys, spec):
    from dcnlab.cli import main

    assert main(["plan", "cist", "--topo", spec, "--plot", str(tmp_path / "c.png")]) == 0
    assert_clean(figures, 1)


# -- the BMv2 experiments' printed tables -----------------------------------------------------------------------
def test_emulation_summaries_fit():
    from dcnlab.reproduce.aggregation import bmv2 as agg
    from dcnlab.reproduce.multicast import bmv2 as mf

    jobs = tuple(_job(agg, a, kind, m, int(m * (1.08 if a == "srs" else 1.01)), t)
                 for a, kind, m, t in (("irs", "incast", 6000, 0.7), ("m2", "incast", 5600, 0.69),
                                       ("none", "incast", 11000, 1.41), ("srs", "shuffle", 9000, 2.13),
                                       ("none", "shuffle", 13000, None)))
    res = agg.EmuResult(agg.EmuConfig(), (agg.FabricResult("bcube:n=4,k=1", 24, 16, 3.0, jobs),), 10.0)
    text = "\n".join(res.summary_lines())
    assert max(len(line) for line in text.splitlines()) <= tables.MAX_WIDTH
    assert "off by more than 5%: shuffle srs" in text

    def window(name, **kw):
        base = dict(name=name, flow=1, count=2, streams=2, messages=4, frames=4, receptions=4, delivered=4, lost=0,
                    dups=0, outsider_delivered=0, filtered=0, model_checked=True)
        return mf.WindowResult(**(base | kw))

    fo = mf.Failover("drop", ("l2_0_0", "l1_0_0"), ("l2_0_0-eth0", "l1_0_0-eth2"), 1.0, True, 0.001, 0.01, 0.004,
                     0.006, 0.011, (1, 4), ((0, 3),), 8, 2, 5, 0, ())
    windows = (window("steady"), window("failure", model_checked=False, delivered=3, lost=1),
               window("failed-over", link_packets=7, link_model=7, links_compared=10))
    res2 = mf.EmuResult(mf.DEFAULT_SPEC, 32, 16, 3, "fixed", "both", (), (), (), (), {"ok": True}, windows, fo,
                        6, 0, 3, 9, 4.0, 12.0, ())
    lines = res2.summary_lines()
    assert max(len(line) for line in lines) <= tables.MAX_WIDTH, max(lines, key=len)
