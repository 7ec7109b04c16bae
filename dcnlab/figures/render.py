"""Render a fabric to PNG/SVG with matplotlib (headless)."""

from __future__ import annotations

from pathlib import Path

from dcnlab.topos.errors import UserError
from dcnlab.topos.layout import layout
from dcnlab.topos.model import Fabric, Role

MAX_DRAWN_NODES = 3000
_COLORS = {Role.HOST: "#7f7f7f", Role.SWITCH: "#1f77b4", Role.SERVER: "#d62728"}
_MARKERS = {Role.HOST: "o", Role.SWITCH: "s", Role.SERVER: "D"}


class TooLargeToDraw(UserError):
    pass


def render(fabric: Fabric, path: Path) -> None:
    """The fabric's nodes by role and its links; names on the nodes up to 200 nodes (the figure is as wide as
    the most crowded row needs, names stand vertically beyond 40 inches), the legend right of the drawing."""
    total = sum(fabric.counts().values())
    if total > MAX_DRAWN_NODES:
        raise TooLargeToDraw(f"{fabric.spec} has {total} nodes; drawing is limited to {MAX_DRAWN_NODES} "
                             f"(export json or dot instead)")
    from matplotlib.collections import LineCollection

    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    pos = layout(fabric)
    nodes = list(fabric.nodes())
    small = total > 200
    dragonfly = fabric.kind == "dragonfly"
    if dragonfly:
        width, vertical = (10.0 if small else max(10.0, min(40.0, 0.18 * total))), False
    else:
        width, vertical = plotstyle.drawing_size(pos, [] if small else [n.name for n in nodes])
    fig, ax = plt.subplots(figsize=(width + 2.0, width if dragonfly else 6.5), layout="constrained")
    segs = [(pos[l.a], pos[l.b]) for l in fabric.links()]
    ax.add_collection(LineCollection(segs, colors="#bbbbbb", linewidths=0.6, zorder=1))
    for role in Role:
        sel = [n for n in nodes if n.role is role]
        if not sel:
            continue
        ax.scatter([pos[n.name][0] for n in sel], [pos[n.name][1] for n in sel], s=12 if small else 60,
                   c=_COLORS[role], marker=_MARKERS[role], label=f"{role.value} ({len(sel)})", zorder=2)
    hidden = plotstyle.label_nodes(ax, pos, [n.name for n in nodes], vertical=vertical) if not small else 0
    ax.set_title(fabric.spec + ("" if not small else f" (names left out: {total} nodes)")
                 + (f" ({hidden} names left out where nodes are drawn on top of each other)" if hidden else ""))
    plotstyle.legend_outside(ax, fontsize=9)
    ax.set_axis_off()
    ax.autoscale()
    ax.margins(0.04, 0.12)
    plotcheck.save(fig, path, dpi=120)
