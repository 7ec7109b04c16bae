"""What is written of the experiment: the checks as a table, the JSON with every series, and the plots in the
style of the paper's Fig. 3 and Fig. 5 (BMv2 solid, the model dashed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from dcnlab.controller.congestion import scenarios as sc
from dcnlab.controller.congestion.fluid import ModelResult
from dcnlab.reproduce.congestion.bmv2.checks import ExperimentResult, smoothed_jain
from dcnlab.reproduce.congestion.bmv2.config import IB_PACKET_BYTES
from dcnlab.reproduce.congestion.bmv2.plans import pps
from dcnlab.reproduce.congestion.bmv2.runs import EmuRun

BMV2_SECTIONS = {"(a)": "(a) Fig. 3, 4 senders -> C: Jain's index of the mean rates while all four flows are on",
                 "(b)": "(b) Theorem 1: rate of the weight-1 flow over the 1:n flow's (CCTI_Increase or meters)",
                 "(c)": "(c) Fig. 5: tenant 1 (T1, 1 flow) against tenant 2 (T2, 1-2-3-2-1 flows), by phase"}


FIGURE_MARK = "*"
FIGURE_NOTE = (f"{FIGURE_MARK} BMv2's own figure, judged by the report's rule and reported; not a check of the "
               "mechanism, so it does not set the exit status ('disturbed': a sender starved of CPU measured the "
               "machine). met / MISSED: a check of the mechanism against its target (it sets the exit status); the "
               "paper's verdict of each BMv2 figure is the report's (summary.json).")


def _bmv2_row(check: dict[str, Any], phase: dict[str, int]) -> tuple[str, ...]:
    """(label, unit, BMv2, model, paper / target, tolerance, verdict) of one check; ``phase`` counts the
    tenant phases per mode, so that a phase that comes back (2 flows, then 2 again) keeps its own label."""
    scen, metric, target = check["scenario"], check["metric"], check["target"]
    tol = "-"
    if " +-" in target:
        target, tol = target.split(" +-", 1)
        tol = "±" + tol
    unit = "index" if "Jain" in metric else "ratio"
    label = scen[4:] if scen[:3] in BMV2_SECTIONS else scen
    if scen.startswith("(c) ") and metric == "tenant1 : tenant2":
        mode, flows = scen[4:].split(", ", 1)
        phase[mode] = phase.get(mode, 0) + 1
        n = flows.split()[0]
        label = f"{mode}, phase {phase[mode]}, {n} T2 flow{'s' if n != '1' else ''}"
        unit = "T1:T2"
    elif metric == "min Jain inside tenant 2":
        label = f"{label}, min Jain inside T2"
    elif "BECN" in scen:
        label, unit = "cc, D->B BECNs (1/2/3 T2)", "to 1 flow"
    # a check is a target of the mechanism's (its own tolerance, the exit status): met or MISSED, never a verdict
    # word of the report's, which only the report's one rule gives (BMv2's figures below, and summary.json)
    verdict = {True: "met", False: "MISSED", None: "-"}[check["ok"]]
    if check["ok"] is None and check.get("verdict"):
        verdict = f"{check['verdict']}{FIGURE_MARK}"
        label = f"{label}, {metric.split(':')[0]}"
    return (label, unit, check["emulation"], check["model"], target, tol, verdict)


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """:func:`summary_table` as lines."""
    return summary_table(summary).splitlines()


def summary_table(summary: dict[str, Any]) -> str:
    """The checks as a table of at most 100 columns, one heading per experiment: BMv2's figure, the model's,
    the paper's (or the target), the tolerance and the verdict ('-': reported, not checked)."""
    from dcnlab.results.tables import Column, Section, table

    rows: list[Any] = []
    last = None
    phase: dict[str, int] = {}
    for c in summary["checks"]:
        head = BMV2_SECTIONS.get(c["scenario"][:3])
        if head is not None and head != last:
            rows.append(Section(head))
            last = head
        rows.append(_bmv2_row(c, phase))
    notes = [FIGURE_NOTE] if any(c["ok"] is None and c.get("verdict") for c in summary["checks"]) else []
    return table([Column("check (Zhang et al.)", wrap=True, min_width=24), Column("unit"),
                  Column("BMv2", wrap=True, min_width=10), Column("model", wrap=True, min_width=8),
                  Column("paper / target", wrap=True, min_width=12), Column("tolerance", wrap=True, min_width=9),
                  Column("verdict")], rows, notes=notes)


