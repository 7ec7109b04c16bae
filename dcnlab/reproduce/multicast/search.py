"""The sensitivity run of 001's open settings (C-MR4LMS, ``dcnlab reproduce search 001``, :mod:`dcnlab.report.search`
with a ``preregistered`` searcher).

Every open setting of 001 is pre-registered from the paper's text alone (:mod:`dcnlab.results.open_settings`, each
with its sentence and its argument): the grids' lines join x, then y, then z; the random 1-ppn patterns have
1,000 groups; MR4LMS's merged group is placed again in any color, with per-link entries; the average EFI is taken
over the links that carry a group. The run is that setting, then every other reading the text admits, **one
setting at a time** with the rest pre-registered: the join orders ``zyx`` (``yx`` on a 2-D grid) and ``shuffle``;
2,000 and 5,000 random groups; MR4LMS's merge keeping the color (``mr4lms-same-color``); the average over every
switch-to-switch link. Nothing is chosen by how many statements hold: the verdicts and counts are the
pre-registered setting's, and a statement whose verdict changes under a reading depends on that setting
(:func:`dcnlab.reproduce.multicast.sensitivity.flips`; the headlines carry it,
:func:`dcnlab.reproduce.multicast.headlines.multicast`).

Each setting is judged as ``dcnlab reproduce multicast`` judges it: the tasks of the full reproduction's paper
algorithms (C-MR4LMS fixed and dynamic, MR4LMS-like) on every pattern, the random patterns (and a shuffled join
order) over the reproduction's draws, seeds 1..:data:`~dcnlab.reproduce.multicast.model.DRAWS`, and 001's
headlines over those draws (:func:`dcnlab.reproduce.multicast.headlines.over_draws`: the mean with its standard
error, a claim failing on any draw deviates). So the pre-registered setting's figures and verdicts are the
full reproduction's, and the table is the full run a quick run is compared with. A task no setting changes runs
once for all.

Besides, the bound of :data:`dcnlab.results.open_settings.BOUNDS`: the dynamic variant's max TFI on 64×32×16 and
32×32×32 under the paper's root candidates (:func:`tfi_bound`), against our ``group`` extension's
(``cmr4lms-dynamic/group``), which §4.3.1 rules out.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from dcnlab.reproduce.multicast import headlines as mh
from dcnlab.reproduce.multicast import model as mm
from dcnlab.results.summary import Headline

GRIDS_1 = ("512x64", "181x181", "100x327", "64x32x16", "32x32x32", "25x50x26")
GRIDS_4 = ("256x32x16:ppn=4", "128x32x32:ppn=4", "100x50x26:ppn=4")
ALGOS = ("cmr4lms-fixed", "cmr4lms-dynamic", "mr4lms")
MERGES = {"any-color/link": "mr4lms", "same-color/link": "mr4lms-same-color"}
"""The readings of ``mr4lms-merge`` the text admits -> the algorithm that runs in MR4LMS's place."""
BOUND_PATTERNS = ("64x32x16", "32x32x32")


