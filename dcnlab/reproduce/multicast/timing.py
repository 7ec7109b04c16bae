"""001's speed headlines timed alone: "C-MR4LMS up to 94% faster than MR4LMS" and "C-MR4LMS computes 100×50×26
(4 ppn) in under 35 s" (Chen et al., §4.3 and Fig. 10(f)) are CPU times, and one CPU time is one draw of the
machine: a task timed in the process pool beside another worker is slowed by the caches it shares. So the three
algorithms are timed again once every pool is shut (:meth:`~dcnlab.reproduce.protocol.Reproduction.measure_alone`),
on the paper's pattern, :data:`REPEATS` times in turns (MR4LMS-like, C-MR4LMS-fixed, C-MR4LMS-dynamic; the workload
is built once and not timed), and each figure is the mean over the repeats with its standard error, so a speed-up
within the noise is judged ``flat`` or ``unstable``, not ``trend``. Written to ``timing.json``; the headlines read it
(:func:`dcnlab.reproduce.multicast.headlines.multicast`), and where it is missing (a sensitivity run) they read the
pool's single figures."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PATTERN = "100x50x26:ppn=4"
"""The paper's pattern of Fig. 10(f) (the headlines' ``BIG_4``)."""
ALGOS = ("mr4lms", "cmr4lms-fixed", "cmr4lms-dynamic")
REPEATS = {"full": 5, "quick": 3}
"""Timings of each algorithm: 5 in a full run, 3 in a quick one (Student's t 2.78 and 4.30)."""
FILE = "timing.json"


def measure(quick: bool, say: Callable[[str], None] | None = None, repeats: int | None = None) -> dict[str, Any]:
    """CPU seconds of each of :data:`ALGOS` on :data:`PATTERN`, ``repeats`` times in turns, and per repeat the
    speed-up figure (``100 (1 - slower C-MR4LMS / MR4LMS)``) and the slower C-MR4LMS's seconds."""
    from dcnlab.controller.multicast.planning import gc_paused, plan_metrics
    from dcnlab.reproduce.multicast.model import COLORS, _workload

    n = repeats or REPEATS["quick" if quick else "full"]
    with gc_paused():
        h, wl = _workload(PATTERN)
    seconds: dict[str, list[float]] = {a: [] for a in ALGOS}
    for i in range(n):
        for a in ALGOS:
            t0 = time.process_time()
            plan_metrics(h, wl, a, COLORS)
            seconds[a].append(time.process_time() - t0)
        if say is not None:
            say(f"timing {PATTERN}: repeat {i + 1} of {n}")
    slow = [max(f, d) for f, d in zip(seconds["cmr4lms-fixed"], seconds["cmr4lms-dynamic"])]
    speed = [100 * (1 - s / m) for s, m in zip(slow, seconds["mr4lms"])]
    return {"pattern": PATTERN, "repeats": n, "seconds": seconds, "slower_cmr4lms": slow, "speed_percent": speed}


def write(out: Path, data: dict[str, Any]) -> Path:
    from dcnlab.results.outputs import writing

    with writing(out, "--out"):
        (out / FILE).write_text(json.dumps(data, indent=1))
    return out / FILE


def load(out: Path | None) -> dict[str, Any] | None:
    """``out/timing.json`` when it exists and parses, else None."""
    if out is None:
        return None
    try:
        data = json.loads((out / FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("speed_percent") else None


def figures(data: dict[str, Any]) -> dict[str, tuple[float, float | None, str]]:
    """``speed`` and ``fast`` as (mean, standard error, what it is over) from :func:`measure`'s data."""
    from dcnlab.results.spread import se

    n = int(data["repeats"])
    over = f"{n} timings"
    sp, sl = [float(x) for x in data["speed_percent"]], [float(x) for x in data["slower_cmr4lms"]]
    return {"speed": (sum(sp) / len(sp), se(sp), over), "fast": (sum(sl) / len(sl), se(sl), over)}
