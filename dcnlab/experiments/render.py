"""Render a fabric to PNG/SVG with matplotlib (headless)."""

from __future__ import annotations

from pathlib import Path

from dcnlab.experiments.errors import UserError
from dcnlab.topos.layout import layout
from dcnlab.topos.model import Fabric, Role

MAX_DRAWN_NODES = 3000
_COLORS = {Role.HOST: "#7f7f7f", Role.SWITCH: "#1f77b4", Role.SERVER: "#d62728"}
_MARKERS = {Role.HOST: "o", Role.SWITCH: "s", Role.SERVER: "D"}


class TooLargeToDraw(UserError):
    pass


def render(fabric: Fabric, path: Path) -> None:
    total = sum(fabric.counts().values())
    if total > MAX_DRAWN_NODES:
        raise TooLargeToDraw(f"{fabric.spec} has {total} nodes; drawing is limited to {MAX_DRAWN_NODES} "
                             f"(export json or dot instead)")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pos = layout(fabric)
    nodes = list(fabric.nodes())
    fig, ax = plt.subplots(figsize=(min(4 + total / 12, 40), 6 if fabric.kind != "dragonfly" else 10))
    segs = [(pos[l.a], pos[l.b]) for l in fabric.links()]
    from matplotlib.collections import LineCollection
    ax.add_collection(LineCollection(segs, colors="#bbbbbb", linewidths=0.6, zorder=1))
    small = total > 200
    for role in Role:
        sel = [n for n in nodes if n.role is role]
        if not sel:
            continue
        ax.scatter([pos[n.name][0] for n in sel], [pos[n.name][1] for n in sel], s=12 if small else 60,
                   c=_COLORS[role], marker=_MARKERS[role], label=f"{role.value} ({len(sel)})", zorder=2)
        if not small:
            for n in sel:
                ax.annotate(n.name, pos[n.name], fontsize=6, ha="center", va="bottom",
                            xytext=(0, 4), textcoords="offset points")
    ax.set_title(fabric.spec)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_axis_off()
    ax.autoscale()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
