"""C-MR4LMS (Chen et al., 001): readings of "MR4LMS keeps only 32 of 1,000 random groups".

§4.3: on the paper's fabric (64 CNs, 96 TNs of 40-port switches) with C = 32
colors and 4 processes per terminal, "in the 1,000 random groups pattern, MR4LMS is left with only 32
groups" (distinct trees after merging); C-MR4LMS always keeps at least 512. MR4LMS (the paper's ref. [15])
is given only in outline; :class:`dcnlab.controller.multicast.baselines.MR4LMSLike` reconstructs it.
The readings (headline ``001-mr4lms-random-1000``, or ``-100`` in a quick run: the groups that ran; unit
groups, a count, exact):

* ``mr4lms`` (pre-registered, open setting ``mr4lms-merge`` = ``any-color/link``): colors per link (per-port
  tables), a merged group placed again in any color;
* ``same-color``: no merging across colors (``merge="same-color"``; the sensitivity reading);
* ``per-switch-table``: one table of C entries per switch (``scope="switch"``: two trees of one
  color may not cross one switch); contradicts §1 (MR4LMS shares an entry between groups that cross no
  common link), measured and shown, never a reading of the paper;
* ``strict``: both (``mr4lms-strict`` in :mod:`dcnlab.controller.multicast.planning`); contradicts §1 too.

C-MR4LMS-fixed on the same pattern is listed as a reference (the paper: at least 512). The pattern is
``random:1000:seed=1:ppn=4``, the one ``dcnlab reproduce multicast`` runs (its first draw); the pre-registered
reading runs every draw of the headline (seeds 1-5) and shows their mean, so the starred reading is the headline's
figure; the other variants run draw 1. On 2 cores the variants
take 1.5-8 minutes each (the per-switch ones longest). ``quick`` runs 100 random groups instead (the per-switch
readings take 20 s on an idle core there, against 65 s with 300 groups: this keeps ``reproduce all --quick``
within 3 minutes). The paper's 32 is then not the figure to compare with.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache

from dcnlab.results.readings import Reading
from dcnlab.sweep.pool import run_all

SPEC = "midplane:"
COLORS = 32
DRAWS = 5
"""The draws of the random pattern in the full run (:data:`dcnlab.reproduce.multicast.model.DRAWS`; a test checks
they are the same)."""
GROUPS, QUICK_GROUPS = 1000, 100
"""Random groups of the paper's pattern, and of ``quick``."""
PATTERN = f"random:{GROUPS}:seed=1:ppn=4"
QUICK_PATTERN = f"random:{QUICK_GROUPS}:seed=1:ppn=4"
PAPER = 32.0
VARIANTS = {"mr4lms": ("any-color", "link", "colors per link (per-port tables), merged groups re-placed in any color"),
            "same-color": ("same-color", "link", "no merging across colors: a merged group keeps its color"),
            "per-switch-table": ("any-color", "switch", "one table of C entries per switch: one color per switch"),
            "strict": ("same-color", "switch", "per-switch tables and no merging across colors")}


def _run(name: str, pattern: str = PATTERN, spec: str = SPEC, colors: int = COLORS) -> tuple[str, int, int, float, int, int]:
    """Distinct trees (groups kept), max TFI and time of one variant on the pattern, with what ran: the groups
    of the workload built and the fabric's nodes."""
    from dcnlab.controller.multicast.baselines import MR4LMSLike
    from dcnlab.controller.multicast.cmr4lms import CMR4LMS
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.planning import mapping_for
    from dcnlab.controller.multicast.workload import build_pattern
    from dcnlab.topos.spec import parse_spec

    fabric = parse_spec(spec)
    h = hierarchy_for(fabric)
    wl = build_pattern(h, pattern, mapping_for(h, colors))
    t0 = time.perf_counter()
    if name == "cmr4lms-fixed":
        planner: CMR4LMS | MR4LMSLike = CMR4LMS(h, colors, "fixed", None, track_entries=False, record_ops=False)
    else:
        merge, scope, _ = VARIANTS[name]
        planner = MR4LMSLike(h, colors, merge=merge, scope=scope)
    for g in wl.groups:
        planner.add_group(g.mgid, g.members)
    trees = planner.trees()
    tfi = max((len(t.groups) for t in trees), default=0)
    return name, len(trees), tfi, time.perf_counter() - t0, len(wl.groups), sum(fabric.counts().values())


