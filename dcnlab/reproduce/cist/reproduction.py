"""Dragonfly CISTs (Bian et al., 004) as one reproduction of ``dcnlab reproduce all``
(:class:`dcnlab.reproduce.protocol.Reproduction`): one task per Dragonfly instance, the outputs of
``reproduce cist``, the construction time against N timed alone, and its BMv2 experiment."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.protocol import Emulation, Finished, Reproduction, Run, Task
from dcnlab.results import papers


def cist_cases(mode: str) -> tuple[tuple[str, ...], int]:
    """The instances and the failure rounds of ``reproduce all`` in ``mode``."""
    from dcnlab.reproduce.cist import model as cist_model

    if mode == "full":
        return cist_model.MODEL_SPECS, 20
    return (cist_model.QUICK_MODEL_SPECS, 5) if mode == "quick" else (cist_model.MODEL_SPECS[:1], 2)


def run_case(arg: tuple[str, int, int]) -> dict[str, Any]:
    """One instance ``(spec, rounds, seed)``: its CISTs built, checked and failed (one worker)."""
    from dcnlab.reproduce.cist import model as cist_model

    spec, rounds, seed = arg
    return cist_model.model_case(spec, rounds, 1, seed)


class Cist(Reproduction):
    """Broadcast over completely independent spanning trees on Dragonfly (004)."""

    name = "cist"
    title = "Broadcast over CISTs on Dragonfly"
    papers = (papers.paper("004"),)
    has_emulation = True
    run_task = staticmethod(run_case)

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        specs, rounds = cist_cases(mode)
        return [Task("instance", (spec, rounds, 0 if seed is None else seed), 0.5) for spec in specs]

    def finish(self, out: Path, run: Run, tasks: Sequence[Task], results: Sequence[Any]) -> Finished:
        from dcnlab.reproduce.cist import plots as cist_plots
        from dcnlab.reproduce.cist import reproduce as cist_reproduce
        from dcnlab.results.outputs import writing
        from dcnlab.topos.spec import parse_spec

        by = {c["spec"]: c for c in results}
        cases = [by[parse_spec(t.arg[0]).spec] for t in tasks]
        with writing(out, "--out"):
            cist_plots.plot_model(cases, out / "model-sweep.png")
            (out / "model.json").write_text(json.dumps(cases, indent=1))
        # Theorems 5-7 (construction time vs N) are timed later, alone (measure_alone)
        return Finished(cases, [out / "model-sweep.png", out / "model.json",
                                cist_reproduce.write_summary(out, cases, None, run.quick)])

    def measure_alone(self, out: Path, run: Run) -> list[Path]:
        """Time CIST construction against N (Theorems 5-7) once every pool is shut: CPU time per call grows with the
        working set when the other core's worker shares the caches (a quick run timed beside the model tasks
        fitted 1.19 where an idle one fits 1.05)."""
        from dcnlab.reproduce.cist import reproduce as cist_reproduce

        return list(cist_reproduce.scaling_outputs(out, run.quick)[1])

    def headlines(self, out: Path | None, model: Any, emulation: Any, model_why: str = "") -> list[Any]:
        from dcnlab.reproduce.cist import headlines
        from dcnlab.reproduce.cist import scaling as cist_scaling

        return headlines.cist(model, emulation, scaling=cist_scaling.load(out) if out is not None else None)

    def emulate(self, out: Path, quick: bool, say: Callable[[str], None]) -> Emulation:
        from dcnlab.reproduce.cist import bmv2 as cd
        from dcnlab.results.outputs import writing

        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
        results, files = [], []
        for cfg in [cd.quick(cd.SMALL)] if quick else [cd.SMALL, cd.LARGE]:
            res = cd.run_experiment(cfg, progress=say)
            with writing(out, "--out"):
                files += list(cd.write_outputs(res, out))
            results.append(res)
        return Emulation([r.to_json() for r in results], "ran on BMv2: broadcasts under failures on "
                         + ", ".join(r.spec for r in results), all(r.ok for r in results), files)


REPRODUCTION = Cist()
