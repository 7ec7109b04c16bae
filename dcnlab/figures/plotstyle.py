"""Shared look of the reproductions' figures: the papers' names for titles, one colour,
marker and dash per series (series that coincide stay visible), legends outside the data, a note
instead of an all-zero panel. :mod:`dcnlab.figures.plotcheck` checks the result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcnlab.results import papers

PAPERS = {pid: f"{p.who()} ({p.label})" for pid, p in papers.PAPERS.items()}
"""How a figure names the paper it reproduces, by id: ``"Guo et al. (IRS/SRS)"`` (first author and method, as
:mod:`dcnlab.results.papers` gives them; the report lists the full references)."""

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
DASHES: tuple[Any, ...] = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 1)), (0, (6, 2)), (0, (3, 1, 1, 1, 1, 1)))


def pyplot():
    """``matplotlib.pyplot`` on the headless Agg backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def title(seed: str, figure: str | None, what: str) -> str:
    """``"Guo et al. (IRS/SRS), Fig. 5: what"``; ``figure=None``: a figure the paper does not have."""
    where = f", {figure}" if figure else " (no figure in the paper)"
    return f"{PAPERS[seed]}{where}: {what}"


def colors(n: int) -> list[Any]:
    """``n`` distinct colours: tab10, tab20 beyond ten, evenly spaced hues beyond twenty."""
    import matplotlib

    if n <= 10:
        return [matplotlib.colormaps["tab10"](i) for i in range(n)]
    if n <= 20:
        return [matplotlib.colormaps["tab20"](i) for i in range(n)]
    return [matplotlib.colormaps["hsv"](i / n) for i in range(n)]


def series_styles(n: int) -> list[dict[str, Any]]:
    """Keyword arguments of ``ax.plot`` for ``n`` series: distinct colours, hollow markers of distinct
    shapes and distinct dashes, markers shrinking from the first series to the last, so that a series
    drawn over an equal one leaves the earlier one's marker showing around it."""
    cs = colors(n)
    return [{"color": cs[i], "marker": MARKERS[i % len(MARKERS)], "linestyle": DASHES[i % len(DASHES)],
             "markersize": max(4.0, 9.0 - 1.0 * i), "markerfacecolor": "none", "markeredgewidth": 1.5,
             "linewidth": 1.6, "zorder": 2 + 0.01 * i} for i in range(n)]


def legend_outside(ax: Any, *, handles: Sequence[Any] | None = None, labels: Sequence[str] | None = None,
                   fontsize: float = 8, title: str | None = None, ncol: int = 1) -> Any:
    """The axes' legend to the right of it, clear of the data."""
    kw: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0,
                          "fontsize": fontsize, "ncol": ncol}
    if title:
        kw["title"] = title
        kw["title_fontsize"] = fontsize
    if handles is not None:
        return ax.legend(handles, labels, **kw) if labels is not None else ax.legend(handles=handles, **kw)
    return ax.legend(**kw)


def legend_below(fig: Any, handles: Sequence[Any], labels: Sequence[str] | None = None, *, ncol: int = 4,
                 fontsize: float = 8, loc: str = "outside lower center") -> Any:
    """One legend for the whole figure, under the panels (with ``layout="constrained"``; ``loc="outside
    upper center"``: under the suptitle, above the panels)."""
    kw = {"loc": loc, "ncol": ncol, "fontsize": fontsize}
    if labels is not None:
        return fig.legend(handles, labels, **kw)
    return fig.legend(handles=handles, **kw)


def note(ax: Any, text: str, *, fontsize: float = 10) -> None:
    """Text in the middle of an empty panel (for example: every value of the panel is zero)."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=fontsize, wrap=True,
            color="#444444", bbox={"boxstyle": "round", "facecolor": "#f4f4f4", "edgecolor": "#bbbbbb"})


def style_key(label: str, linestyle: Any = "-", marker: str | None = None, color: str = "#555555") -> Any:
    """A legend entry explaining a line style (for example the paper's averages, dotted in each colour)."""
    from matplotlib.lines import Line2D
    return Line2D([], [], color=color, linestyle=linestyle, marker=marker, label=label)


def log_scale(ax: Any, which: str = "y") -> None:
    """A log axis with plain tick labels at 1, 2 and 5 times the powers of ten (0.01, 0.02, 0.05, 0.1, ...)."""
    from matplotlib import ticker

    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_locator(ticker.LogLocator(base=10, subs=tuple(range(1, 10))))
    axis.set_minor_formatter(ticker.NullFormatter())


LABEL_PT = 7.5
"""Node labels in fabric and tree drawings (points)."""


def _label_width_in(names: Sequence[str], fontsize: float) -> float:
    return (max((len(n) for n in names), default=1) * 0.62 * fontsize + 6) / 72


def drawing_size(pos: dict[str, tuple[float, float]], labelled: Sequence[str], *, comfortable: float = 18.0,
                 max_width: float = 40.0, fontsize: float = LABEL_PT) -> tuple[float, bool]:
    """(figure width in inches, labels vertical?) for a layered drawing: wide enough that the labels of the
    most crowded row sit side by side; when that takes more than ``comfortable`` inches, the labels stand
    vertically (and the figure is as wide as upright labels need, at most ``max_width``)."""
    rows: dict[float, list[float]] = {}
    for n in labelled:
        rows.setdefault(round(pos[n][1], 6), []).append(pos[n][0])
    xs = [x for n in pos for x in (pos[n][0],)]
    span = (max(xs) - min(xs)) if xs else 1.0
    gap = min((b - a for row in rows.values() for a, b in zip(sorted(row), sorted(row)[1:]) if b > a),
              default=span) / (span or 1.0)
    need = _label_width_in(labelled, fontsize) * 1.15 / max(gap, 1e-6) + 2.5
    if need <= comfortable:
        return max(8.0, need), False
    upright = (fontsize * 1.8 / 72) / max(gap, 1e-6) + 2.5
    return max(8.0, min(max_width, upright)), True


def label_nodes(ax: Any, pos: dict[str, tuple[float, float]], names: Sequence[str], *, fontsize: float = LABEL_PT,
                vertical: bool = False, offset: float = 6) -> int:
    """The nodes' names next to them (above; beside when ``vertical``). A name that would overlap one
    already placed (nodes drawn on top of each other) is left out; returns how many were left out."""
    import numpy as np

    texts = [ax.annotate(v, pos[v], fontsize=fontsize, ha="center" if not vertical else "left", va="bottom",
                         xytext=(0, offset) if not vertical else (3, offset), textcoords="offset points",
                         rotation=90 if vertical else 0, zorder=6) for v in names]
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    placed: list[Any] = []
    hidden = 0
    for t in texts:
        b = t.get_window_extent(renderer)
        box = np.array([b.x0, b.y0, b.x1, b.y1])
        clash = any(min(box[2], p[2]) - max(box[0], p[0]) > 0.2 * (box[2] - box[0])
                    and min(box[3], p[3]) - max(box[1], p[1]) > 0.2 * (box[3] - box[1]) for p in placed)
        if clash:
            t.set_visible(False)
            hidden += 1
        else:
            placed.append(box)
    return hidden


def all_zero(values: Sequence[float]) -> bool:
    import math
    finite = [v for v in values if math.isfinite(v)]
    return bool(finite) and all(v == 0 for v in finite)


__all__ = ["DASHES", "LABEL_PT", "MARKERS", "PAPERS", "all_zero", "colors", "drawing_size", "label_nodes",
           "legend_below", "legend_outside", "log_scale", "note", "pyplot", "series_styles", "style_key", "title"]
