"""Readings of the headlines that deviate (issue 18 §2): every reading the papers' text allows, measured.

Where a paper's figure is not reproduced, the text usually leaves a choice open (which tree the
baseline builds, how an average is taken, what is random). Each module here implements the candidate
readings of one paper as named variants of the mechanism code (the variants themselves live in
``dcnlab/controller/<mechanism>/``, each documented there) and measures each at the paper's setting:

* :mod:`.bcube_shuffle_003` — 003's Steiner baseline on BCube(6,k) and BCube(8,5), the averaging
  of the BCube(8,5) sweep (Fig. 5), and delta uniform on [0, 1] (Fig. 6);
* :mod:`.bcube_incast_000` — 000's M2 vs IRS across sender counts (and across network sizes);
* :mod:`.fattree_multicast_001` — 001's MR4LMS keeping 32 of 1,000 random groups;
* :mod:`.ib_cc_002` — 002's BECN counts 790/480/320 and their sampling window.

Each module exposes ``readings(quick: bool, workers: int) -> list[Reading]``; :func:`format_table`
prints any list of them in at most 100 columns. ``quick`` uses fewer rounds and points (seconds to a
minute each); the full settings are the papers' (or, where the paper gives no count, stated in the
module). The verdict rule is the report's: a percentage within ±3 points, a ratio within 10%, a count
exact.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dcnlab.experiments.summary import tolerance_text, within

UNITS = ("%", "ratio", "count")


@dataclass(frozen=True)
class Reading:
    """One reading of one headline, measured at the paper's setting.

    ``unit``: ``"%"`` (a percentage; ±3 points), ``"ratio"`` (within 10%), ``"count"`` (exact).
    ``default``: the reading the reproduction uses today. ``setting``: what was run (rounds, points).
    ``seconds``: wall time of the measurement (0 when it shares a run with other readings)."""

    headline: str
    reading: str
    description: str
    value: float
    paper: float
    unit: str
    default: bool = False
    setting: str = ""
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"reading {self.reading}: unit {self.unit!r}; valid: {', '.join(UNITS)}")

    @property
    def kind(self) -> str:
        return {"%": "percent", "ratio": "ratio", "count": "count"}[self.unit]

    @property
    def tolerance(self) -> str:
        return tolerance_text(self.kind)

    @property
    def holds(self) -> bool:
        """Whether the value reproduces the paper's by the report's rule (:func:`~dcnlab.experiments.summary.within`)."""
        return not math.isnan(self.value) and within(self.kind, self.paper, self.value)


def _fmt(x: float, unit: str) -> str:
    if math.isnan(x):
        return "n/a"
    if unit == "count":
        return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"
    if unit == "ratio":
        return f"{x:.3f}"
    return f"{x:.2f}"


def format_table(readings: Sequence[Reading], width: int = 100) -> str:
    """A readings table, one block per headline, no line wider than ``width`` (at least 72) columns.

    Columns: reading, value, paper, unit, tolerance, verdict (``yes``: within the rule; the default
    reading is marked ``*``); the description follows on an indented line, wrapped."""
    width = max(width, 72)
    out: list[str] = []
    heads: dict[str, list[Reading]] = {}
    for r in readings:
        heads.setdefault(r.headline, []).append(r)
    name_w = min(max([len(r.reading) + 2 for r in readings] + [9]), width - 46)
    header = (f"{'reading':<{name_w}} {'ours':>10} {'paper':>10} {'unit':<5} {'tolerance':<9} {'holds':<5}")
    for head, rows in heads.items():
        setting = next((r.setting for r in rows if r.setting), "")
        out.append(textwrap.shorten(f"== {head}" + (f" ({setting})" if setting else ""), width, placeholder="…"))
        out.append(header)
        for r in rows:
            name = (r.reading + (" *" if r.default else ""))[:name_w]
            secs = f" {r.seconds:.0f}s" if r.seconds else ""
            line = (f"{name:<{name_w}} {_fmt(r.value, r.unit):>10} {_fmt(r.paper, r.unit):>10} {r.unit:<5} "
                    f"{r.tolerance:<9} {'yes' if r.holds else 'no':<5}{secs}")
            out.append(line[:width])
            if r.description:
                out.extend(textwrap.wrap(r.description, width, initial_indent="    ", subsequent_indent="    "))
        out.append("")
    out.append("* the reading the reproduction uses today; holds: within ±3 pts (%), ±10% (ratio), exact (count)")
    return "\n".join(line[:width] for line in out)


def modules() -> dict[str, Callable[[bool, int], list[Reading]]]:
    """The per-paper ``readings`` functions, by paper id."""
    import importlib

    names = {"000": "bcube_incast_000", "001": "fattree_multicast_001", "002": "ib_cc_002", "003": "bcube_shuffle_003"}
    return {paper: importlib.import_module(f"{__name__}.{mod}").readings for paper, mod in names.items()}


def all_readings(quick: bool, workers: int) -> list[Reading]:
    """Every paper's readings, one paper after the other (each uses up to ``workers`` processes)."""
    out: list[Reading] = []
    for fn in modules().values():
        out.extend(fn(quick, workers))
    return out
