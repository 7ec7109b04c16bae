"""Pictures for the aggregation mechanism: a tree drawn on its fabric, and the reproduction charts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dcnlab.figures.render import MAX_DRAWN_NODES
from dcnlab.topos.errors import UserError
from dcnlab.topos.layout import layout
from dcnlab.topos.model import Fabric, Role


def draw_tree(fabric: Fabric, hops: Iterable[tuple[str, ...]], receivers: Sequence[str], senders: Sequence[str],
              aggregators: Sequence[str], title: str, path: Path) -> None:
    """Fabric in grey, the tree's physical hops as arrows, members and aggregators marked; the names of the
    nodes the tree uses (up to 200 nodes in the fabric), the legend right of the drawing."""
    total = sum(fabric.counts().values())
    if total > MAX_DRAWN_NODES:
        raise UserError(f"--plot: {fabric.spec} has {total} nodes; drawing is limited to {MAX_DRAWN_NODES}")
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    pos = layout(fabric)
    hops = list(hops)
    used: set[str] = {v for hop in hops for v in hop}
    named = sorted(used) if total <= 200 else []
    width, vertical = plotstyle.drawing_size(pos, named)
    fig, ax = plt.subplots(figsize=(width + 2.2, 6.5), layout="constrained")
    ax.add_collection(LineCollection([(pos[l.a], pos[l.b]) for l in fabric.links()], colors="#dddddd",
                                     linewidths=0.6, zorder=1))
    for hop in hops:
        for a, b in zip(hop, hop[1:]):
            ax.annotate("", xy=pos[b], xytext=pos[a], zorder=3,
                        arrowprops={"arrowstyle": "-|>", "color": "#1f77b4", "lw": 1.6, "shrinkA": 5, "shrinkB": 5})
    nodes = {n.name: n for n in fabric.nodes()}
    groups = [("other node", [v for v in nodes if v not in used], "#bbbbbb", "o", 10),
              ("switch on the tree", [v for v in used if nodes[v].role is Role.SWITCH and v not in aggregators],
               "#7f7f7f", "s", 40),
              ("relay", [v for v in used if nodes[v].role is not Role.SWITCH and v not in aggregators
                         and v not in senders and v not in receivers], "#ff7f0e", "D", 45),
              ("sender", list(senders), "#2ca02c", "o", 70),
              ("aggregator", list(aggregators), "#d62728", "D", 70),
              ("receiver", list(receivers), "#9467bd", "*", 220)]
    for label, names, color, marker, size in groups:
        if names:
            ax.scatter([pos[v][0] for v in names], [pos[v][1] for v in names], s=size, c=color, marker=marker,
                       label=f"{label} ({len(names)})", zorder=4)
    hidden = plotstyle.label_nodes(ax, pos, named, vertical=vertical) if named else 0
    if hidden:
        title += f"\n({hidden} names left out where nodes are drawn on top of each other)"
    handles, labels = ax.get_legend_handles_labels()
    if hops:
        handles.append(Line2D([], [], color="#1f77b4", lw=1.6, marker=">", markersize=6))
        labels.append("hop of the tree (towards the receiver)")
    ax.set_title(title)
    plotstyle.legend_outside(ax, handles=handles, labels=labels, fontsize=9)
    ax.set_axis_off()
    ax.autoscale()
    ax.margins(0.04, 0.12)
    plotcheck.save(fig, path, dpi=120)


def line_chart(path: Path, title: str, xlabel: str, ylabel: str, x: Sequence[float],
               series: Mapping[str, Sequence[float]], paper: Mapping[str, float] | None = None,
               names: Mapping[str, str] | None = None, logy: bool = False) -> None:
    """One line per method (its own colour, marker and dash, so that equal series stay visible; a series
    equal to an earlier one at every point says so in the legend); dotted horizontal lines in a
    method's colour mark the paper's average over the sweep where it gives one. The legend sits right
    of the axes; a chart whose every value is zero shows a note instead."""
    import numpy as np

    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    names = names or {}
    fig, ax = plt.subplots(figsize=(9.5, 4.6), layout="constrained")
    if plotstyle.all_zero([v for ys in series.values() for v in ys]):
        plotstyle.note(ax, f"every method is 0 at every point: nothing to plot\n({ylabel})")
    else:
        styles = dict(zip(series, plotstyle.series_styles(len(series))))
        drawn: list[tuple[str, np.ndarray]] = []
        for key, ys in series.items():
            arr = np.asarray(ys, dtype=float)
            label = names.get(key, key)
            twin = next((names.get(k, k) for k, other in drawn if other.shape == arr.shape
                         and np.allclose(other, arr, equal_nan=True)), None)
            near = twin or next((names.get(k, k).split(":")[0].split(" (")[0] for k, other in drawn if other.shape == arr.shape
                                 and np.allclose(other, arr, rtol=0.02, atol=0.05, equal_nan=True)), None)
            style = dict(styles[key])
            if twin is not None:
                label += f" (= {twin} at every point)"
            elif near is not None:
                label += f" (within 2% of {near} at every point)"
            if near is not None:     # drawn over an (almost) equal series: small and filled, inside its marker
                style.update(markerfacecolor=style["color"], markersize=max(3.0, style["markersize"] - 4.0))
            ax.plot(x, arr, label=label, **style)
            drawn.append((key, arr))
        keys = []
        for key, value in (paper or {}).items():
            if key in styles:
                ax.axhline(value, ls=":", lw=1.2, color=styles[key]["color"])
                keys.append(key)
        handles, labels = ax.get_legend_handles_labels()
        if keys:
            handles.append(plotstyle.style_key("dotted: the paper's average over the sweep", ":"))
            labels.append(handles[-1].get_label())
        plotstyle.legend_outside(ax, handles=handles, labels=labels)
        if logy:
            plotstyle.log_scale(ax)
    import textwrap
    title = "\n".join(w for line in title.split("\n")      # the axes are narrower than the figure: wrap each line
                      for w in (textwrap.wrap(line, max(60, len(line) // 2 + 12)) if len(line) > 85 else [line]))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    plotcheck.save(fig, path, dpi=120)


K_LABEL = "k of BCube(6,k) (6^(k+1) servers)"


TRAFFIC = "traffic over all links (MB; 1 MB per sender flow)"


def charts(results: dict[str, Any], out: Path) -> list[Path]:
    """The papers' figures from the parts that ran (titles name the paper and its figure)."""
    from dcnlab.figures.plotstyle import title
    from dcnlab.reproduce.aggregation.model import (
        INCAST_NAMES,
        SHUFFLE_METHODS,
        SHUFFLE_NAMES,
        _mean,
        plugin_names,
        shuffle_plugins,
    )
    from dcnlab.reproduce.aggregation.plugins import label as plugin_label

    files = []
    for part in ("003-k", "003-size"):
        if part in results:
            pts = results[part]["points"]
            x = [float(p) for p in pts]
            mine = shuffle_plugins(pts[next(iter(pts))]["saving"])      # a user's builder (plugins.py)
            series = {m: [pts[p]["saving"][m] for p in pts] for m in (*SHUFFLE_METHODS, *mine)}
            ours = results[part]["overall"]
            paper = results[part]["paper"]
            names = {m: f"{SHUFFLE_NAMES[m]}: ours {ours[m]:.1f}%" + (f", paper {paper[m]:.2f}%" if m in paper else "")
                     for m in SHUFFLE_METHODS}
            names.update({a: f"{plugin_label(a)}:\nours {ours[f'{a} saving vs none']:.1f}% "
                             f"({ours[f'{a} vs srs']:.1f}% below SRS)" for a in mine})
            f = out / f"{part}-saving.png"
            if part == "003-k":
                head = title("003", "Fig. 4(a) and Table 1", "60×60 shuffles on BCube(6,k),\n"
                             "traffic saving against no aggregation (averages over k in the legend)")
                label = K_LABEL
            else:
                head = title("003", "Fig. 5", "m×n shuffles (m = n) on BCube(8,5),\n"
                             "traffic saving against no aggregation (averages over m in the legend)")
                label = "m = n (senders = receivers, count)"
            line_chart(f, head, label, "traffic saving (%)", x, series, paper, names)
            files.append(f)
    if "003-k" in results:
        pts = results["003-k"]["points"]
        x = [float(p) for p in pts]
        for key, fig, what, unit in (("links", "Fig. 4(b)", "links the shuffle uses", "active links (count)"),
                                     ("aggregators", "Fig. 4(c)", "servers that aggregate",
                                      "aggregating servers (count)"),
                                     ("receiver_input", "Fig. 4(d)", "data arriving at each receiver",
                                      "receiver input (MB per receiver)")):
            f = out / f"003-k-{key}.png"
            series = {m: [pts[p][key][m] for p in pts] for m in pts[next(iter(pts))][key]}
            line_chart(f, title("003", fig, f"60×60 shuffles on BCube(6,k): {what}"), K_LABEL, unit, x, series,
                       names={**SHUFFLE_NAMES, **{a: plugin_label(a) for a in shuffle_plugins(series)}})
            files.append(f)
    if "003-delta" in results:
        ov, paper = results["003-delta"]["overall"], results["003-delta"]["paper"]
        for p, v in results["003-delta"]["points"].items():
            f = out / f"003-delta-{p}.png"
            sub = {"250": "Fig. 6(a)", "1000": "Fig. 6(b)"}.get(str(p))
            names = dict(SHUFFLE_NAMES)
            for m in ("srs", "unicast"):
                if f"{m}@{p}" in ov:
                    names[m] += f" (mean saving over δ: ours {ov[f'{m}@{p}']:.1f}%" + (
                        f", paper {paper[f'{m}@{p}']:.2f}%)" if f"{m}@{p}" in paper else ")")
            line_chart(f, title("003", sub, f"m = n = {p} on BCube(8,5): traffic against the aggregation ratio"),
                       "aggregation ratio δ (0: merged flows cost one flow, 1: no gain) (fraction)", TRAFFIC,
                       v["deltas"], v["traffic"], names=names)
            files.append(f)
    if "gap" in results:
        pts = results["gap"]["points"]
        sizes = sorted({int(name.rsplit("=", 1)[1]) for name in pts})
        algos = list(pts[next(iter(pts))]["ratio_to_optimum"])
        series = {a: [_mean([v["ratio_to_optimum"][a] for name, v in pts.items() if name.endswith(f"m={m}")])
                      for m in sizes] for a in algos}
        f = out / "gap-ratio.png"
        names = {**INCAST_NAMES, **{a: plugin_label(a) for a in plugin_names(algos)}}
        line_chart(f, "Fang et al. (M2) and Guo et al. (IRS/SRS) trees against the exact optimum "
                      "(no figure in the papers):\nincasts on BCubes of at most 64 servers, mean over the fabrics",
                   "senders (count)", "tree cost / optimal cost (ratio)", [float(m) for m in sizes], series,
                   names=names)
        files.append(f)
    figures = {("000-k", "traffic"): "Fig. 5(a)", ("000-k", "aggregators"): "Fig. 5(b)",
               ("000-k", "new_servers"): "Fig. 5(c)", ("000-k", "links"): "Fig. 5(d)",
               ("000-size", "traffic"): "Fig. 6(a)", ("000-size", "links"): "Fig. 6(b)",
               ("000-k", "receiver_input"): "Fig. 5(e)", ("000-k", "busiest"): "Table 1 (values missing)",
               ("000-size", "busiest"): "Table 2 (values missing)"}
    panel = {"traffic": ("traffic", TRAFFIC), "aggregators": ("aggregation points", "aggregating servers (count)"),
             "links": ("links the tree uses", "active links (count)"),
             "new_servers": ("servers added to the tree", "servers added besides the members (count)"),
             "receiver_input": ("data arriving at the receiver", "receiver input (units of one sender's data)"),
             "busiest": ("the most loaded link\n(it bounds the shuffle+reduce wait in a link-bound model)",
                         "busiest link (units of one sender's data, log)")}
    for part, label, setting in (("000-k", K_LABEL, "120-sender incasts on BCube(6,k)"),
                                 ("000-size", "senders (count)", "incasts on BCube(4,8)")):
        if part in results:
            pts = results[part]["points"]
            x = [float(p) for p in pts]
            ov = results[part]["overall"]
            paper = results[part]["paper"].get("m2 vs irs")
            names = dict(INCAST_NAMES)
            for a in plugin_names(pts[next(iter(pts))]["traffic"]):     # a user's builder (plugins.py)
                names[a] = f"{plugin_label(a)} ({ov[f'{a} vs irs']:.1f}% below IRS-based)"
            names["m2"] += (f" ({ov['m2 vs irs']:.1f}% below IRS-based"
                            + (f"; paper about {paper:g}%)" if paper is not None else ")"))
            for key in ("traffic", "aggregators", "links", "new_servers", "receiver_input", "busiest"):
                if key not in pts[next(iter(pts))] or (part, key) == ("000-size", "receiver_input"):
                    continue
                f = out / f"{part}-{key}.png"
                series = {m: [pts[p][key][m] for p in pts] for m in pts[next(iter(pts))][key]}
                line_chart(f, title("000", figures.get((part, key)), f"{setting}: {panel[key][0]}"), label,
                           panel[key][1], x, series, names=names, logy=key in ("busiest", "receiver_input"))
                files.append(f)
    return files
