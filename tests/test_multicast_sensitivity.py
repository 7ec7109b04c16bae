"""001's open settings run as a sensitivity analysis (``dcnlab reproduce search 001``): the pre-registered setting is
the reproduction's (same tasks, same rows, same headlines), every other reading one setting at a time, and a headline
a reading flips is marked ``depends on`` that setting with the readings that flip it."""

from __future__ import annotations

from typing import Any

from dcnlab.report import search as ss
from dcnlab.reproduce.multicast import headlines
from dcnlab.reproduce.multicast import model as mm
from dcnlab.reproduce.multicast.search import Search001
from dcnlab.reproduce.multicast.sensitivity import flips
from dcnlab.results import open_settings as os_
from dcnlab.results import summary

PAPER_ALGOS = ("cmr4lms-fixed", "cmr4lms-dynamic", "mr4lms")


def fake(t: mm.Task, tfi: int = 1) -> dict[str, Any]:
    """A row as run_task writes it, without running anything."""
    return {"pattern": t.pattern, "algo": t.algo, "ppn": 4 if "ppn=4" in t.pattern else 1, "tfi_max": tfi,
            "tfi_avg": 1.0, "efi_max": 1 + t.draw, "efi_avg": 1.0, "efi_avg_all": 0.5, "trees": 600,
            "groups_in": 600, "refused": 0, "seconds": 0.1, "cpu_seconds": 0.1, "order": t.order,
            **({"draw": t.draw} if mm.is_random(t.pattern) else {})}


def test_the_preregistered_setting_is_the_texts_and_the_reproductions() -> None:
    assert mm.DEFAULT_SETTING == {o.name: o.candidates[0] for o in os_.searched("001")}
    assert os_.preregistered("001")["dynamic-root-candidates"] == "tn"
    assert all(o.contradiction(v) for o in os_.settings("001") for v in o.values if "switch" in v or v == "group")
    runs = ss.settings_to_run(Search001(), os_.searched("001"))
    assert runs[0] == mm.DEFAULT_SETTING and len(runs) == 1 + sum(len(o.candidates) - 1 for o in os_.searched("001"))
    assert all(sum(r[k] != runs[0][k] for k in r) == 1 for r in runs[1:])     # one setting at a time


def test_the_preregistered_setting_runs_the_reproductions_tasks_and_headlines() -> None:
    s = Search001()
    pre = dict(mm.DEFAULT_SETTING)
    ours = set(s.tasks(pre, 1, False)) - {t for t in s.tasks(pre, 1, False) if t.algo == "cmr4lms-dynamic/group"}
    assert ours == {t for t in mm.tasks_for(False) if t.algo in PAPER_ALGOS}
    results = {t: fake(t) for t in s.tasks(pre, 1, False)}
    repro = [results[t] for t in mm.tasks_for(False) if t.algo in PAPER_ALGOS]
    assert s.headlines(pre, 1, results) == headlines.multicast(repro, depends={})
    # a reading of MR4LMS's merge runs MR4LMS-same-color in MR4LMS's place, named as the headlines know it
    merge = dict(pre, **{"mr4lms-merge": "same-color/link"})
    assert mm.Task("64x32x16", "mr4lms-same-color") in s.tasks(merge, 1, False)
    assert mm.Task("64x32x16", "mr4lms") not in s.tasks(merge, 1, False)
    results.update({t: fake(t, 9) for t in s.tasks(merge, 1, False) if t not in results})
    heads = {h.statement: h for h in s.headlines(merge, 1, results)}
    assert heads["MR4LMS never merges with 1 ppn: max TFI 1 on every pattern (§4.3)"].model == 9
    # the larger random pattern is read as the headlines' random 1-ppn pattern, over the reproduction's draws
    size = dict(pre, **{"random-1ppn-groups": "5000"})
    assert mm.Task("random:5000", "cmr4lms-fixed", "xyz", mm.DRAWS) in s.tasks(size, 1, False)


def test_a_shuffled_join_order_is_judged_over_its_draws() -> None:
    s = Search001()
    shuffle = dict(mm.DEFAULT_SETTING, **{"join-order": "shuffle"})
    tasks = s.tasks(shuffle, 1, False)
    assert {t.draw for t in tasks if t.pattern == "64x32x16"} == set(range(1, mm.DRAWS + 1))
    results = {t: fake(t, t.draw if t.order == "shuffle" else 1) for t in tasks}
    h = {h.statement: h for h in s.headlines(shuffle, 1, results)}["C-MR4LMS-fixed max TFI 7 on 64×32×16 (1 ppn, Fig. 9)"]
    assert h.model == sum(range(1, mm.DRAWS + 1)) / mm.DRAWS and h.spread_of == f"{mm.DRAWS} draws"
    assert h.draws == {str(d): d for d in range(1, mm.DRAWS + 1)}


def test_the_average_efi_reading_reads_its_own_figure() -> None:
    rows = [{"pattern": p, "algo": a, "ppn": 1, "tfi_max": 1, "tfi_avg": 1.0, "efi_max": 1 if a != "mr4lms" else 2,
             "efi_avg": 1.0 if a != "mr4lms" else 2.0, "efi_avg_all": 1.0, "trees": 300, "groups_in": 300,
             "refused": 0, "seconds": 0.1} for p in ("512x64", "181x181", "100x327") for a in PAPER_ALGOS]
    s = "C-MR4LMS lower max and average EFI than MR4LMS on 2-D patterns (1 ppn, §4.2)"
    used = {h.statement: h for h in headlines.multicast(rows, depends={})}[s]
    every = {h.statement: h for h in headlines.multicast(rows, efi_average="all-links", depends={})}[s]
    assert (used.model, used.verdict) == (100.0, "reproduced") and every.model == 0.0


def test_a_reading_that_flips_a_verdict_marks_the_headline() -> None:
    pre = dict(mm.DEFAULT_SETTING)
    zyx = dict(pre, **{"join-order": "zyx"})
    stmt = "MR4LMS max TFI 168 on 100×50×26 (4 ppn, §4.3)"

    def cand(setting: dict[str, str], verdict: str, fig: float) -> dict[str, Any]:
        return {"setting": setting, "statements": [{"statement": stmt, "verdict": verdict, "median": fig,
                                                    "spread": None}]}
    table = {"preregistered": True, "chosen": pre,
             "candidates": [cand(pre, "deviates", 791), cand(zyx, "reproduced", 168)]}
    assert flips(table) == {stmt: [{"setting": "join-order", "value": "zyx", "verdict": "reproduced", "figure": 168,
                                    "spread": None, "base": "deviates"}]}
    assert flips(dict(table, preregistered=False)) == {}
    rows = [{"pattern": headlines.BIG_4, "algo": "mr4lms", "ppn": 4, "tfi_max": 791, "tfi_avg": 1.1,
             "efi_max": 1, "efi_avg": 1.0, "trees": 8000, "groups_in": 8900, "refused": 0, "seconds": 1.0}]
    h = {h.statement: h for h in headlines.multicast(rows, depends=flips(table))}[stmt]
    assert h.depends_on == "join-order" and "depends on join-order (zyx: reproduced, 168)" in h.reading
    assert h.model == 791           # the figure stays the pre-registered setting's, judged as one a reading decides
    assert h.verdict == summary.verdict(h.kind, h.paper, h.model, h.direction, h.reference, h.spread, h.spread_n,
                                        h.seeds, h.draws, decided=True)
