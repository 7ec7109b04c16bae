"""Printed tables of the reproductions: a unit under every column name, rows aligned, long
cells wrapped so that no line is wider than :data:`MAX_WIDTH`, row labels unique, and the verdict rule
of the reports.

:func:`table` returns a :class:`Table`, a ``str`` (so ``print``, ``splitlines`` and JSON work as before)
that also carries its row labels (``labels``) for tests. The verdict rule (:data:`dcnlab.results.summary.RULE`): a percentage
within ±3 points, a ratio within 10%, a count exact, a trend in the stated direction. :func:`verdict` judges
one figure (a command's table of its own figures); a headline of ``summary.json`` with a model and a BMv2
figure is judged on both (:func:`dcnlab.results.summary.combine`)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from dcnlab.results.goals import DEVIATES, REPRODUCED, TREND, UNSTABLE
from dcnlab.results.summary import (
    PERCENT_POINTS,
    RATIO_FRACTION,
    tolerance_text,
)
from dcnlab.results.summary import verdict as _rule

MAX_WIDTH = 100
GAP = "  "
NOT_CHECKED = "-"


@dataclass(frozen=True)
class Column:
    name: str
    unit: str = ""
    """Shown under the name, in parentheses; ``""`` for label columns (the unit lives in the row)."""
    align: str = "<"
    wrap: bool = False
    """May this column's cells wrap onto more lines when the table would be too wide?"""
    min_width: int = 12
    """Narrowest a wrapping column gets."""


@dataclass(frozen=True)
class Section:
    """A heading row inside a table (the rows under it are its cases); printed across the table."""

    text: str


class Table(str):
    """The formatted table; ``labels`` are the rows' labels (the label columns joined), one per row."""

    labels: list[str]
    width: int


def _lines(cells: Sequence[str], width: int) -> int:
    return sum(len(_wrap(v, width)) for v in cells)


def _wrap(v: str, width: int) -> list[str]:
    return (textwrap.wrap(v, width, break_long_words=True, break_on_hyphens=False) or [""]) if len(v) > width else [v]


def _fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], max_width: int) -> list[int]:
    """Natural widths, then narrower wrapping columns, one character at a time, always where it costs the
    fewest extra printed lines (ties: the widest column), until the table fits ``max_width``."""
    heads = [max(len(c.name), len(f"({c.unit})") if c.unit else 0) for c in columns]
    widths = [max([heads[i]] + [len(r[i]) for r in rows]) for i in range(len(columns))]
    total = sum(widths) + len(GAP) * (len(columns) - 1)
    cols = [[r[i] for r in rows] for i in range(len(columns))]
    cost = [_lines(cols[i], widths[i]) for i in range(len(columns))]
    while total > max_width:
        wrappable = [i for i, c in enumerate(columns) if c.wrap and widths[i] > max(c.min_width, heads[i])]
        if not wrappable:
            break
        extra = {i: _lines(cols[i], widths[i] - 1) - cost[i] for i in wrappable}
        i = min(wrappable, key=lambda j: (extra[j], -widths[j]))
        widths[i] -= 1
        cost[i] += extra[i]
        total -= 1
    return widths


def table(columns: Sequence[Column], rows: Sequence[Sequence[object] | Section], *, label_columns: int = 1,
          max_width: int = MAX_WIDTH, title: str | None = None, notes: Sequence[str] = ()) -> Table:
    """Format ``rows`` (cells converted with ``str``) under ``columns``: names, then units in parentheses,
    a rule, the rows; cells of ``wrap`` columns wrap to keep lines within ``max_width``; ``notes`` are
    wrapped to the table's width and follow it. The first ``label_columns`` cells label a row; a
    :class:`Section` row is a heading printed across the table (not a labelled row)."""
    cells = [[("" if v is None else str(v)) for v in r] for r in rows if not isinstance(r, Section)]
    for r in cells:
        if len(r) != len(columns):
            raise ValueError(f"row {r[:2]} has {len(r)} cells for {len(columns)} columns")
    widths = _fit(columns, cells, max_width)

    def line(parts: Sequence[str]) -> str:
        return GAP.join(f"{p:{c.align}{w}}" for p, c, w in zip(parts, columns, widths)).rstrip()

    out = []
    if title:
        out += textwrap.wrap(title, max_width) or [title]
    out.append(line([c.name for c in columns]))
    if any(c.unit for c in columns):
        out.append(line([f"({c.unit})" if c.unit else "" for c in columns]))
    out.append("-" * min(max_width, sum(widths) + len(GAP) * (len(widths) - 1)))
    it = iter(cells)
    for row in rows:
        if isinstance(row, Section):
            out += textwrap.wrap(row.text, max_width, subsequent_indent="  ") or [""]
            continue
        r = next(it)
        wrapped = [_wrap(v, w) if c.wrap else [v] for v, c, w in zip(r, columns, widths)]
        for k in range(max(len(x) for x in wrapped)):
            out.append(line([x[k] if k < len(x) else "" for x in wrapped]))
    width = max(len(s) for s in out)
    for n in notes:
        out += textwrap.wrap(n, min(max_width, max(width, 60)), subsequent_indent="  ") or [""]
    result = Table("\n".join(out))
    result.labels = [" ".join(x for x in r[:label_columns] if x) for r in cells]
    result.width = max(len(s) for s in out)
    return result


def number(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def verdict(kind: str, ours: float | None, paper: float | None, *, tolerance: float | None = None,
            direction: int = 0, spread: float | None = None, n: int | None = None) -> tuple[str, str]:
    """(tolerance text, verdict) by the rule of the reports (:func:`dcnlab.results.summary.verdict`, the one
    rule of ``summary.json``), or by a table's own ``tolerance`` (no table of dcnlab's passes one).

    ``kind``: ``percent`` (within ``tolerance`` points, default 3), ``ratio`` (within ``tolerance`` as a
    share, default 10%), ``count`` (exact), ``trend`` (``ours`` has the sign of ``direction``);
    ``paper=None`` (no figure to compare): ``("-", "-")``. ``spread``: the figure's standard error over its ``n``
    rounds; a 95% interval (Student's t for ``n``) across an edge of the report's tolerance is ``unstable``
    (:mod:`dcnlab.results.goals`)."""
    if ours is None or (kind != "trend" and paper is None) or (isinstance(ours, float) and math.isnan(ours)):
        return NOT_CHECKED, NOT_CHECKED
    if kind in ("percent", "ratio", "count") and tolerance is None:
        assert paper is not None
        return tolerance_text(kind), _rule(kind, paper, ours, spread=spread, n=n)
    if kind == "percent":
        tol = PERCENT_POINTS if tolerance is None else tolerance
        assert paper is not None
        return f"±{tol:g} pts", REPRODUCED if abs(ours - paper) <= tol else DEVIATES
    if kind == "ratio":
        tol = RATIO_FRACTION if tolerance is None else tolerance
        assert paper is not None
        ok = paper != 0 and abs(ours / paper - 1) <= tol
        return f"±{100 * tol:g}%", REPRODUCED if ok else DEVIATES
    if kind == "count":
        return "exact", REPRODUCED if ours == paper else DEVIATES
    if kind == "trend":
        return ("> 0" if direction > 0 else "< 0"), TREND if ours * direction > 0 else DEVIATES
    raise ValueError(f"verdict kind {kind!r}: valid: percent, ratio, count, trend")


__all__ = ["Column", "DEVIATES", "MAX_WIDTH", "NOT_CHECKED", "REPRODUCED", "Section", "TREND", "Table", "UNSTABLE",
           "number", "table", "verdict"]
