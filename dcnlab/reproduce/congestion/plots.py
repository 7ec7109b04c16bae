"""The figures of ``reproduce congestion``'s model backend, in the style of the paper's Fig. 3 and Fig. 5, and
the recovery after Fig. 5(a)'s departures (``fig5_recovery.png``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dcnlab.reproduce.congestion.model import GBPS, TENANT_TOLERANCE


def plot_all(scenarios: list[Any], results: dict[str, tuple[Any, float]], summary: dict[str, Any],
             out: Path) -> list[Path]:
    """The model's figures in the style of Zhang et al.'s Fig. 3 and Fig. 5, Theorem 1, and the large scale."""
    from matplotlib.lines import Line2D

    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    by = {s.name: s for s in scenarios}
    files = []

    def flow_lines(ax: Any, r: Any, labels: list[str]) -> None:
        styles = plotstyle.series_styles(len(labels))
        every = max(1, len(r.times) // 12)
        for i, (label, st) in enumerate(zip(labels, styles)):
            ax.plot(r.times, r.throughput_bps[:, i] / GBPS, drawstyle="steps-pre", label=label,
                    markevery=(i % every, every), **(st | {"markersize": 5}))

    # (a) Fig. 3: per-flow throughput, CC off vs on, and Jain's index over time
    fig, axes = plt.subplots(3, 1, figsize=(10, 9.5), sharex=True, layout="constrained")
    top = max(float(results[n][0].throughput_bps.max()) for n in ("fairness_cc_off", "fairness_cc_on")) / GBPS
    for ax, name, head in ((axes[0], "fairness_cc_off", "(a) CC off"), (axes[1], "fairness_cc_on", "(b) CC on")):
        r = results[name][0]
        flow_lines(ax, r, list(r.flows))
        ax.set_ylim(-0.02 * top, 1.08 * top)
        ax.set_ylabel("throughput (Gb/s)")
        ax.set_title(f"{head}: 4 senders -> C, a new flow every {by[name].meta['phase_s']:g} s")
        plotstyle.legend_outside(ax, title="flow")
        ax.grid(alpha=0.3)
    for (name, label), st in zip((("fairness_cc_off", "CC off"), ("fairness_cc_on", "CC on")),
                                 plotstyle.series_styles(2)):
        r = results[name][0]
        axes[2].plot(r.times, r.jain_over_time(), drawstyle="steps-pre", label=label, markevery=4,
                     **(st | {"markersize": 5}))
    axes[2].set_title("(c) Jain's index of the active flows over time")
    axes[2].set_ylabel("Jain's index (1 = fair)")
    axes[2].set_xlabel("time (s, IB time)")
    axes[2].set_ylim(0.5, 1.02)
    plotstyle.legend_outside(axes[2])
    axes[2].grid(alpha=0.3)
    fig.suptitle(plotstyle.title("002", "Fig. 3", "fairness with equal CC parameters (model)"))
    files.append(plotcheck.save(fig, out / "fig3_fairness.png", dpi=110))

    # (b) Theorem 1
    fig, axes = plt.subplots(1, len(summary["proportional"]), figsize=(12, 4), sharey=True, layout="constrained",
                             squeeze=False)
    for ax, rs in zip(axes[0], summary["proportional"]):
        r = results[f"proportional_1_{rs['ratio']}"][0]
        flow_lines(ax, r, [f"CCTI_Increase {f[3:]}" for f in r.flows])
        ax.set_title(f"CCTI_Increase 1:{rs['ratio']}: rates {rs['measured']:.2f}:1 (Theorem 1: {rs['ratio']}:1)",
                     fontsize=10)
        ax.set_xlabel("time (s, IB time)")
        ax.grid(alpha=0.3)
        plotstyle.legend_outside(ax)
    axes[0][0].set_ylabel("throughput (Gb/s)")
    axes[0][0].set_ylim(bottom=0)
    fig.suptitle(plotstyle.title("002", "Theorem 1", "rates inversely proportional to CCTI_Increase (model)"))
    files.append(plotcheck.save(fig, out / "theorem1_ratios.png", dpi=110))

    # (c) Fig. 5: per-flow and per-tenant throughput, BECNs at D->B
    for mode in ("cc", "meter"):
        name = f"tenant_fair_{mode}"
        r, s = results[name][0], by[name]
        fig, axes = plt.subplots(2, 1, figsize=(10, 7.5), sharex=True, gridspec_kw={"height_ratios": [2, 1]},
                                 layout="constrained")
        ax = axes[0]
        totals = r.tenant_throughput()
        labels = [f"{f} ({r.tenants[i]})" for i, f in enumerate(r.flows)] + [f"{t} total" for t in totals]
        styles = plotstyle.series_styles(len(labels))
        every = max(1, len(r.times) // 12)
        for i in range(len(r.flows)):
            ax.plot(r.times, r.throughput_bps[:, i] / GBPS, drawstyle="steps-pre", label=labels[i],
                    markevery=(i % every, every), **(styles[i] | {"markersize": 5}))
        for k, series in enumerate(totals.values(), start=len(r.flows)):
            ax.plot(r.times, series / GBPS, drawstyle="steps-pre", label=labels[k],
                    markevery=(k % every, every), **(styles[k] | {"linewidth": 2.2, "markersize": 5}))
        for w in s.windows[1:]:
            ax.axvline(w.t0, color="#999999", linewidth=0.8, linestyle="-")
        handles, names = ax.get_legend_handles_labels()
        handles.append(Line2D([], [], color="#999999", linewidth=0.8, linestyle="-"))
        names.append("phase boundary")
        plotstyle.legend_outside(ax, handles=handles, labels=names)
        ax.set_ylabel("throughput (Gb/s)")
        ax.set_title(f"(a) tenant 1: 1 flow; tenant 2: 1 -> 2 -> 3 -> 2 -> 1 flows "
                     f"({'CC with per-tenant CCTI_Increase' if mode == 'cc' else 'meters'})", fontsize=10)
        ax.grid(alpha=0.3)
        ax = axes[1]
        db = r.column("D->B")
        becns = r.becns[:, db]
        ax.set_title("(b) BECNs received by the D->B source")
        if plotstyle.all_zero([float(x) for x in becns]):
            plotstyle.note(ax, "no BECNs at all: with meters the switches mark nothing "
                               "(CC is off in this mode)" if mode == "meter" else "no BECNs at all")
        else:
            ax.plot(r.times, becns, drawstyle="steps-pre", color="k", label="BECNs at D->B")
        ax.set_ylabel(f"BECNs per {r.sample_s * 1000:.0f} ms (count)")
        ax.set_xlabel("time (s, IB time)")
        ax.grid(alpha=0.3)
        fig.suptitle(plotstyle.title("002", "Fig. 5", f"tenant-level fairness, {mode} (model)"))
        files.append(plotcheck.save(fig, out / f"fig5_tenants_{mode}.png", dpi=110))

    policies = [s for s in scenarios if s.name.startswith("tenant_fair_") and s.meta.get("policy") != "tenant-fair"]
    if policies:
        files.append(plot_policies([by[f"tenant_fair_{m}"] for m in ("cc", "meter")] + policies, results, out))

    rec = summary.get("recovery")
    if rec and rec["leaves"] and "tenant_recovery" in results:
        files.append(plot_recovery(results["tenant_recovery"][0], rec, out))

    # large scale: achieved vs target tenant share
    large = [n for n in by if n.startswith("large_")]
    if large:
        fig, axes = plt.subplots(1, 2, figsize=(14, 5.5), layout="constrained")
        lo, hi = 1.0, 0.0
        styles = plotstyle.series_styles(len(large))
        for i, (name, st) in enumerate(zip(large, styles)):
            s, r = by[name], results[name][0]
            w = s.windows[0]
            rates = r.mean_rates(w.t0, w.t1)
            total = rates.sum()
            wsum = sum(t.weight for t in s.tenants)
            tgt = [t.weight / wsum for t in s.tenants]
            got = [rates[[i for i, x in enumerate(r.tenants) if x == t.name]].sum() / total for t in s.tenants]
            lo, hi = min(lo, *tgt, *got), max(hi, *tgt, *got)
            axes[0].plot(tgt, got, linestyle="none", marker=st["marker"], color=st["color"],
                         # earlier cases drawn larger: cases whose shares coincide stay visible as rings
                         markersize=st["markersize"] + 0.8 * (len(large) - i), markerfacecolor="none", label=f"{s.meta['n_flows']} flows/{s.meta['n_tenants']} tenants, "
                                                        f"{s.meta['timer_mode']}, seed {s.meta['seed']}")
        axes[0].plot([lo, hi], [lo, hi], color="k", linestyle="--", linewidth=0.8, label="model share = target")
        plotstyle.log_scale(axes[0], "x")
        plotstyle.log_scale(axes[0], "y")
        axes[0].set_xlabel("target share w_t / sum(w) (fraction of the bottleneck)")
        axes[0].set_ylabel("model share (fraction of the bottleneck)")
        axes[0].set_title("(a) each tenant's share against its target")
        plotstyle.legend_outside(axes[0], fontsize=7)
        rows = summary["large"]
        labels = [f"{x['n_flows']}f/{x['n_tenants']}t\n{x['timer_mode']}" for x in rows]
        axes[1].bar(range(len(rows)), [x["mean_share_error"] * 100 for x in rows], color="tab:blue",
                    label="mean over tenants")
        axes[1].plot(range(len(rows)), [x["max_share_error"] * 100 for x in rows], linestyle="none", marker="v",
                     color="tab:red", label="worst tenant")
        axes[1].axhline(100 * TENANT_TOLERANCE, color="tab:green", linestyle="--", linewidth=1,
                        label=f"tolerance of the mean ({100 * TENANT_TOLERANCE:.0f}%)")
        axes[1].set_xticks(range(len(rows)), labels, fontsize=8)
        axes[1].set_xlabel("case (flows f / tenants t, CCTI timer mode)")
        axes[1].set_ylabel("tenant share error (% of the target)")
        axes[1].set_title("(b) share error by case")
        plotstyle.legend_outside(axes[1])
        axes[1].grid(alpha=0.3, axis="y")
        fig.suptitle(plotstyle.title("002", None, "tenant shares with hundreds of flows (our exploration, model)"))
        files.append(plotcheck.save(fig, out / "large_scale.png", dpi=110))
    return files


def plot_policies(scenarios: list[Any], results: dict[str, tuple[Any, float]], out: Path) -> Path:
    """(c) under each ``--policy``, beside the paper's tenant-fair: each tenant's total throughput over time,
    one series per (policy, tenant), a panel per mode (``fig5_policies.png``). The paper's claim is tenant 2's
    total equal to tenant 1's whatever its flows; a policy's departure from it shows as a gap between its two
    lines."""
    from dcnlab.figures import plotcheck, plotstyle

    from dcnlab.controller.registry import short_name

    plt = plotstyle.pyplot()
    names = list(dict.fromkeys(s.meta["policy"] for s in scenarios))
    mode_text = {"cc": "CC at each policy's CCTI_Increase", "meter": "meters at each policy's rates"}
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(2, 1, figsize=(10, 8), sharex=True, sharey=True, layout="constrained")
    for ax, mode in zip(axes, ("cc", "meter")):
        runs = [s for s in scenarios if s.meta["mode"] == mode]
        styles = plotstyle.series_styles(len(names) * 2)
        every = 1
        for s in runs:
            r = results[s.name][0]
            every = max(1, len(r.times) // 12)
            for j, (tenant, series) in enumerate(r.tenant_throughput().items()):
                k = 2 * names.index(s.meta["policy"]) + j
                ax.plot(r.times, series / GBPS, drawstyle="steps-pre", label=f"{short_name(s.meta['policy'])}: {tenant}",
                        markevery=(k % every, every), **(styles[k] | {"markersize": 5}))
        for w in runs[0].windows[1:]:
            ax.axvline(w.t0, color="#999999", linewidth=0.8)
        ax.set_title(f"({'a' if mode == 'cc' else 'b'}) {mode_text[mode]}; tenant 2: 1, 2, 3, 2, 1 flows", fontsize=10)
        ax.set_ylabel("tenant throughput (Gb/s)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Line2D([], [], color="#999999", linewidth=0.8))
        plotstyle.legend_outside(ax, handles=handles, labels=[*labels, "phase boundary"], title="policy: tenant's total")
    axes[1].set_xlabel("time (s, IB time)")
    fig.suptitle(plotstyle.title("002", "Fig. 5", "tenant totals under each congestion policy (model)"))
    return plotcheck.save(fig, out / "fig5_policies.png", dpi=110)


def plot_recovery(r: Any, rec: dict[str, Any], out: Path) -> Path:
    """(c') Fig. 5(a)'s departures at 1 ms: each remaining tenant-2 flow's rate over its new steady rate, the
    recovery threshold and the measured recovery time (:func:`dcnlab.controller.congestion.scenarios.summarize_recovery`)."""
    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    leaves = rec["leaves"]
    names = sorted({f for tr in leaves for f in tr["flows"]})
    styles = dict(zip(names, plotstyle.series_styles(len(names))))
    fig, axes = plt.subplots(1, len(leaves), figsize=(6 * len(leaves), 4.6), sharey=True, layout="constrained",
                             squeeze=False)
    span = max(0.04, 3 * max((tr["seconds"] or 0.0) for tr in leaves))
    for ax, tr, paper in zip(axes[0], leaves, rec["paper_s"]):
        t0 = tr["time_s"]
        m = (r.times > t0 - 0.005) & (r.times <= t0 + span + 1e-9)
        for f, steady in zip(tr["flows"], tr["steady_bps"]):
            ax.plot((r.times[m] - t0) * 1000, r.throughput_bps[m, r.column(f)] / steady, drawstyle="steps-pre",
                    label=f, markevery=5, **(styles[f] | {"markersize": 5}))
        ax.axhline(rec["fraction"], color="#555555", linestyle=":", linewidth=1)
        took = tr["seconds"]
        if took is not None:
            ax.axvline(took * 1000, color="#999999", linestyle="--", linewidth=1)
        ax.set_title(f"{tr['flow']} leaves at {t0:g} s: recovered in "
                     f"{'-' if took is None else f'{1000 * took:.0f} ms'} (paper: {paper:g} s)", fontsize=10)
        ax.set_xlabel("time after the departure (ms, IB time)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("rate / new steady rate (ratio)")
    handles = [plt.Line2D([], [], **(styles[f] | {"markersize": 5}), label=f) for f in names]
    handles += [plotstyle.style_key(f"{rec['fraction']:.0%} of the new steady rate", ":", color="#555555"),
                plotstyle.style_key("measured recovery time", "--", color="#999999")]
    plotstyle.legend_below(fig, handles, ncol=len(handles))
    joins = ", ".join(f"{1000 * x:.0f}" for x in rec["join_s"] if x is not None)
    fig.suptitle(plotstyle.title("002", "Fig. 5(a)", f"recovery after departures, 1 ms samples (model; after "
                                                     f"arrivals: {joins} ms)"))
    return plotcheck.save(fig, out / "fig5_recovery.png", dpi=110)