@lru_cache(maxsize=4)
def _runs(pattern: str, spec: str, colors: int, workers: int) -> tuple[dict[str, tuple[int, int, float]], float,
                                                                      int, int]:
    """Every variant on ``pattern``: (trees, max TFI, seconds) by name, the wall time, the groups built and the
    fabric's nodes."""
    names = (*VARIANTS, "cmr4lms-fixed")
    t0 = time.perf_counter()
    res = run_all(_run, [(n, pattern, spec, colors) for n in names], workers)
    built = {(groups, nodes) for *_, groups, nodes in res}
    if len(built) != 1:
        raise RuntimeError(f"001 readings: the variants ran on different workloads {sorted(built)}")
    (groups, nodes), = built
    return ({n: (trees, tfi, sec) for n, trees, tfi, sec, _, _ in res}, time.perf_counter() - t0, groups, nodes)


def _draws_of(pattern: str, draws: int) -> list[str]:
    """``pattern`` (which names ``seed=1``) at seeds ``1..draws``: the headline's draws
    (:func:`dcnlab.reproduce.multicast.model.with_draws`)."""
    return [pattern.replace(":seed=1:", f":seed={d}:") for d in range(1, draws + 1)]


@lru_cache(maxsize=4)
def _starred(pattern: str, spec: str, colors: int, draws: int, workers: int) -> tuple[float, float, float, float]:
    """The pre-registered reading (``mr4lms``) over the headline's draws of ``pattern``: (mean trees, their standard
    error, mean max TFI, seconds), so that the starred reading is the headline's figure, the mean over its draws."""
    from dcnlab.results.spread import se

    res = run_all(_run, [("mr4lms", p, spec, colors) for p in _draws_of(pattern, draws)], workers)
    trees = [float(r[1]) for r in res]
    return (sum(trees) / len(trees), se(trees) or 0.0, sum(float(r[2]) for r in res) / len(res),
            sum(float(r[3]) for r in res))


def headline(groups: int) -> str:
    """The block's name for a run of ``groups`` random groups (the paper's: ``001-mr4lms-random-1000``)."""
    return f"001-mr4lms-random-{groups}"


def readings(quick: bool, workers: int) -> list[Reading]:
    from dcnlab.results.open_settings import settings

    merge = next(o for o in settings("001") if o.name == "mr4lms-merge")
    ruled = {"per-switch-table": merge.contradiction("any-color/switch") or "",
             "strict": merge.contradiction("same-color/switch") or ""}
    workers = max(1, workers or os.cpu_count() or 1)
    pattern = QUICK_PATTERN if quick else PATTERN
    runs, wall, groups, nodes = _runs(pattern, SPEC, COLORS, workers)
    head = headline(groups)
    setting = (f"{pattern} on {SPEC} ({nodes:,} nodes), C={COLORS}"
               + ("" if groups == GROUPS else f"; {groups:,} groups, not the paper's {GROUPS:,}: its figures are "
                                              f"not this run's") + f"; {wall:.0f} s wall")
    out = []
    draws = 1 if quick else DRAWS
    for name, (_, _, desc) in VARIANTS.items():
        trees, tfi, sec = runs[name]
        value, text = float(trees), f"{desc}; max TFI {tfi}"
        if name == "mr4lms" and draws > 1:      # the headline's figure: the mean over its draws
            value, spread, tfi_mean, sec = _starred(pattern, SPEC, COLORS, draws, workers)
            text = (f"{desc}; mean over the headline's {draws} draws (seeds 1-{draws}) ± {spread:.3g} (standard error), "
                    f"max TFI {tfi_mean:.4g} on average")
        elif draws > 1:
            text += "; draw 1 (seed 1) only"
        out.append(Reading(head, name, text, value, PAPER, "groups", name == "mr4lms", setting, sec, kind="count",
                           contradicts=ruled.get(name, "")))
    trees, tfi, sec = runs["cmr4lms-fixed"]
    out.append(Reading(head, "c-mr4lms-fixed (reference)",
                       f"C-MR4LMS-fixed on the same pattern (paper: at least 512); max TFI {tfi}", float(trees), 512.0,
                       "groups", False, setting, sec, kind="count"))
    return out
