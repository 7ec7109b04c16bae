"""M2 (Fang et al., 000) and IRS/SRS (Guo et al., 003) as one reproduction of ``dcnlab reproduce all``
(:class:`dcnlab.reproduce.protocol.Reproduction`): the rounds of the model sweep's parts as tasks, their
outputs, the BMv2 experiment with 000's waiting time, the readings and the searches of both papers."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.protocol import Emulation, Finished, Reproduction, Run, Searcher, Task
from dcnlab.results import papers

QUICK_ROUNDS = {"003-k": 100, "003-size": 5, "003-delta": 20, "000-k": 100, "000-size": 3}
"""Rounds per point of ``--quick`` (every point of the full run; the gap part keeps its own quick plan): the full
run's rounds where they are cheap (003-k, 003-delta and 000-k take seconds: their figures, spreads and verdicts are
the full run's), fewer in the two large sweeps (a wider spread there; where a verdict still differs from the full
run's, the report marks it, :func:`dcnlab.report.search_tables.mark_full_run`)."""


def aggregation_plans(mode: str) -> dict[str, Any]:
    """The parts' plans (:class:`~dcnlab.reproduce.aggregation.model.Plan`) of ``reproduce all`` in ``mode``."""
    from dcnlab.reproduce.aggregation import model as am

    full = am.plans(False, None)
    if mode == "full":
        return full
    if mode == "quick":
        out = {part: am.Plan(part, full[part].points, QUICK_ROUNDS[part]) for part in QUICK_ROUNDS}
        out["gap"] = am.plans(True, None)["gap"]
        return out
    return {"003-k": am.Plan("003-k", (2, 3), 1), "003-size": am.Plan("003-size", (50, 100), 1),
            "003-delta": am.Plan("003-delta", (250,), 1), "000-k": am.Plan("000-k", (2, 3), 1),
            "000-size": am.Plan("000-size", (100, 200), 1)}


def round_seconds(part: str, point: Any) -> float:
    """Rough seconds of one round (measured on one core of the reference machine)."""
    p = float(point)
    return {"003-k": 0.012 * p, "003-size": 0.67 * (p / 1500) ** 2, "003-delta": 0.62 * (p / 1000) ** 2,
            "000-k": 0.006 * p, "000-size": 0.74 * p / 4000}.get(part, 0.05 * (p % 100))


def run_round(arg: tuple[str, Any, int, int]) -> Any:
    """One round ``(part, point, round, seed)`` of the model sweep."""
    from dcnlab.reproduce.aggregation import model as am

    return am._task(*arg)


def warm_kernels() -> None:
    """Compile or load the engine's kernels once per worker."""
    from dcnlab.controller.aggregation import engine

    engine.warm_up()


class Aggregation(Reproduction):
    """In-network aggregation on BCube: M2's incast trees (000) and IRS/SRS shuffles (003)."""

    name = "aggregation"
    title = "In-network aggregation on BCube"
    papers = (papers.paper("000"), papers.paper("003"))
    has_emulation = True
    run_task = staticmethod(run_round)
    warm_up = staticmethod(warm_kernels)

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        pl = aggregation_plans(mode)
        return [Task(part, (part, p, rnd, 1 if seed is None else seed), round_seconds(part, p))
                for part in pl for p in pl[part].points for rnd in range(pl[part].rounds)]

    def finish(self, out: Path, run: Run, tasks: Sequence[Task], results: Sequence[Any]) -> Finished:
        from dcnlab.reproduce.aggregation import model as am
        from dcnlab.reproduce.aggregation import reproduce as am_reproduce

        pl = aggregation_plans(run.mode)
        model = am.collect(list(pl), pl, list(results))
        meta = {"quick": run.quick, "seed": 1 if run.seed is None else run.seed, "workers": run.workers,
                "wall_seconds": round(run.seconds, 1), "load_average": os.getloadavg(), "run_by": run.by}
        return Finished(model, am_reproduce.write_outputs(out, model, meta))

    def headlines(self, out: Path | None, model: Any, emulation: Any, model_why: str = "") -> list[Any]:
        from dcnlab.reproduce.aggregation import headlines

        worked = headlines.bcube41_examples() if model is not None else None
        return headlines.aggregation(model, emulation, worked, why=model_why)

    def emulate(self, out: Path, quick: bool, say: Callable[[str], None]) -> Emulation:
        from dcnlab.reproduce.aggregation import bmv2 as ab
        from dcnlab.reproduce.aggregation import reproduce as ab_reproduce
        from dcnlab.reproduce.aggregation import waiting as aw
        from dcnlab.results.outputs import writing

        res = ab.run_experiment(ab_reproduce.config_from_args(argparse.Namespace(quick=quick, seed=None, topo=None)),
                                say)
        with writing(out, "--out"):
            files = list(ab.write_outputs(res, out))
        waited = aw.run_and_write(quick, None, out, say)
        files.append(out / aw.PLOT)
        why = (f"{ab.emulation_note(res)}; waiting time: {len(waited.jobs)} incasts on {waited.config.spec} "
               f"({waited.seconds:.0f} s)")
        return Emulation(res.to_json() | {"waiting": waited.to_json()}, why, res.ok and waited.ok, files)

    def readings(self) -> dict[str, Callable[[bool, int], list[Any]]]:
        from dcnlab.reproduce.aggregation import readings_000, readings_003

        return {"000": readings_000.readings, "003": readings_003.readings}

    def sensitivity(self) -> dict[str, Callable[[], Searcher]]:
        from dcnlab.reproduce.aggregation import search_000, search_003

        return {"000": search_000.Search000, "003": search_003.Search003}


REPRODUCTION = Aggregation()
