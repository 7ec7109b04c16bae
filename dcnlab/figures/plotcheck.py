"""A checker for matplotlib figures, run before a figure is saved: a figure must read without its code.

:func:`problems` returns what a reader would trip over, one sentence each (empty: the figure reads
well); :func:`save` runs it, logs what it finds (raises with ``DCNLAB_PLOTCHECK=strict`` or
``strict=True``) and writes the PNG. The rules:

* every axes that shows something has a title, or the figure a suptitle;
* every axis that is drawn has a label, with its unit in parentheses ("time (s)", "saving (%)",
  "failed links (count)"); a shared axis may take its label from the panel it is shared with;
* no title, label or legend entry looks like a raw field name (``receiver_input``, ``cc_off``);
* an axes with more than one named series has a legend (its own or the figure's) naming them;
* every legend entry names something drawn and visible: a series with at least one finite point,
  not hidden under a later series with the same data and the same line style and marker (series
  that coincide need markers or dashes); a proxy entry (a style key) matches a drawn artist;
* no two entries of a legend, nor two named series of an axes, share a colour;
* reference lines (``axhline``/``axvline``) are explained by a legend entry of their colour and style;
* a legend does not cover data (points of lines, markers, bars, annotations) of any axes;
* a panel whose series are all zero says so in text instead of plotting them;
* a log axis shows at least two tick labels;
* panels with the same y label (the same quantity, compared side by side) share their y-range;
* every text is at least :data:`MIN_FONT_PT` points and annotations (node labels) do not overlap.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MIN_FONT_PT = 7.0
"""Smallest readable text at the PNGs' 110-120 dpi (about 11 pixels)."""
RAW_NAME = re.compile(r"(?<![\w.\-/=])[a-z][a-z0-9]+(?:_[a-z0-9]{2,})+(?![\w(])")
"""snake_case with parts of two letters or more: ``new_servers`` but not ``w_t`` or ``V_0``."""
UNIT = re.compile(r"\(.+\)")
STEP = 3.0
"""Pixels between the points sampled along a line (legend-over-data and hidden-series tests)."""
HIDDEN_SHARE = 0.8
"""A series whose stroke lies this much (or more) under a later series' stroke is hidden."""


class PlotProblem(Exception):
    """A figure failed :func:`problems` under ``strict``."""


# -- helpers -------------------------------------------------------------------------------------------------
def _rgb(color: Any) -> tuple[float, float, float] | None:
    from matplotlib.colors import to_rgba

    try:
        c = to_rgba(color)
    except (TypeError, ValueError):
        try:
            c = to_rgba(color[0])      # a collection's first face colour
        except (TypeError, ValueError, IndexError):
            return None
    if c[3] == 0:
        return None
    return (round(c[0], 3), round(c[1], 3), round(c[2], 3))


def _color_of(artist: Any) -> tuple[float, float, float] | None:
    from matplotlib.collections import Collection
    from matplotlib.container import Container
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if isinstance(artist, Container):      # before tuple: a BarContainer is a tuple of its bars
        kids = [c for c in artist.get_children()]
        return _color_of(kids[0]) if kids else None
    if isinstance(artist, tuple):
        return _color_of(artist[0]) if artist else None
    if isinstance(artist, Line2D):
        if artist.get_linestyle() in ("None", "", " ", "none") and artist.get_marker() not in (None, "None", "", " "):
            face = _rgb(artist.get_markerfacecolor())
            return face if face is not None else _rgb(artist.get_markeredgecolor())
        return _rgb(artist.get_color())
    if isinstance(artist, Patch):
        face = _rgb(artist.get_facecolor())
        return face if face is not None else _rgb(artist.get_edgecolor())
    if isinstance(artist, Collection):
        faces = artist.get_facecolor()
        if len(faces):
            return _rgb(faces[0])
        edges = artist.get_edgecolor()
        return _rgb(edges[0]) if len(edges) else None
    return None


