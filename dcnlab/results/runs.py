"""A BMv2 experiment run several times: each run's headlines combined into one set, each BMv2 figure the mean over
the runs with its standard error, judged again by the one rule (:func:`dcnlab.results.summary.verdict`).

One BMv2 run is one draw of the machine's timing: over ten quick runs 002's FIFO share was reproduced in 3, its
BECN ratio in 1, its tenants' worst-phase ratios ranged 0.77-1.24. ``dcnlab reproduce all`` therefore runs each
BMv2 experiment :data:`BMV2_RUNS` times in a full run (``--bmv2-runs N`` in any mode), and :func:`combine_runs`
turns the runs' headlines into one: a headline whose BMv2 figure is a number in two runs or more gets

* ``emulation``: the mean over the runs, ``emulation_spread``: its standard error over the runs
  (:func:`dcnlab.results.spread.se`), ``emulation_spread_n``: the number of runs (its 95% interval spans Student's t
  with n - 1 degrees of freedom, :func:`dcnlab.results.summary.quantile`: 4.30 for 3 runs);
* ``emulation_runs``: each run's figure, by run (``"1"``, ``"2"``, ...);
* its BMv2 verdict judged again with that spread, and the headline's verdict combined again: a figure whose runs
  straddle an edge of its tolerance is ``unstable``.

A spread a reproduction gives within one run (000's waiting time: the standard error over its jobs) is replaced
by the runs' spread, and the headline's reading says what the figure and its spread are over. One run leaves the
headlines as they are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from dcnlab.results.spread import se
from dcnlab.results.summary import Headline

__all__ = ["BMV2_RUNS", "combine_runs", "run_dir", "runs_text"]

BMV2_RUNS = 3
"""The runs of each BMv2 experiment in a full run (a quick run: 1, unless ``--bmv2-runs`` asks for more)."""


def runs_text(n: int) -> str:
    """``3 BMv2 runs`` (what a combined BMv2 figure and its spread are over)."""
    return f"{n} BMv2 run{'s' if n != 1 else ''}"


def run_dir(i: int) -> str:
    """The directory of run ``i`` (from 1) inside a part's directory: run 1 writes into the part's directory
    itself (``.``), run ``i`` > 1 into ``bmv2-run-<i>``."""
    if i < 1:
        raise ValueError(f"run {i}; runs are numbered from 1")
    return "." if i == 1 else f"bmv2-run-{i}"


def _figure(h: Headline) -> float | None:
    x = h.emulation
    return float(x) if x is not None and not isinstance(x, bool) and math.isfinite(float(x)) else None


def _keyed(heads: Sequence[Headline]) -> dict[tuple[str, str, int], Headline]:
    """Headlines by (paper, statement, occurrence): the same statement twice is matched in order."""
    seen: dict[tuple[str, str], int] = {}
    out = {}
    for h in heads:
        k = (h.seed, h.statement)
        seen[k] = seen.get(k, 0) + 1
        out[(h.seed, h.statement, seen[k])] = h
    return out


def _fig(x: float) -> str:
    return f"{x:.4g}"


def combine_runs(runs: Mapping[str, Sequence[Headline]]) -> list[Headline]:
    """The headlines of the first run of ``runs`` (run -> that run's headlines of the same statements, in the order
    the runs ran), each whose BMv2 figure is a number in two runs or more combined over them (module doc): the
    mean, its standard error over the runs, their number and each run's figure, the BMv2 verdict and the headline's
    judged again. A headline with its BMv2 figure in one run only takes that run's headline. One run: the headlines
    as they are."""
    labels = list(runs)
    if not labels:
        return []
    if len(labels) == 1:
        return list(runs[labels[0]])
    by = [_keyed(runs[r]) for r in labels]
    out = []
    for key, first in by[0].items():
        figs = {r: f for r, b in zip(labels, by) if key in b and (f := _figure(b[key])) is not None}
        if not figs:
            out.append(first)
            continue
        base = first if _figure(first) is not None else next(b[key] for r, b in zip(labels, by) if r in figs)
        if len(figs) < 2:
            out.append(base)
            continue
        vals = list(figs.values())
        mean = sum(vals) / len(vals)
        s = se(vals)
        within = ("" if base.emulation_spread is None else
                  f"; it replaces the standard error within one run ({_fig(base.emulation_spread)}"
                  + (f", over {base.emulation_spread_n}" if base.emulation_spread_n else "") + ")")
        said = (f"BMv2: the mean over {runs_text(len(vals))} ("
                + ", ".join(f"run {r}: {_fig(x)}" for r, x in figs.items())
                + f"), standard error {_fig(s or 0.0)} over the runs{within}")
        out.append(replace(base, emulation=mean, emulation_spread=s or 0.0,
                           emulation_spread_n=len(vals), emulation_runs=dict(figs), emulation_verdict=None,
                           verdict="", basis=None, difference=None,
                           reading=f"{base.reading}; {said}" if base.reading else said))
    return out
