"""The figures of ``reproduce multicast``: EFI and TFI per pattern and algorithm, 1 ppn and 4 ppn
(``multicast_1ppn.png``, ``multicast_4ppn.png``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dcnlab.reproduce.multicast.model import (
    ALGOS,
    COLORS,
    PATTERNS_1PPN,
    PATTERNS_4PPN,
    _pattern,
    algo_name,
    algo_rank,
    mean_rows,
)


def plot(rows: list[dict[str, Any]], out: Path) -> list[Path]:
    """Chen et al. Fig. 9/10-style panels (max/avg EFI, max/avg TFI, groups kept, time) for 1 and 4 ppn; a random
    pattern's bars are the means over its draws."""
    import numpy as np
    from matplotlib.patches import Patch

    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    written = []
    rows = mean_rows(rows)
    algos = [a for a in ALGOS if a != "global"] + sorted({r["algo"] for r in rows} - set(ALGOS), key=algo_rank)
    colours = dict(zip(algos, plotstyle.colors(len(algos))))
    for ppn, fig_no in ((1, 9), (4, 10)):
        sub = [r for r in rows if r["ppn"] == ppn and r["algo"] in algos]
        pats = [p for p in PATTERNS_1PPN + PATTERNS_4PPN if any(r["pattern"] == p for r in sub)]
        if not pats:
            continue
        present = [a for a in algos if any(r["algo"] == a for r in sub)]
        fig, axes = plt.subplots(2, 3, figsize=(16, 9.5), layout="constrained", sharex=True)
        panels = (("efi_max", "(a) max EFI", "max EFI (groups per link)"),
                  ("efi_avg", "(b) average EFI", "average EFI (groups per link)"),
                  ("tfi_max", "(c) max TFI", "max TFI (groups per tree)"),
                  ("tfi_avg", "(d) average TFI", "average TFI (groups per tree)"),
                  ("trees", "(e) groups after merging", "groups kept (trees)"),
                  ("seconds", "(f) route computation time", "route computation time (s)"))
        width = 0.8 / len(present)
        xs = np.arange(len(pats))
        for ax, (key, head, ylabel) in zip(axes.flat, panels):
            top, low = 0.0, math.inf
            for i, a in enumerate(present):
                vals = [next((r[key] for r in sub if r["pattern"] == p and r["algo"] == a), np.nan) for p in pats]
                ax.bar(xs + (i - (len(present) - 1) / 2) * width, vals, width, color=colours[a],
                       label=algo_name(a))
                top = max([top] + [v for v in vals if np.isfinite(v)])
                low = min([low] + [v for v in vals if np.isfinite(v) and v > 0])
            ax.set_title(head)
            ax.set_ylabel(ylabel)
            ax.set_xticks(xs, [_pattern(p).split(":ppn")[0] for p in pats], rotation=30, ha="right", fontsize=8)
            if key in ("seconds", "efi_max", "tfi_max", "trees"):
                plotstyle.log_scale(ax)
                ax.set_ylim(low / 2 if math.isfinite(low) else 0.5, top * 3 if top > 0 else 10)
            ax.grid(alpha=0.3, axis="y")
        missing = [algo_name(a) for a in algos if a not in present]
        handles = [Patch(color=colours[a], label=algo_name(a)) for a in present]
        plotstyle.legend_below(fig, handles, ncol=len(handles), fontsize=9)
        for ax in axes[-1]:
            ax.set_xlabel("communication pattern (process grid, or random groups: mean over the draws)")
        fig.suptitle(plotstyle.title("001", f"Fig. {fig_no}", f"C-MR4LMS against the baselines on the paper's "
                                     f"fat-tree (40,448 nodes), C = {COLORS}, {ppn} process(es) per terminal")
                     + (f"\n(not run here: {', '.join(missing)})" if missing else ""))
        path = out / f"multicast_{ppn}ppn.png"
        plotcheck.save(fig, path, dpi=110)
        written.append(path)
    return written
