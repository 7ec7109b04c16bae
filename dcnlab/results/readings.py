"""Readings of the headlines that deviate: every reading the papers' text allows, measured.

Where a paper's figure is not reproduced, the text usually leaves a choice open (which tree the
baseline builds, how an average is taken, what is random). Each paper's readings module implements the
candidate readings of that paper as named variants of the mechanism code (the variants themselves live in
``dcnlab/controller/<mechanism>/``, each documented there) and measures each at the paper's setting
(:mod:`dcnlab.report.readings` lists them):

* :mod:`dcnlab.reproduce.aggregation.readings_003` — 003's Steiner baseline on BCube(6,k) and BCube(8,5), the
  averaging of the BCube(8,5) sweep (Fig. 5), and delta uniform on [0, 1] (Fig. 6);
* :mod:`dcnlab.reproduce.aggregation.readings_000` — 000's M2 vs IRS across sender counts (and across network
  sizes);
* :mod:`dcnlab.reproduce.multicast.readings` — 001's MR4LMS keeping 32 of 1,000 random groups;
* :mod:`dcnlab.reproduce.congestion.readings` — 002's BECN counts 790/480/320 and their sampling window.

This module holds what they share: the :class:`Reading` record and its table. Each readings module exposes ``readings(quick: bool, workers: int) -> list[Reading]``; :func:`format_table`
prints any list of them in at most 100 columns. ``quick`` uses fewer rounds and points (seconds to a
minute each); the full settings are the papers' (or, where the paper gives no count, stated in the
module). The verdict rule is the report's: a percentage within ±3 points, a ratio within 10%, a count
exact; each reading states its unit (``%``, ``ratio``, ``groups``, ``Mb/s``, ``s``, ...) and the kind of
tolerance that applies, and each block is named from the parameters that ran.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from dcnlab.results.summary import tolerance_text, within

KINDS = {"%": "percent", "ratio": "ratio", "count": "count"}
"""The tolerance rule a unit implies when no ``kind`` is given (``%``: ±3 points, ``ratio``: ±10%, ``count``: exact)."""
UNITS = tuple(KINDS)


@dataclass(frozen=True)
class Reading:
    """One reading of one headline, measured at the paper's setting.

    ``headline``: the block's name, built from what ran (``001-mr4lms-random-100`` when 100 groups ran).
    ``unit``: what ``value`` and ``paper`` are in (``%``, ``ratio``, ``groups``, ``Mb/s``, ``s``, ...).
    ``kind``: the verdict rule (``percent``: ±3 points, ``ratio``: within 10% of the paper's, ``count``:
    exact); it may be left out for the units ``%``, ``ratio`` and ``count`` (:data:`KINDS`).
    ``default``: the reading the reproduction uses today. ``setting``: what was run (pattern, fabric,
    rounds, points), from the run's own parameters. ``seconds``: wall time of the measurement (0 when it
    shares a run with other readings)."""

    headline: str
    reading: str
    description: str
    value: float
    paper: float
    unit: str
    default: bool = False
    setting: str = ""
    seconds: float = 0.0
    kind: str = ""
    contradicts: str = ""
    """``contradicts §5.1: "<the paper's sentence>"`` for a reading the text rules out: measured and shown, never
    a candidate of the search (:attr:`dcnlab.results.open_settings.OpenSetting.contradicts`)."""

    def __post_init__(self) -> None:
        if not self.kind:
            if self.unit not in KINDS:
                raise ValueError(f"reading {self.reading}: unit {self.unit!r} needs a kind (percent, ratio or "
                                 f"count); the kind follows from the units {', '.join(UNITS)}")
            object.__setattr__(self, "kind", KINDS[self.unit])
        if self.kind not in KINDS.values():
            raise ValueError(f"reading {self.reading}: kind {self.kind!r}; valid: {', '.join(KINDS.values())}")
        if not self.unit.strip():
            raise ValueError(f"reading {self.reading}: no unit")

    @property
    def tolerance(self) -> str:
        return tolerance_text(self.kind)

    @property
    def holds(self) -> bool:
        """Whether the value reproduces the paper's by the report's rule (:func:`~dcnlab.results.summary.within`)."""
        return not math.isnan(self.value) and within(self.kind, self.paper, self.value)


def _fmt(x: float, r: Reading) -> str:
    if math.isnan(x):
        return "n/a"
    if r.kind == "count":
        return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"
    if r.unit in ("ratio", "s"):
        return f"{x:.3f}"
    if r.unit == "%" or abs(x) < 10:
        return f"{x:.2f}"
    return f"{x:.1f}"


def format_table(readings: Sequence[Reading], width: int = 100) -> str:
    """A readings table, one block per headline, no line wider than ``width`` (at least 72) columns.

    Each block's title is the headline's name and the setting that ran (wrapped, never cut). Columns:
    reading, value, paper, unit, tolerance, verdict (``yes``: within the rule; the default reading is
    marked ``*``); the description follows on an indented line, wrapped."""
    width = max(width, 72)
    out: list[str] = []
    heads: dict[str, list[Reading]] = {}
    for r in readings:
        heads.setdefault(r.headline, []).append(r)
    unit_w = max([len(r.unit) for r in readings] + [4])
    name_w = min(max([len(r.reading) + 2 for r in readings] + [9]), width - 41 - unit_w)
    header = (f"{'reading':<{name_w}} {'ours':>10} {'paper':>10} {'unit':<{unit_w}} {'tolerance':<9} {'holds':<5}")
    for head, rows in heads.items():
        setting = next((r.setting for r in rows if r.setting), "")
        out += textwrap.wrap(f"== {head}" + (f" ({setting})" if setting else ""), width, subsequent_indent="   ")
        out.append(header)
        for r in rows:
            name = (r.reading + (" *" if r.default else " x" if r.contradicts else ""))[:name_w]
            secs = f" {r.seconds:.0f}s" if r.seconds else ""
            line = (f"{name:<{name_w}} {_fmt(r.value, r):>10} {_fmt(r.paper, r):>10} {r.unit:<{unit_w}} "
                    f"{r.tolerance:<9} {'yes' if r.holds else 'no':<5}{secs}")
            out.append(line[:width])
            if r.description:
                out.extend(textwrap.wrap(r.description, width, initial_indent="    ", subsequent_indent="    "))
            if r.contradicts:
                out.extend(textwrap.wrap(r.contradicts, width, initial_indent="    ", subsequent_indent="      "))
        out.append("")
    out.append("* the reading the reproduction uses today; x a reading the paper's text rules out (the sentence "
               "is quoted under it; never a candidate); holds: within the tolerance (a percentage ±3 points, "
               "a ratio or a rate or time ±10% of the paper's, a count exactly)")
    return "\n".join(wrapped for line in out for wrapped in (textwrap.wrap(line, width) if len(line) > width
                                                               else [line]))
