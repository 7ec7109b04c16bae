"""C-MR4LMS (Chen et al., 001) as one reproduction of ``dcnlab reproduce all``
(:class:`dcnlab.reproduce.protocol.Reproduction`): one task per (pattern, algorithm, draw), the outputs of
``reproduce multicast``, its BMv2 experiment, its readings and its search."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.protocol import Emulation, Finished, Reproduction, Run, Searcher, Task
from dcnlab.results import papers

QUICK_MC_ALGOS = ("cmr4lms-fixed", "cmr4lms-dynamic", "mr4lms")
QUICK_MC_GROUP = ("64x32x16", "32x32x32")
"""Quick multicast: the paper's three algorithms on every pattern, our group-scope variant where a reading
names it."""
MC_SECONDS = {("mr4lms", "100x50x26:ppn=4"): 36.0, ("mr4lms", "256x32x16:ppn=4"): 31.0,
              ("mr4lms", "128x32x32:ppn=4"): 17.0, ("mr4lms", "random:1000:ppn=4"): 16.0,
              ("mr4lms", "25x50x26"): 4.3}
"""Rough CPU seconds of the longest runs (the others: 1.5 s on a 4-ppn pattern, 0.4 s otherwise)."""


def multicast_tasks(mode: str) -> list[Any]:
    """The model's runs (:class:`~dcnlab.reproduce.multicast.model.Task`) of ``reproduce all`` in ``mode``."""
    from dcnlab.reproduce.multicast import model as mm

    if mode == "full":
        return mm.tasks_for(False)
    if mode == "quick":
        return mm.with_draws([mm.Task(p, a) for p in mm.PATTERNS_1PPN + mm.PATTERNS_4PPN for a in mm.ALGOS
                              if a in QUICK_MC_ALGOS or (a == "cmr4lms-dynamic/group" and p in QUICK_MC_GROUP)],
                             mm.QUICK_DRAWS)
    return [mm.Task("64x32x16", a) for a in ("cmr4lms-fixed", "cmr4lms-dynamic")]


def run_one(arg: Any) -> dict[str, Any]:
    """One (pattern, algorithm, draw) at paper scale: ``arg`` a :class:`~dcnlab.reproduce.multicast.model.Task`."""
    from dcnlab.reproduce.multicast import model as mm

    return mm.run_task(arg)


class Multicast(Reproduction):
    """Multicast with a limited table: C-MR4LMS on the midplane fat-tree (001)."""

    name = "multicast"
    title = "Multicast with a limited table"
    papers = (papers.paper("001"),)
    has_emulation = True
    run_task = staticmethod(run_one)

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        return [Task(t.algo, t, MC_SECONDS.get((t.algo, t.pattern), 1.5 if "ppn=4" in t.pattern else 0.4))
                for t in multicast_tasks(mode)]

    def finish(self, out: Path, run: Run, tasks: Sequence[Task], results: Sequence[Any]) -> Finished:
        from dcnlab.reproduce.multicast import model as mm
        from dcnlab.reproduce.multicast import reproduce as mm_reproduce

        order = {p: i for i, p in enumerate(mm.PATTERNS_1PPN + mm.PATTERNS_4PPN)}
        rows = sorted(results, key=lambda r: (order[r["pattern"]], mm.ALGOS.index(r["algo"])))
        _, files = mm_reproduce.write_outputs(out, rows, run.quick, run.seconds)
        return Finished(rows, files)

    def headlines(self, out: Path | None, model: Any, emulation: Any, model_why: str = "") -> list[Any]:
        from dcnlab.reproduce.multicast import headlines

        return headlines.multicast(model, model_why)

    def emulate(self, out: Path, quick: bool, say: Callable[[str], None]) -> Emulation:
        from dcnlab.reproduce.multicast import bmv2 as mf
        from dcnlab.results.outputs import writing

        res = mf.run_experiment(mf.quick(mf.EmuConfig()) if quick else mf.EmuConfig(), progress=say)
        with writing(out, "--out"):
            files = list(mf.write_outputs(res, out))
        return Emulation(res.to_json(), mf.emulation_note(res), res.ok(), files)

    def readings(self) -> dict[str, Callable[[bool, int], list[Any]]]:
        from dcnlab.reproduce.multicast import readings

        return {"001": readings.readings}

    def sensitivity(self) -> dict[str, Callable[[], Searcher]]:
        from dcnlab.reproduce.multicast import search

        return {"001": search.Search001}


REPRODUCTION = Multicast()