class Search001:
    paper = "001"
    preregistered = True
    """The settings are the text's (:mod:`dcnlab.results.open_settings`); the other readings are a sensitivity
    analysis, one setting at a time (:func:`dcnlab.report.search.one_at_a_time`)."""

    def is_random(self, setting: Mapping[str, str]) -> bool:
        return False    # the draws are inside each setting's judgement (the reproduction's, over its draws)

    def _runs(self, setting: Mapping[str, str]) -> dict[int, list[tuple[str, str, str, int]]]:
        """Draw -> (pattern as the headlines know it, algorithm as they know it, task pattern, order and draw) of
        every run of ``setting``."""
        order = setting["join-order"]
        r1 = f"random:{setting['random-1ppn-groups']}"
        out: dict[int, list[tuple[str, str, str, int]]] = {}
        for d in range(1, mm.DRAWS + 1):
            runs: list[tuple[str, str, str, int]] = [(p, p, order, d if order == "shuffle" else 1)
                                                     for p in GRIDS_1 + GRIDS_4]
            runs += [(mh.RANDOM_1, r1, mm.JOIN_ORDER, d), (mh.RANDOM_4, mm.RANDOM_4PPN, mm.JOIN_ORDER, d)]
            out[d] = runs
        return out

    def _tasks(self, setting: Mapping[str, str]) -> dict[int, list[tuple[str, str, mm.Task]]]:
        """Draw -> (pattern name, algorithm name, task) of ``setting``."""
        merge = MERGES[setting["mr4lms-merge"]]
        return {d: [(name, a, mm.Task(p, merge if a == "mr4lms" else a, o, dd))
                    for name, p, o, dd in runs for a in ALGOS]
                for d, runs in self._runs(setting).items()}

    def tasks(self, setting: Mapping[str, str], draw: int, quick: bool) -> list[Hashable]:
        out: list[Hashable] = [t for runs in self._tasks(setting).values() for _, _, t in runs]
        if setting["join-order"] == mm.JOIN_ORDER:      # the bound's reading, once
            out += [mm.Task(p, "cmr4lms-dynamic/group") for p in BOUND_PATTERNS]
        return list(dict.fromkeys(out))

    def run(self, task: Hashable) -> Any:
        assert isinstance(task, mm.Task)
        row = mm.run_task(task)
        row.pop("layers", None)
        return row

    def seconds(self, task: Hashable) -> float:
        assert isinstance(task, mm.Task)
        if task.algo.startswith("mr4lms"):
            return 5.0 if "ppn=4" in task.pattern else 1.0
        return 1.5 if "ppn=4" in task.pattern else 0.4

    def rows(self, setting: Mapping[str, str], results: Mapping[Hashable, Any]) -> dict[int, list[dict[str, Any]]]:
        """Draw -> the rows of ``setting`` as ``reproduce multicast`` writes them (each pattern and algorithm by the
        name 001's headlines know it)."""
        out: dict[int, list[dict[str, Any]]] = {}
        for d, runs in self._tasks(setting).items():
            out[d] = [dict(results[t], pattern=name, algo=a) for name, a, t in runs if results.get(t) is not None]
        return out

    def headlines(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any]) -> list[Headline]:
        per = self.rows(setting, results)
        fixed = [r for r in per[1] if not mm.is_random(r["pattern"])] if setting["join-order"] != "shuffle" else []
        heads = mh.over_draws(per, fixed, efi_average=setting["efi-average"])
        return mh.mark(heads, {})

    def extra(self, results: Mapping[Hashable, Any], quick: bool) -> dict[str, Any]:
        from dcnlab.results.open_settings import BOUNDS

        b = next(x for x in BOUNDS if x.paper == "001")
        tn, group, ours, reading = [], [], [], []
        for p in BOUND_PATTERNS:
            tn.append(tfi_bound(p, "tn"))
            group.append(tfi_bound(p, "group"))
            r = results.get(mm.Task(p, "cmr4lms-dynamic"))
            g = results.get(mm.Task(p, "cmr4lms-dynamic/group"))
            ours.append(r["tfi_max"] if r else None)
            reading.append(g["tfi_max"] if g else None)

        def both(xs: list[Any]) -> str:
            return " and ".join("n/a" if x is None else str(x) for x in xs)

        return {"bounds": [{"statement": b.statement, "figure": b.figure, "rule": b.rule, "reading": b.reading,
                            "how": b.how, "patterns": list(BOUND_PATTERNS), "bound": both(tn), "ours": both(ours),
                            "reading_bound": both(group), "reading_figure": both(reading)}]}


def tfi_bound(pattern: str, scope: str = "tn", spec: str = mm.SPEC, colors: int = mm.COLORS) -> int:
    """:func:`dcnlab.controller.multicast.bounds.tfi_bound` on the reproduction's fabric and colors."""
    from dcnlab.controller.multicast.bounds import tfi_bound as bound

    return bound(pattern, scope, spec, colors)
