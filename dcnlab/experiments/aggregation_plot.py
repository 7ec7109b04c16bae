"""Pictures for the aggregation mechanism: a tree drawn on its fabric, and the reproduction charts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from dcnlab.experiments.errors import UserError
from dcnlab.experiments.render import MAX_DRAWN_NODES
from dcnlab.topos.layout import layout
from dcnlab.topos.model import Fabric, Role


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def draw_tree(fabric: Fabric, hops: Iterable[tuple[str, ...]], receivers: Sequence[str], senders: Sequence[str],
              aggregators: Sequence[str], title: str, path: Path) -> None:
    """Fabric in grey, the tree's physical hops as arrows, members and aggregators marked."""
    total = sum(fabric.counts().values())
    if total > MAX_DRAWN_NODES:
        raise UserError(f"--plot: {fabric.spec} has {total} nodes; drawing is limited to {MAX_DRAWN_NODES}")
    plt = _pyplot()
    from matplotlib.collections import LineCollection

    pos = layout(fabric)
    fig, ax = plt.subplots(figsize=(min(5 + total / 10, 30), 6))
    ax.add_collection(LineCollection([(pos[l.a], pos[l.b]) for l in fabric.links()], colors="#dddddd",
                                     linewidths=0.6, zorder=1))
    used: set[str] = set()
    for hop in hops:
        used.update(hop)
        for a, b in zip(hop, hop[1:]):
            ax.annotate("", xy=pos[b], xytext=pos[a], zorder=3,
                        arrowprops={"arrowstyle": "-|>", "color": "#1f77b4", "lw": 1.6, "shrinkA": 5, "shrinkB": 5})
    nodes = {n.name: n for n in fabric.nodes()}
    groups = [("other", [v for v in nodes if v not in used], "#bbbbbb", "o", 10),
              ("switch", [v for v in used if nodes[v].role is Role.SWITCH and v not in aggregators], "#7f7f7f", "s", 40),
              ("relay", [v for v in used if nodes[v].role is not Role.SWITCH and v not in aggregators
                         and v not in senders and v not in receivers], "#ff7f0e", "D", 45),
              ("sender", list(senders), "#2ca02c", "o", 70),
              ("aggregator", list(aggregators), "#d62728", "D", 70),
              ("receiver", list(receivers), "#9467bd", "*", 220)]
    for label, names, color, marker, size in groups:
        if names:
            ax.scatter([pos[v][0] for v in names], [pos[v][1] for v in names], s=size, c=color, marker=marker,
                       label=f"{label} ({len(names)})", zorder=4)
    if total <= 200:
        for v in used:
            ax.annotate(v, pos[v], fontsize=7, ha="center", va="bottom", xytext=(0, 5), textcoords="offset points")
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_axis_off()
    ax.autoscale()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def line_chart(path: Path, title: str, xlabel: str, ylabel: str, x: Sequence[float],
               series: Mapping[str, Sequence[float]], paper: Mapping[str, float] | None = None) -> None:
    """One line per method; dashed horizontal lines mark the paper's averages where it gives them."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    colors = {}
    for name, ys in series.items():
        (line,) = ax.plot(x, ys, marker="o", ms=3, label=name)
        colors[name] = line.get_color()
    for name, value in (paper or {}).items():
        ax.axhline(value, ls="--", lw=0.8, color=colors.get(name, "black"), label=f"{name} (paper avg)")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
