"""001 (C-MR4LMS on a fat-tree): readings of "MR4LMS keeps only 32 of 1,000 random groups".

001 §6.3 (report 001 §6.3): on the paper's fabric (64 CNs, 96 TNs of 40-port switches) with C = 32
colors and 4 processes per terminal, "in the 1,000 random groups pattern, MR4LMS is left with only 32
groups" (distinct trees after merging); C-MR4LMS always keeps at least 512. MR4LMS (001 §4, ref. [15])
is given only in outline; :class:`dcnlab.controller.multicast.baselines.MR4LMSLike` reconstructs it.
The readings (headline ``001-mr4lms-random-1000``, unit count, exact):

* ``mr4lms`` (today's): colors per link (per-port tables), a merged group placed again in any color;
* ``same-color``: no merging across colors (``merge="same-color"``);
* ``per-switch-table``: one table of C entries per switch (``scope="switch"``: two trees of one
  color may not cross one switch);
* ``strict``: both (``mr4lms-strict`` in :mod:`dcnlab.controller.multicast.planning`).

C-MR4LMS-fixed on the same pattern is listed as a reference (the paper: at least 512). The pattern is
``random:1000:seed=1:ppn=4``, the one ``dcnlab reproduce multicast`` runs; on 2 cores the variants
take 1.5-8 minutes each (the per-switch ones longest). ``quick`` runs 300 random groups instead (the
paper's 32 is then not the figure to compare with: with C = 32 the count to look at is whether the
strict readings fall to about one tree per color while the default keeps hundreds).
"""

from __future__ import annotations

import os
import time
from functools import lru_cache

from dcnlab.experiments.pool import run_all
from dcnlab.experiments.readings import Reading

SPEC = "midplane:"
COLORS = 32
PATTERN = "random:1000:seed=1:ppn=4"
PAPER = 32.0
VARIANTS = {"mr4lms": ("any-color", "link", "colors per link (per-port tables), merged groups re-placed in any color"),
            "same-color": ("same-color", "link", "no merging across colors: a merged group keeps its color"),
            "per-switch-table": ("any-color", "switch", "one table of C entries per switch: one color per switch"),
            "strict": ("same-color", "switch", "per-switch tables and no merging across colors")}


QUICK_PATTERN = "random:300:seed=1:ppn=4"


def _run(name: str, pattern: str = PATTERN, spec: str = SPEC, colors: int = COLORS) -> tuple[str, int, int, float]:
    """Distinct trees (groups kept) and max TFI of one variant on the pattern, and its time."""
    from dcnlab.controller.multicast.baselines import MR4LMSLike
    from dcnlab.controller.multicast.cmr4lms import CMR4LMS
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.planning import mapping_for
    from dcnlab.controller.multicast.workload import build_pattern
    from dcnlab.topos.spec import parse_spec

    h = hierarchy_for(parse_spec(spec))
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
    return name, len(trees), tfi, time.perf_counter() - t0


@lru_cache(maxsize=4)
def _runs(quick: bool, workers: int) -> tuple[dict[str, tuple[int, int, float]], float]:
    names = (*VARIANTS, "cmr4lms-fixed")
    pattern = QUICK_PATTERN if quick else PATTERN
    t0 = time.perf_counter()
    res = run_all(_run, [(n, pattern) for n in names], workers)
    return {n: (trees, tfi, sec) for n, trees, tfi, sec in res}, time.perf_counter() - t0


def readings(quick: bool, workers: int) -> list[Reading]:
    workers = max(1, workers or os.cpu_count() or 1)
    runs, wall = _runs(quick, workers)
    setting = f"{QUICK_PATTERN if quick else PATTERN} on {SPEC} (40,448 nodes), C={COLORS}; {wall:.0f} s wall"
    out = []
    for name, (_, _, desc) in VARIANTS.items():
        trees, tfi, sec = runs[name]
        out.append(Reading("001-mr4lms-random-1000", name, f"{desc}; max TFI {tfi}", float(trees), PAPER, "count",
                           name == "mr4lms", setting, sec))
    trees, tfi, sec = runs["cmr4lms-fixed"]
    out.append(Reading("001-mr4lms-random-1000", "c-mr4lms-fixed (reference)",
                       f"C-MR4LMS-fixed on the same pattern (paper: at least 512); max TFI {tfi}", float(trees), 512.0,
                       "count", False, setting, sec))
    return out
