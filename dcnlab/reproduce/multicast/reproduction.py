"""C-MR4LMS (Chen et al., 001) as one reproduction of ``dcnlab reproduce all`` and ``dcnlab reproduce multicast``
(:class:`dcnlab.reproduce.protocol.Reproduction`): one task per (pattern, algorithm, draw), its outputs, its BMv2
experiment, its readings and its search; ``reproduce multicast`` runs its own plan
(:func:`dcnlab.reproduce.multicast.model.tasks_for`) with the user's ``--algo`` beside the paper's, and the BMv2
part's options."""

from __future__ import annotations

import argparse
import copy
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.protocol import Emulation, Finished, Outcome, Reproduction, Run, Searcher, Task, write_summary
from dcnlab.results import papers

NO_EMULATION = "not asked for (dcnlab reproduce multicast --emulate on runs the BMv2 experiment)"

QUICK_MC_ALGOS = ("cmr4lms-fixed", "cmr4lms-dynamic", "mr4lms")
QUICK_MC_GROUP = ("64x32x16", "32x32x32")
"""Quick multicast: the paper's three algorithms on every pattern, our group-scope variant where a reading
names it."""
MC_SECONDS = {("mr4lms", "100x50x26:ppn=4"): 1.6, ("mr4lms", "256x32x16:ppn=4"): 1.4,
              ("mr4lms", "128x32x32:ppn=4"): 0.8, ("mr4lms", "random:1000:ppn=4"): 0.8,
              ("mr4lms", "25x50x26"): 0.25}
"""Rough CPU seconds of the longest runs, as ``dcnlab bench reproduce`` measures them since MR4LMS-like scores its
root candidates in one numpy pass per level (longest 1.6 s; the others: 1.5 s on a 4-ppn pattern, 0.4 s
otherwise, C-MR4LMS's included)."""


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
    command: argparse.Namespace | None = None
    """``reproduce multicast``'s options (:meth:`configure`; None: ``reproduce all``'s plan and BMv2 defaults)."""

    def configure(self, args: argparse.Namespace) -> Multicast:
        """``reproduce multicast``: its own plan (``--quick``: fewer patterns, no MR4LMS on the big ones), ``--algo``
        beside the paper's in the model and in BMv2's steady window, ``--topo``, ``--colors``, ``--feed``, ``--cut``
        for BMv2."""
        mine = copy.copy(self)
        mine.command, mine.user_code = args, bool(getattr(args, "algo", None))
        return mine

    def _option(self, name: str) -> Any:
        return getattr(self.command, name, None) if self.command is not None else None

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        from dcnlab.reproduce.multicast import model as mm

        runs = (mm.tasks_for(mode != "full", self._option("algo") or ()) if self.command is not None
                and mode != "smoke" else multicast_tasks(mode))
        return [Task(t.algo, t, MC_SECONDS.get((t.algo, t.pattern), 1.5 if "ppn=4" in t.pattern else 0.4),
                     user=t.algo not in mm.ALGOS) for t in runs]

    def finish(self, out: Path, run: Run, tasks: Sequence[Task], results: Sequence[Any]) -> Finished:
        from dcnlab.reproduce.multicast import reproduce as mm_reproduce

        rows, pngs = mm_reproduce.write_outputs(out, list(results), run.quick, run.seconds)
        return Finished(rows, [out / "multicast.json", *pngs,
                               write_summary(self, out, rows, None, NO_EMULATION, run.quick)])

    def measure_alone(self, out: Path, run: Run) -> list[Path]:
        """The speed headlines' CPU times, timed again with nothing beside them over several repeats
        (:mod:`dcnlab.reproduce.multicast.timing`), when the model ran their pattern."""
        from dcnlab.reproduce.multicast import timing

        rows = self._rows(out)
        if run.mode == "smoke" or not any(r.get("pattern") == timing.PATTERN for r in rows):
            return []
        return [timing.write(out, timing.measure(run.quick))]

    @staticmethod
    def _rows(out: Path) -> list[dict[str, Any]]:
        try:
            return list(json.loads((out / "multicast.json").read_text()).get("rows") or [])
        except (OSError, ValueError, AttributeError):
            return []

    def headlines(self, out: Path | None, model: Any, emulation: Any, model_why: str = "") -> list[Any]:
        from dcnlab.reproduce.multicast import headlines, timing

        return headlines.multicast(model, model_why, timing=timing.load(out) if model is not None else None)

    def summary_extra(self, model: Any, emulation: Any) -> dict[str, Any]:
        """The user's routers in BMv2's steady window, when any ran there."""
        keys = ("algorithm", "origin", "groups", "placed", "trees", "entries_per_switch_max", "entries_per_port_max",
                "table_limit_per_port", "checks", "failover")
        mine = (emulation or {}).get("algorithms")
        return {"algorithms": [{k: r[k] for k in keys} | {"delivered": r["window"]["delivered"],
                                                          "receptions": r["window"]["receptions"]}
                               for r in mine]} if mine else {}

    def emulate(self, out: Path, quick: bool, say: Callable[[str], None]) -> Emulation:
        """The BMv2 experiment, with ``reproduce multicast``'s ``--topo``, ``--colors``, ``--feed``, ``--cut`` and
        ``--algo`` when it runs them (None: the defaults)."""
        from dataclasses import replace

        from dcnlab.reproduce.multicast import bmv2 as mf
        from dcnlab.results.outputs import writing

        cfg = mf.EmuConfig()
        cfg = replace(cfg, spec=self._option("topo") or cfg.spec, colors=self._option("colors") or cfg.colors,
                      feed=self._option("feed") or cfg.feed, cut=self._option("cut") or cfg.cut,
                      algorithms=tuple(self._option("algo") or ()))
        res = mf.run_experiment(mf.quick(cfg) if quick else cfg, progress=say)
        with writing(out, "--out"):
            png, js = mf.write_outputs(res, out)
        return Emulation(res.to_json(), mf.emulation_note(res), res.ok(), [png, js],
                         ["", *res.summary_lines(), f"wrote {js}, {png} and {out / 'summary.json'}"])

    def printed(self, done: Outcome, as_json: bool) -> tuple[str, int]:
        """``reproduce multicast``: the runs' table, the paper's statements beside ours, BMv2's checks."""
        from dcnlab.reproduce.multicast import model as mm

        rows, out = done.model, done.out
        pngs = [f for f in done.files if f.suffix == ".png"]
        lines = [f"C-MR4LMS reproduction on {mm.SPEC} (40,448 nodes: 7,680 switches + 32,768 terminals), "
                 f"C={mm.COLORS}" + (" [quick]" if done.run.quick else ""), mm.table(rows), "",
                 mm.claims_table(mm.claims(rows)), "",
                 f"{len(rows)} runs in {done.run.seconds:.0f} s on {done.where}; wrote "
                 + ", ".join(str(p) for p in [out / "multicast.json", out / "summary.json", *pngs])]
        lines += done.emulation_lines if done.emulation is not None else [f"BMv2 experiment: {done.planned}"]
        return "\n".join(lines), 0 if done.emulation_ok is not False else 1

    def readings(self) -> dict[str, Callable[[bool, int], list[Any]]]:
        from dcnlab.reproduce.multicast import readings

        return {"001": readings.readings}

    def sensitivity(self) -> dict[str, Callable[[], Searcher]]:
        from dcnlab.reproduce.multicast import search

        return {"001": search.Search001}

    def falsifiers(self) -> dict[str, str]:
        from dcnlab.reproduce.multicast import headlines

        return dict(getattr(headlines, "FALSIFIERS", {}))


REPRODUCTION = Multicast()