def _colors_all(artist: Any) -> set[tuple[float, float, float]]:
    """Every colour an artist shows: line, marker face and edge, face and edge colours of a collection."""
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    found: list[Any] = []
    if isinstance(artist, Line2D):
        if _style(artist)[0] != "None":
            found.append(artist.get_color())
        if _style(artist)[1] != "None":
            found += [artist.get_markerfacecolor(), artist.get_markeredgecolor()]
    elif isinstance(artist, Patch):
        found += [artist.get_facecolor(), artist.get_edgecolor()]
    elif isinstance(artist, Collection):
        found += list(artist.get_facecolor()) + list(artist.get_edgecolor())
    return {c for c in (_rgb(x) for x in found) if c is not None}


def _is_neutral(rgb: tuple[float, float, float] | None) -> bool:
    return rgb is not None and max(rgb) - min(rgb) < 0.02


def _style(line: Any) -> tuple[str, str]:
    """(line style, marker); dashed styles carry their dash pattern, so that two custom dashes differ."""
    ls = line.get_linestyle()
    marker = line.get_marker()
    if ls in ("None", "", " ", "none"):
        ls = "None"
    elif ls not in ("-", "solid"):
        pattern = getattr(line, "_unscaled_dash_pattern", None)
        ls = f"{ls}{pattern}" if pattern is not None else str(ls)
    return (str(ls), "None" if marker in (None, "None", "", " ", "none") else str(marker))


def _is_reference(ax: Any, line: Any) -> bool:
    """``axhline``/``axvline``: a line drawn in (partly) axes coordinates."""
    return line.get_transform() in (ax.get_xaxis_transform(), ax.get_yaxis_transform())


def _finite_xy(line: Any):
    import numpy as np

    xy = np.asarray(line.get_xydata(), dtype=float)
    if xy.size == 0:
        return xy.reshape(0, 2)
    return xy[np.isfinite(xy).all(axis=1)]


def _marked(line: Any):
    """The points of a line that carry a marker (``markevery``: an int, ``(start, step)``, a slice or a list
    of indices; anything else: every point)."""
    import numpy as np

    xy = np.asarray(line.get_xydata(), dtype=float)
    every = line.get_markevery()
    idx: np.ndarray = np.arange(len(xy))      # not ndarray[tuple[int]] (numpy 2.2's inference)
    if isinstance(every, (int, np.integer)) and not isinstance(every, bool) and every > 0:
        idx = idx[::int(every)]
    elif isinstance(every, tuple) and len(every) == 2 and all(isinstance(v, (int, np.integer)) for v in every):
        idx = idx[int(every[0])::max(1, int(every[1]))]
    elif isinstance(every, slice):
        idx = idx[every]
    elif isinstance(every, (list, np.ndarray)) and len(every) and not isinstance(every[0], (bool, np.bool_)):
        idx = np.asarray(every, dtype=int)
    xy = xy[idx]
    return xy[np.isfinite(xy).all(axis=1)]


def _visible(artist: Any) -> bool:
    from matplotlib.collections import Collection
    from matplotlib.container import BarContainer, Container
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    # containers first: they are tuples too, but one bar (or one part of an errorbar) drawn shows the series,
    # where a legend's handle tuple (HandlerTuple: a line and its markers) needs every part
    if isinstance(artist, BarContainer):
        return any(_visible(p) for p in artist.patches)
    if isinstance(artist, Container):
        return any(_visible(c) for c in artist.get_children())
    if isinstance(artist, tuple):
        return all(_visible(a) for a in artist)
    if not artist.get_visible() or (artist.get_alpha() is not None and artist.get_alpha() == 0):
        return False
    if isinstance(artist, Line2D):
        return len(_finite_xy(artist)) > 0
    if isinstance(artist, Rectangle):
        vals = (artist.get_height(), artist.get_width(), artist.get_x(), artist.get_y())
        return all(math.isfinite(v) for v in vals) and artist.get_height() != 0 and artist.get_width() != 0
    if isinstance(artist, Collection):
        import numpy as np
        return len(np.asarray(artist.get_offsets())) > 0 or len(artist.get_paths()) > 0
    return True