def _series(r: ModelResult, packet_bytes: int) -> dict[str, Any]:
    return {"flows": list(r.flows), "tenants": list(r.tenants), "times": r.times.round(3).tolist(),
            "pps": pps(r, packet_bytes).round(1).tolist(), "becns": r.becns.tolist(),
            "ccti": [[None if math.isnan(x) else round(float(x), 2) for x in row] for row in r.ccti]}


def write_outputs(res: ExperimentResult, out: Path) -> list[Path]:
    """PNGs in the style of the paper's Fig. 3 and Fig. 5 (emulation solid, model dashed) and the JSON."""
    out.mkdir(parents=True, exist_ok=True)
    summary = res.summary()
    files = plot(res, out)
    data = dict(summary)
    data["series"] = {r.plan.name: {"emulation": _series(r.emu, res.cfg.frame_bytes),
                                    "model": _series(r.model, IB_PACKET_BYTES)} for r in res.runs}
    path = out / "emulation.json"
    path.write_text(json.dumps(data))
    return files + [path]


def plot(res: ExperimentResult, out: Path) -> list[Path]:
    """Zhang et al.'s Fig. 3 and Fig. 5 and Theorem 1 from BMv2 (solid, open markers) beside the fluid model
    (dashed, the same colour; one legend key explains it)."""
    from matplotlib.lines import Line2D

    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    cfg, files = res.cfg, []
    model_key = Line2D([], [], color="#555555", linestyle="--")
    phase_key = Line2D([], [], color="#999999", linewidth=0.8)

    def flows(ax: Any, run: EmuRun, tenants: bool = False) -> None:
        e, m = pps(run.emu, cfg.frame_bytes), pps(run.model, IB_PACKET_BYTES)
        names = list(run.emu.flows)
        groups = sorted(set(run.emu.tenants)) if tenants else []
        colors = plotstyle.colors(len(names) + len(groups))
        every = max(1, len(run.emu.times) // 12)
        for i, name in enumerate(names):
            c = colors[i]
            ax.plot(run.emu.times, e[:, i], color=c, drawstyle="steps-pre", linewidth=1.2, label=name,
                    marker=plotstyle.MARKERS[i % len(plotstyle.MARKERS)], markevery=(i % every, every),
                    markersize=5, markerfacecolor="none")
            ax.plot(run.model.times, m[:, i], color=c, linestyle="--", linewidth=1)
        for k, t in enumerate(groups):
            cols = [i for i, x in enumerate(run.emu.tenants) if x == t]
            c = colors[len(names) + k]
            # totals that coincide (tenant-fair meters) stay visible: each later one narrower and marked
            ax.plot(run.emu.times, e[:, cols].sum(axis=1), color=c, linewidth=max(1.0, 3.0 - 1.4 * k),
                    drawstyle="steps-pre", label=f"{t} total", marker="o" if k else "None", markersize=4,
                    markevery=(k % every, every))
            ax.plot(run.model.times, m[:, cols].sum(axis=1), color=c, linewidth=1.6, linestyle="--")
        for w in run.plan.windows[1:]:
            ax.axvline(w.t0, color="#999999", linewidth=0.8)
        handles, labels = ax.get_legend_handles_labels()
        handles.append(model_key)
        labels.append("model (dashed, same colour)")
        if len(run.plan.windows) > 1:
            handles.append(phase_key)
            labels.append("phase boundary")
        ax.set_ylabel("throughput (packets/s)")
        ax.grid(alpha=0.3)
        plotstyle.legend_outside(ax, handles=handles, labels=labels)

    fair = [r for r in res.runs if r.plan.meta["kind"] == "fairness"]
    if fair:
        fig, axes = plt.subplots(len(fair) + 1, 1, figsize=(10, 2.9 * (len(fair) + 1) + 0.6), sharex=True,
                                 layout="constrained")
        top = max(float(pps(r.emu, cfg.frame_bytes).max()) for r in fair)
        for ax, run in zip(axes, fair):
            flows(ax, run)
            ax.set_ylim(-0.02 * top, 1.1 * top)
            ax.set_title(f"({run.plan.meta['mode']}) 4 senders -> C, a new flow every "
                         f"{run.plan.meta['phase_s']:g} s", fontsize=10)
        ax = axes[-1]
        styles = plotstyle.series_styles(len(fair))
        every = max(1, len(fair[0].emu.times) // 12)
        for i, run in enumerate(fair):
            c = styles[i]["color"]
            ax.plot(run.emu.times, run.emu.jain_over_time(), color=c, drawstyle="steps-pre", linewidth=0.6,
                    alpha=0.5)
            ax.plot(run.emu.times, smoothed_jain(run.emu), color=c, drawstyle="steps-pre", linewidth=1.4,
                    marker=styles[i]["marker"], markersize=5, markerfacecolor="none", markevery=(i % every, every),
                    label=f"{run.plan.meta['mode']} (BMv2; thin: per sample)")
            ax.plot(run.model.times, run.model.jain_over_time(), color=c, linestyle="--")
        handles, labels = ax.get_legend_handles_labels()
        plotstyle.legend_outside(ax, handles=handles + [model_key], labels=labels + ["model (dashed, same colour)"])
        ax.set_title("Jain's index of the active flows over time", fontsize=10)
        ax.set_ylabel("Jain's index (1 = fair)")
        ax.set_xlabel("time (s, emulated)")
        ax.set_ylim(0.4, 1.02)
        ax.grid(alpha=0.3)
        fig.suptitle(plotstyle.title("002", "Fig. 3", "fairness on BMv2 (solid) and in the model (dashed)"))
        files.append(plotcheck.save(fig, out / "emulation_fig3_fairness.png", dpi=110))

    ratio = [r for r in res.runs if r.plan.meta["kind"] == "ratio"]
    if ratio:
        fig, axes = plt.subplots(1, len(ratio), figsize=(5.2 * len(ratio) + 2.5, 4.2), squeeze=False, sharey=True,
                                 layout="constrained")
        for ax, run in zip(axes[0], ratio):
            flows(ax, run)
        last = set(axes[0][-1].get_legend_handles_labels()[1])
        for ax in axes[0][:-1]:     # a panel keeps its legend when it names a flow the last panel does not
            if set(ax.get_legend_handles_labels()[1]) <= last:
                ax.get_legend().remove()
        for ax, run in zip(axes[0], ratio):
            s = sc.summarize_ratio(run.plan, run.emu)
            ax.set_title(f"1:{run.plan.meta['ratio']} {run.plan.meta['mode']}: {s.measured:.2f}:1", fontsize=10)
            ax.set_xlabel("time (s, emulated)")
        fig.suptitle(plotstyle.title("002", "Theorem 1", "rates inversely proportional to CCTI_Increase (or meter "
                                                         "weights), BMv2 and model"))
        files.append(plotcheck.save(fig, out / "emulation_theorem1_ratios.png", dpi=110))

    for run in (r for r in res.runs if r.plan.meta["kind"] == "tenants"):
        mode = run.plan.meta["mode"]
        fig, axes = plt.subplots(2, 1, figsize=(10, 7.5), sharex=True, gridspec_kw={"height_ratios": [2, 1]},
                                 layout="constrained")
        flows(axes[0], run, tenants=True)
        axes[0].set_title(f"(a) tenant 1: 1 flow; tenant 2: 1 -> 2 -> 3 -> 2 -> 1 flows ({mode})", fontsize=10)
        ax = axes[1]
        db = run.emu.column("D->B")
        ax.set_title("(b) BECNs received by the D->B source", fontsize=10)
        emu_b, model_b = run.emu.becns[:, db], run.model.becns[:, db]
        if plotstyle.all_zero([float(x) for x in emu_b] + [float(x) for x in model_b]):
            plotstyle.note(ax, "no BECNs at all, on BMv2 or in the model" + (" (meters: CC is off)" if mode == "meter"
                                                                             else ""))
        else:
            ax.plot(run.emu.times, emu_b, color="k", drawstyle="steps-pre", label="BMv2")
            ax.plot(run.model.times, model_b, color="tab:purple", linestyle="--", label="model")
            plotstyle.legend_outside(ax)
        ax.set_ylabel(f"BECNs per {cfg.sample_s * 1000:.0f} ms (count)")
        ax.set_xlabel("time (s, emulated)")
        ax.grid(alpha=0.3)
        fig.suptitle(plotstyle.title("002", "Fig. 5", f"tenant-level fairness on BMv2 and in the model ({mode})"))
        files.append(plotcheck.save(fig, out / f"emulation_fig5_tenants_{mode}.png", dpi=110))
    return files
