"""The pictures of the cist mechanism: a plan's trees drawn on its Dragonfly, and the model sweep's delivered
fraction against failed elements."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcnlab.controller.registry import short_name as plugin_label
from dcnlab.topos.errors import UserError

if TYPE_CHECKING:
    from dcnlab.controller.cist import CistPlan


def plot_plan(plan: CistPlan, fabric: Any, path: Path) -> None:
    """The switch graph in grey, each tree's links in its own colour, switches coloured by part (one panel
    per tree); switch names up to 100 switches, the legend under the panels."""
    if len(plan.graph) > MAX_PLOTTED_SWITCHES:
        raise UserError(f"--plot: {len(plan.graph)} switches; drawing is limited to {MAX_PLOTTED_SWITCHES}")
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    from dcnlab.figures import plotcheck, plotstyle
    from dcnlab.topos.layout import layout

    plt = plotstyle.pyplot()
    pos = layout(fabric)
    g = plan.graph
    colours = plotstyle.colors(plan.k)
    cols = min(plan.k, 3)
    rows = -(-plan.k // cols)
    small = len(g) <= 100
    side = max(6.0, min(10.0, 0.11 * len(g))) if small else 6.0
    fig, axes = plt.subplots(rows, cols, figsize=(side * cols, side * rows + 1.0), squeeze=False,
                             layout="constrained")
    for ax in axes.flat[plan.k:]:
        ax.set_axis_off()
    for tree, ax in zip(plan.trees, axes.flat):
        ax.add_collection(LineCollection([(pos[g.names[u]], pos[g.names[v]]) for u, v in g.edges()],
                                         colors="#dddddd", linewidths=0.4, zorder=1))
        ax.add_collection(LineCollection([(pos[u], pos[v]) for u, v in tree.edges],
                                         colors=[colours[tree.tree_id]], linewidths=1.4, zorder=2))
        for t, part in enumerate(plan.parts):
            ax.scatter([pos[n][0] for n in part], [pos[n][1] for n in part], s=30 if small else 6,
                       c=[colours[t]], edgecolors="black" if t == tree.tree_id else "none", linewidths=0.6, zorder=3)
        ax.scatter(*pos[tree.root], s=140 if small else 40, marker="*", c="black", zorder=4)
        ax.set_title(f"tree {tree.tree_id}: diameter {tree.diameter}, internal switches = V_{tree.tree_id}")
        ax.set_axis_off()
        ax.set_aspect("equal")
        ax.autoscale()
        ax.margins(0.06)
    hidden = 0
    if small:
        for ax in axes.flat[:plan.k]:
            hidden = max(hidden, plotstyle.label_nodes(ax, pos, list(g.names), offset=4))
    handles = [Line2D([], [], marker="o", ls="-", color=colours[t], label=f"V_{t} and tree {t}'s links")
               for t in range(plan.k)]
    handles.append(Line2D([], [], marker="o", ls="none", color="white", markeredgecolor="black",
                          label="outlined: the panel's internal switches"))
    handles.append(Line2D([], [], marker="*", ls="", color="black", markersize=10, label="skeleton root"))
    handles.append(Line2D([], [], color="#dddddd", lw=1, label="other switch links"))
    plotstyle.legend_below(fig, handles, ncol=min(len(handles), 4), fontsize=9)
    fig.suptitle(f"{plan.k} CISTs of {plan.spec} ({'valid' if plan.validation.ok else 'INVALID'}), by the "
                 f"construction of {plotstyle.PAPERS['004']}"
                 + (f"\n({hidden} switch names left out where switches are drawn on top of each other)"
                    if hidden else ""))
    plotcheck.save(fig, path, dpi=120)


def plot_model(cases: list[dict[str, Any]], path: Path) -> None:
    """Delivered fraction vs random failed elements per survival instance (those with a failure sweep), CISTs
    against a single BFS tree; the
    panels share their y-range, a dotted line marks k - 1 failures (Theorem 4: nothing lost up to there)."""
    from matplotlib.lines import Line2D

    from dcnlab.figures import plotcheck, plotstyle
    from dcnlab.reproduce.cist.model import short_spec     # it parses its sweep's fabrics when imported: not at
    #                                                         every dcnlab start (test_plan_input_order)

    plt = plotstyle.pyplot()
    cases = [c for c in cases if c.get("sweep")] or cases[:1]    # the survival instances (model.SURVIVAL_SPECS)
    cols = min(4, len(cases))
    rows = -(-len(cases) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.6 * rows + 1.2), squeeze=False, sharey=True,
                             layout="constrained")
    for ax in axes.flat[len(cases):]:
        ax.set_axis_off()
    series: tuple[tuple[Any, ...], ...] = (("cists", "mean", "k CISTs, mean over draws", "tab:blue", "-", "o"),
              ("cists", "min", "k CISTs, worst draw", "tab:cyan", "--", "s"),
              ("single", "mean", "one BFS tree, mean over draws", "tab:red", "-", "^"),
              ("single", "min", "one BFS tree, worst draw", "tab:orange", "--", "v"))
    names = list(dict.fromkeys(n for c in cases for n in c.get("algorithms", {})))    # user constructions
    styles = plotstyle.series_styles(20)[4:]      # tab20 from its third pair of hues: clear of the four lines
    for i, name in enumerate(names):
        mean, worst = styles[(2 * i) % len(styles)], styles[(2 * i + 1) % len(styles)]
        series += ((f"plug-in:{name}", "mean", f"plug-in {plugin_label(name)}: its trees, mean over draws",
                    mean["color"], "-", mean["marker"]),
                   (f"plug-in:{name}", "min", f"plug-in {plugin_label(name)}: its trees, worst draw",
                    worst["color"], "--", worst["marker"]))
    for ax, c in zip(axes.flat, cases):
        for key, stat, label, colour, ls, marker in series:
            name = key.removeprefix("plug-in:")
            run = c["algorithms"].get(name) if key != name else c
            if run is None:
                continue
            xs = [p["failures"] for p in run["sweep"]]
            col = "cists" if key != name else key
            ax.plot(xs, [p[f"{col}_{stat}"] for p in run["sweep"]], color=colour, linestyle=ls, marker=marker,
                    markersize=5, markerfacecolor="none", label=label)
        ax.axvline(c["k"] - 1, color="grey", lw=1, ls=":")
        ax.set_title(f"{short_spec(c['spec'])}: {c['switches']} switches, k = {c['k']}", fontsize=9)
        ax.set_xlabel("random failed switches and links (count)", fontsize=8)
        ax.set_ylabel("delivered switch pairs (fraction)", fontsize=8)
        ax.set_ylim(0, 1.03)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    handles = [Line2D([], [], color=colour, linestyle=ls,  # type: ignore[arg-type]
                      marker=marker, markerfacecolor="none", label=label) for _, _, label, colour, ls, marker in series]
    handles.append(Line2D([], [], color="grey", lw=1, ls=":", label="k - 1 failures (Theorem 4: nothing lost up to "
                                                                        "here)"))
    plotstyle.legend_below(fig, handles, ncol=3, fontsize=9)
    fig.suptitle(plotstyle.title("004", None, "broadcast over the k CISTs against one BFS tree under random "
                                 "failures (model)" + (", beside plug-in constructions" if names else "")))
    plotcheck.save(fig, path, dpi=120)


MAX_PLOTTED_SWITCHES = 3000