def _data_artists(ax: Any) -> list[Any]:
    """What the axes shows: lines, collections, patches (bars), images, texts."""
    out: list[Any] = [a for a in ax.lines if _visible(a)]
    out += [c for c in ax.collections if _visible(c)]
    out += [p for p in ax.patches if _visible(p)]
    out += [i for i in ax.images if i.get_visible()]
    out += [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
    out += [t.arrow_patch for t in ax.texts if t.get_visible() and getattr(t, "arrow_patch", None) is not None]
    return out


def _series_y(ax: Any) -> list[float]:
    """Every finite y value of the axes' series (reference lines excluded)."""
    import numpy as np
    from matplotlib.collections import PathCollection

    ys: list[float] = []
    for line in ax.lines:
        if line.get_visible() and not _is_reference(ax, line):
            ys += _finite_xy(line)[:, 1].tolist()
    for c in ax.collections:
        if isinstance(c, PathCollection) and c.get_visible():
            off = np.asarray(c.get_offsets(), dtype=float)
            if off.size:
                ys += [v for v in off[:, 1].tolist() if math.isfinite(v)]
    for bars in ax.containers:
        for p in getattr(bars, "patches", []):
            if p.get_visible() and math.isfinite(p.get_height()):
                ys.append(float(p.get_height()))
    return ys


def _axes_name(ax: Any, i: int) -> str:
    title = ax.get_title() or ax.get_title("left") or ax.get_title("right")
    return f"axes {i} ({title.splitlines()[0][:40]!r})" if title else f"axes {i}"


def _title(ax: Any) -> str:
    return " ".join(t for t in (ax.get_title("left"), ax.get_title(), ax.get_title("right")) if t)


def _shared_label(ax: Any, which: str, axes: Sequence[Any]) -> str:
    own = ax.get_xlabel() if which == "x" else ax.get_ylabel()
    if own.strip():
        return own
    group = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    for other in axes:
        if other is not ax and group.joined(ax, other):
            label = other.get_xlabel() if which == "x" else other.get_ylabel()
            if label.strip():
                return label
    return ""


def _sample_line(ax: Any, line: Any):
    """Display coordinates of points every :data:`STEP` pixels along the line as drawn (steps too)."""
    import numpy as np
    from matplotlib.cbook import STEP_LOOKUP_MAP

    xy = np.asarray(line.get_xydata(), dtype=float)
    if len(xy) == 0:
        return np.zeros((0, 2))
    draw = line.get_drawstyle() or "default"
    if draw != "default" and draw in STEP_LOOKUP_MAP and len(xy) > 1:
        xs, ys = STEP_LOOKUP_MAP[draw](xy[:, 0], xy[:, 1])
        xy = np.column_stack([xs, ys])
    with np.errstate(all="ignore"):
        pts = line.get_transform().transform(xy)
    if _style(line)[0] == "None" or len(pts) < 2:
        return pts[np.isfinite(pts).all(axis=1)]
    out = [pts[:1]]
    for a, b in zip(pts[:-1], pts[1:]):
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            continue
        n = int(min(2000, max(1, np.hypot(*(b - a)) // STEP)))
        t = np.linspace(0, 1, n + 1)[1:, None]
        out.append(a + t * (b - a))
    return np.concatenate(out)


def _points(ax: Any, renderer: Any) -> tuple[Any, list[Any]]:
    """Display points (lines, markers) and boxes (bars, texts) the axes draws, inside its area."""
    import numpy as np
    from matplotlib.collections import LineCollection, PathCollection

    pts = [np.zeros((0, 2))]
    for line in ax.lines:
        if line.get_visible() and not _is_reference(ax, line):
            pts.append(_sample_line(ax, line))
    for c in ax.collections:
        if not c.get_visible():
            continue
        if isinstance(c, PathCollection):
            off = np.asarray(c.get_offsets(), dtype=float)
            if off.size:
                pts.append(c.get_offset_transform().transform(off))
        elif isinstance(c, LineCollection):
            for seg in c.get_segments():
                seg = np.asarray(seg, dtype=float)
                if len(seg) >= 2:
                    disp = c.get_transform().transform(seg)
                    for a, b in zip(disp[:-1], disp[1:]):
                        n = int(min(500, max(1, np.hypot(*(b - a)) // (4 * STEP))))
                        t = np.linspace(0, 1, n + 1)[:, None]
                        pts.append(a + t * (b - a))
    allpts = np.concatenate(pts)
    box = ax.get_window_extent(renderer)
    if len(allpts):
        inside = ((allpts[:, 0] >= box.x0 - 1) & (allpts[:, 0] <= box.x1 + 1)
                  & (allpts[:, 1] >= box.y0 - 1) & (allpts[:, 1] <= box.y1 + 1))
        allpts = allpts[inside & np.isfinite(allpts).all(axis=1)]
    from matplotlib.transforms import Bbox

    boxes = [p.get_window_extent(renderer) for p in ax.patches if _visible(p)]
    boxes = [Bbox.intersection(b, box) for b in boxes]
    boxes = [b for b in boxes if b is not None and np.isfinite(b.get_points()).all()]
    boxes += [t.get_window_extent(renderer) for t in ax.texts if t.get_visible() and t.get_text().strip()]
    return allpts, boxes


def _shown_ticklabels(axis: Any) -> list[Any]:
    """The axis' tick labels that are drawn: visible, with text, at a tick inside the view interval."""
    lo, hi = sorted(axis.get_view_interval())
    out = []
    for locs, texts in ((axis.get_majorticklocs(), axis.get_majorticklabels()),
                        (axis.get_minorticklocs(), axis.get_minorticklabels())):
        for loc, t in zip(locs, texts):
            if lo - 1e-9 * abs(lo) <= loc <= hi + 1e-9 * abs(hi) and t.get_visible() and t.get_text().strip():
                out.append(t)
    return out


def _legend_entries(leg: Any) -> list[tuple[str, Any]]:
    handles = getattr(leg, "legend_handles", None) or getattr(leg, "legendHandles", [])
    return [(t.get_text(), h) for t, h in zip(leg.get_texts(), handles)]


def _artists_labelled(fig: Any) -> dict[str, list[tuple[Any, Any]]]:
    """Label -> [(axes, artist)] over the figure's axes (the originals the legends were built from)."""
    out: dict[str, list[tuple[Any, Any]]] = {}
    for ax in fig.axes:
        handles, labels = ax.get_legend_handles_labels()
        for h, lab in zip(handles, labels):
            out.setdefault(lab, []).append((ax, h))
    return out


def _hidden_under(ax: Any, line: Any) -> Any | None:
    """A line drawn later that covers ``line`` as drawn: its stroke within half a line width of the later
    line's (which is solid or dashed the same way, and not thinner), and its markers (if any) under markers
    of the later line that are at least as large."""
    import numpy as np
    from matplotlib.lines import Line2D
    from scipy.spatial import cKDTree

    lines = [l for l in ax.lines if isinstance(l, Line2D) and l.get_visible() and not _is_reference(ax, l)]
    order = {id(l): (l.get_zorder(), i) for i, l in enumerate(lines)}
    if id(line) not in order:
        return None
    px = ax.figure.dpi / 72.0
    ls, marker = _style(line)
    mine = _sample_line(ax, line) if ls != "None" else np.zeros((0, 2))
    with np.errstate(all="ignore"):
        my_marks = line.get_transform().transform(_marked(line)) if marker != "None" else np.zeros((0, 2))
    for other in lines:
        if other is line or order[id(other)] < order[id(line)]:
            continue
        ols, omarker = _style(other)
        if len(mine):
            if ols == "None" or (ols != "-" and ols != ls) or other.get_linewidth() < line.get_linewidth():
                continue
            theirs = _sample_line(ax, other)
            if not len(theirs):
                continue
            d, _ = cKDTree(theirs).query(mine)
            if np.mean(d <= max(1.0, 0.5 * other.get_linewidth() * px) + STEP / 2) < HIDDEN_SHARE:
                continue
        if len(my_marks):
            if omarker == "None" or other.get_markersize() < line.get_markersize():
                continue
            with np.errstate(all="ignore"):
                their_marks = other.get_transform().transform(_marked(other))
            if not len(their_marks):
                continue
            d, _ = cKDTree(their_marks).query(my_marks)
            if not np.all(d <= 1.0):
                continue
        if len(mine) or len(my_marks):
            return other
    return None


# -- the check -----------------------------------------------------------------------------------------------
def problems(fig: Any) -> list[str]:
    """What is wrong with ``fig`` (see the module docstring); empty when nothing is."""
    import numpy as np

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out: list[str] = []
    sup = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    supx = fig._supxlabel.get_text() if getattr(fig, "_supxlabel", None) is not None else ""
    supy = fig._supylabel.get_text() if getattr(fig, "_supylabel", None) is not None else ""
    axes = [ax for ax in fig.axes if ax.get_visible()]
    legends = [leg for leg in fig.legends if leg.get_visible()]
    legends += [ax.get_legend() for ax in axes if ax.get_legend() is not None and ax.get_legend().get_visible()]
    legend_labels = {t for leg in legends for t, _ in _legend_entries(leg)}
    legend_keys = [(h, leg) for leg in legends for _, h in _legend_entries(leg)]
    labelled = _artists_labelled(fig)

    def raw(text: str, where: str) -> None:
        for word in RAW_NAME.findall(text):
            out.append(f"{where}: {word!r} looks like a raw field name; say it in words")

    raw(sup, "suptitle")
    for i, ax in enumerate(axes):
        name = _axes_name(ax, i)
        shown = _data_artists(ax)
        if not shown:
            continue
        if not (_title(ax).strip() or sup.strip()):
            out.append(f"{name}: no title (and no figure suptitle)")
        raw(_title(ax), f"{name} title")
        if ax.axison:
            for which, fallback in (("x", supx), ("y", supy)):
                axis = ax.xaxis if which == "x" else ax.yaxis
                if not axis.get_visible():
                    continue
                label = _shared_label(ax, which, axes) or fallback
                if not label.strip():
                    out.append(f"{name}: no {which} label")
                    continue
                raw(label, f"{name} {which} label")
                if not UNIT.search(label):
                    out.append(f"{name}: {which} label {label!r} gives no unit in parentheses")
        _, labels = ax.get_legend_handles_labels()
        if len(labels) > 1:
            missing = [lab for lab in labels if lab not in legend_labels]
            if missing:
                out.append(f"{name}: {len(labels)} named series but no legend names {missing[:3]}")
        seen: dict[tuple[float, float, float], str] = {}
        handles, labels = ax.get_legend_handles_labels()
        for h, lab in zip(handles, labels):
            rgb = _color_of(h)
            if rgb is not None and rgb in seen and seen[rgb] != lab:
                out.append(f"{name}: series {seen[rgb]!r} and {lab!r} share a colour")
            elif rgb is not None:
                seen[rgb] = lab
        ys = _series_y(ax)
        if ys and all(v == 0 for v in ys):
            out.append(f"{name}: every series is zero; say so in text instead of plotting it")
        for line in ax.lines:
            if not (line.get_visible() and _is_reference(ax, line)):
                continue
            if not line.get_label().startswith("_") and line.get_label() in legend_labels:
                continue
            rgb, style = _rgb(line.get_color()), _style(line)
            if not any((_color_of(h) == rgb or _is_neutral(_color_of(h))) and hasattr(h, "get_linestyle")
                       and _style(h)[0] == style[0] for h, _ in legend_keys):
                out.append(f"{name}: a reference line (colour {rgb}, style {style[0]}) that no legend entry explains")
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if ax.axison and axis.get_visible() and axis.get_scale() == "log":
                lo, hi = sorted(axis.get_view_interval())
                shown_ticks = 0
                for locs, texts in ((axis.get_majorticklocs(), axis.get_majorticklabels()),
                                    (axis.get_minorticklocs(), axis.get_minorticklabels())):
                    for loc, t in zip(locs, texts):
                        text = t.get_text().strip()
                        if lo * (1 - 1e-9) <= loc <= hi * (1 + 1e-9) and t.get_visible() and text \
                                and "times" not in text:      # 2x10^0: hard to read
                            shown_ticks += 1
                if shown_ticks < 2:
                    out.append(f"{name}: log {which} axis shows {shown_ticks} readable tick label(s); give it at least "
                               f"two (plain numbers)")

    # the same quantity side by side: the same y-range
    by_label: dict[tuple[str, str], list[tuple[int, Any]]] = {}
    for i, ax in enumerate(axes):
        if ax.axison and _data_artists(ax) and ax.get_ylabel().strip():
            by_label.setdefault((ax.get_ylabel(), ax.yaxis.get_scale()), []).append((i, ax))
    for (label, _), group in by_label.items():
        lims = {tuple(round(v, 9) for v in ax.get_ylim()) for _, ax in group}
        if len(lims) > 1:
            out.append(f"axes {', '.join(str(i) for i, _ in group)} show {label!r} on different y-ranges "
                       f"{sorted(lims)}; compared panels share their y-range")

    # legends: what they name is drawn and visible, colours distinct, no data under them
    for leg in legends:
        where = "figure legend" if leg in fig.legends else "legend"
        colours: dict[tuple[float, float, float], str] = {}
        for text, handle in _legend_entries(leg):
            raw(text, f"{where} entry")
            originals = labelled.get(text, [])
            if originals:
                vis = [(ax, h) for ax, h in originals if _visible(h)]
                if not vis:
                    out.append(f"{where} entry {text!r}: its series has nothing visible (no finite point)")
                for ax, h in vis:
                    from matplotlib.lines import Line2D
                    if isinstance(h, Line2D):
                        over = _hidden_under(ax, h)
                        if over is not None:
                            out.append(f"{where} entry {text!r} is hidden under {over.get_label()!r} (same data and "
                                       f"style): use markers or dashes, or say that they coincide")
            elif handle is not None:
                rgb = _color_of(handle)
                drawn = [a for ax in axes for a in _data_artists(ax)]
                match = bool(_colors_all(handle) & {c for a in drawn for c in _colors_all(a)})
                if not match and (_is_neutral(rgb) or rgb is None) and hasattr(handle, "get_linestyle"):
                    st = _style(handle)
                    match = any(hasattr(a, "get_linestyle") and hasattr(a, "get_marker")
                                and (_style(a)[1] == st[1] if st[1] != "None" else _style(a)[0] == st[0])
                                for a in drawn)
                if not match:
                    out.append(f"{where} entry {text!r} matches nothing drawn")
            rgb = _color_of(handle) if handle is not None else None
            if rgb is not None and not _is_neutral(rgb):
                if rgb in colours and colours[rgb] != text:
                    out.append(f"{where}: entries {colours[rgb]!r} and {text!r} share a colour")
                colours.setdefault(rgb, text)
        bbox = leg.get_window_extent(renderer).expanded(1.0, 1.0)
        x0, y0, x1, y1 = bbox.x0 + 1, bbox.y0 + 1, bbox.x1 - 1, bbox.y1 - 1
        for i, ax in enumerate(axes):
            pts, boxes = _points(ax, renderer)
            hit = 0
            if len(pts):
                hit = int(((pts[:, 0] > x0) & (pts[:, 0] < x1) & (pts[:, 1] > y0) & (pts[:, 1] < y1)).sum())
            hit += sum(1 for b in boxes if b.x0 < x1 and b.x1 > x0 and b.y0 < y1 and b.y1 > y0)
            if hit:
                out.append(f"{where} covers data of {_axes_name(ax, i)} ({hit} points or boxes): move it to a free "
                           f"corner or outside the axes")
        texts = [t for t in (getattr(fig, "_suptitle", None), getattr(fig, "_supxlabel", None),
                             getattr(fig, "_supylabel", None), *fig.texts) if t is not None]
        for ax in axes:
            texts += [ax.title, ax._left_title, ax._right_title]
            if ax.axison:
                texts += [ax.xaxis.label, ax.yaxis.label]
                texts += _shown_ticklabels(ax.xaxis) + _shown_ticklabels(ax.yaxis)
        for t in texts:
            if not (t.get_visible() and t.get_text().strip()):
                continue
            b = t.get_window_extent(renderer)
            if b.x0 < x1 and b.x1 > x0 and b.y0 < y1 and b.y1 > y0:
                out.append(f"{where} covers the text {t.get_text()[:40]!r}")

    # text: readable sizes, node labels apart
    for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text")):
        if t.get_visible() and t.get_text().strip() and t.get_fontsize() < MIN_FONT_PT - 1e-9:
            out.append(f"text {t.get_text()[:30]!r} is {t.get_fontsize():g} pt; at least {MIN_FONT_PT:g} pt "
                       f"is readable")
            break
    for i, ax in enumerate(axes):
        texts = [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
        if len(texts) < 2:
            continue
        ext = np.array([[b.x0, b.y0, b.x1, b.y1] for b in (t.get_window_extent(renderer) for t in texts)])
        w = np.minimum(ext[:, None, 2], ext[None, :, 2]) - np.maximum(ext[:, None, 0], ext[None, :, 0])
        h = np.minimum(ext[:, None, 3], ext[None, :, 3]) - np.maximum(ext[:, None, 1], ext[None, :, 1])
        area = np.clip(w, 0, None) * np.clip(h, 0, None)
        own = (ext[:, 2] - ext[:, 0]) * (ext[:, 3] - ext[:, 1])
        small = np.minimum(own[:, None], own[None, :])
        np.fill_diagonal(area, 0)
        bad = int(((area > 0.2 * small) & (small > 0)).sum() // 2)
        if bad:
            out.append(f"{_axes_name(ax, i)}: {bad} pairs of labels overlap; enlarge the figure or label fewer nodes")
    return list(dict.fromkeys(out))


def check(fig: Any) -> None:
    """:class:`PlotProblem` listing :func:`problems` when there are any."""
    found = problems(fig)
    if found:
        raise PlotProblem("; ".join(found))


def save(fig: Any, path: Path | str, *, dpi: int = 120, strict: bool | None = None, close: bool = True,
         **kwargs: Any) -> Path:
    """Check ``fig`` (:func:`problems`), then write it to ``path`` and close it.

    Problems are logged as warnings; with ``strict`` (default: the environment variable
    ``DCNLAB_PLOTCHECK=strict``) they raise :class:`PlotProblem` and nothing is written;
    ``DCNLAB_PLOTCHECK=off`` skips the check (tests that check every saved figure themselves)."""
    import matplotlib.pyplot as plt

    mode = os.environ.get("DCNLAB_PLOTCHECK", "")
    strict = mode == "strict" if strict is None else strict
    try:
        found = problems(fig) if (strict or mode != "off") else []
        if found:
            if strict:
                raise PlotProblem(f"{path}: " + "; ".join(found))
            for p in found:
                log.warning("plot %s: %s", Path(path).name, p)
        fig.savefig(path, dpi=dpi, **kwargs)
    finally:
        if close:
            plt.close(fig)
    return Path(path)


def all_problems(figs: Iterable[Any]) -> dict[int, list[str]]:
    """:func:`problems` of several figures, by position (only those with problems)."""
    return {i: p for i, fig in enumerate(figs) if (p := problems(fig))}


__all__ = ["MIN_FONT_PT", "PlotProblem", "all_problems", "check", "problems", "save"]
