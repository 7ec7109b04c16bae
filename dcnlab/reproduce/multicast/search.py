"""The search of 001's open settings (C-MR4LMS, :mod:`dcnlab.report.search`).

Searched (:mod:`dcnlab.results.open_settings`): the join order of the grid patterns' lines
(``xyz``, ``zyx`` — ``yx`` on a 2-D grid —, ``shuffle``) and the size of the random 1-ppn patterns
(1,000, 2,000, 5,000 groups). Every setting is random (the random patterns are draws; a shuffled
order too), so each runs over the draws ``1..D``: draw ``d`` uses seed ``d`` for the random patterns
and for a shuffled order. The tasks are those of ``dcnlab reproduce all --quick``'s multicast part
(every pattern with C-MR4LMS fixed and dynamic and MR4LMS-like); a task no setting changes (a grid
pattern in the order ``xyz``) runs once for all.

The statements are 001's headlines (:func:`dcnlab.reproduce.multicast.headlines.multicast`), each judged on
its median over the draws. Besides, the bound of :data:`dcnlab.results.open_settings.BOUNDS`:
the dynamic variant's max TFI on 64×32×16 and 32×32×32 under the paper's root candidates
(:func:`tfi_bound`), against the ``group`` reading's (``cmr4lms-dynamic/group``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from dcnlab.reproduce.multicast import model as mm
from dcnlab.results.summary import Headline

GRIDS_1 = ("512x64", "181x181", "100x327", "64x32x16", "32x32x32", "25x50x26")
GRIDS_4 = ("256x32x16:ppn=4", "128x32x32:ppn=4", "100x50x26:ppn=4")
RANDOM_4_GROUPS = 1000
"""The 4-ppn random pattern's size, the one the paper names ('1,000 random groups')."""
ALGOS = ("cmr4lms-fixed", "cmr4lms-dynamic", "mr4lms")
BOUND_PATTERNS = ("64x32x16", "32x32x32")


def random_patterns(groups: str, draw: int) -> tuple[str, str]:
    """The random 1-ppn and 4-ppn patterns of draw ``draw``."""
    return f"random:{groups}:seed={draw}", f"random:{RANDOM_4_GROUPS}:seed={draw}:ppn=4"


class Search001:
    paper = "001"

    def is_random(self, setting: Mapping[str, str]) -> bool:
        return True         # the random patterns are draws whatever the setting

    def _runs(self, setting: Mapping[str, str], draw: int) -> list[tuple[str, str, int, str]]:
        """(pattern, order, draw, name): what runs, and the name 001's headlines know the pattern by."""
        from dcnlab.reproduce.multicast import headlines

        order = setting["join-order"]
        out = [(p, order, draw if order == "shuffle" else 1, p) for p in GRIDS_1 + GRIDS_4]
        r1, r4 = random_patterns(setting["random-1ppn-groups"], draw)
        return out + [(r1, "", 1, headlines.RANDOM_1), (r4, "", 1, headlines.RANDOM_4)]

    def tasks(self, setting: Mapping[str, str], draw: int, quick: bool) -> list[Hashable]:
        out: list[Hashable] = [mm.Task(p, a, o, d) for p, o, d, _ in self._runs(setting, draw) for a in ALGOS]
        if setting["join-order"] == "xyz":      # the bound's reading, once
            out += [mm.Task(p, "cmr4lms-dynamic/group", "xyz") for p in BOUND_PATTERNS]
        return out

    def run(self, task: Hashable) -> Any:
        assert isinstance(task, mm.Task)
        row = mm.run_task(task)
        row.pop("layers", None)
        return row

    def seconds(self, task: Hashable) -> float:
        assert isinstance(task, mm.Task)
        if task.algo == "mr4lms":
            return 40.0 if "ppn=4" in task.pattern else 5.0
        return 1.5 if "ppn=4" in task.pattern else 0.4

    def headlines(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any]) -> list[Headline]:
        from dcnlab.reproduce.multicast import headlines

        rows = []
        for p, o, d, name in self._runs(setting, draw):
            for a in ALGOS:
                row = results.get(mm.Task(p, a, o, d))
                if row is not None:
                    rows.append(dict(row, pattern=name))
        return headlines.multicast(rows)

    def extra(self, results: Mapping[Hashable, Any], quick: bool) -> dict[str, Any]:
        from dcnlab.results.open_settings import BOUNDS

        b = next(x for x in BOUNDS if x.paper == "001")
        tn, group, ours, reading = [], [], [], []
        for p in BOUND_PATTERNS:
            tn.append(tfi_bound(p, "tn"))
            group.append(tfi_bound(p, "group"))
            r = results.get(mm.Task(p, "cmr4lms-dynamic", "xyz"))
            g = results.get(mm.Task(p, "cmr4lms-dynamic/group", "xyz"))
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
