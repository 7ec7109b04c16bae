"""Dragonfly CISTs (Bian et al., 004) as one reproduction of ``dcnlab reproduce all`` and ``dcnlab reproduce cist``
(:class:`dcnlab.reproduce.protocol.Reproduction`): one task per Dragonfly instance (with ``--algo``, the user's
constructions scored beside the paper's), its outputs, the construction cost against N measured alone, its BMv2
experiment, and what ``reproduce cist`` prints."""

from __future__ import annotations

import argparse
import copy
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.protocol import Emulation, Finished, Outcome, Reproduction, Run, Task, write_summary
from dcnlab.results import papers

NO_EMULATION = "not asked for (dcnlab reproduce cist --emulate on also runs the BMv2 experiment)"


def cist_cases(mode: str) -> tuple[tuple[str, ...], int]:
    """The instances and the failure rounds of ``reproduce all`` in ``mode``."""
    from dcnlab.reproduce.cist import model as cist_model

    if mode == "full":
        return cist_model.MODEL_SPECS, 20
    return (cist_model.QUICK_MODEL_SPECS, 5) if mode == "quick" else (cist_model.MODEL_SPECS[:1], 2)


def run_case(arg: tuple[Any, ...]) -> dict[str, Any]:
    """One instance ``(spec, rounds, seed[, algos])``: its CISTs built, checked and failed (one worker); ``algos``:
    ``(name, reference)`` of the user's constructions scored beside the paper's."""
    from dcnlab.reproduce.cist import model as cist_model

    spec, rounds, seed, *algos = arg
    return cist_model.model_case(spec, rounds, 1, seed, None, *algos)


class Cist(Reproduction):
    """Broadcast over completely independent spanning trees on Dragonfly (004)."""

    name = "cist"
    title = "Broadcast over CISTs on Dragonfly"
    papers = (papers.paper("004"),)
    has_emulation = True
    run_task = staticmethod(run_case)
    algos: tuple[tuple[str, str], ...] = ()
    """``(name as written, reference a worker resolves)`` of each ``--algo`` construction."""

    def configure(self, args: argparse.Namespace) -> Cist:
        """``reproduce cist --algo A ...``: the user's constructions beside the paper's (a built-in is one line)."""
        from dcnlab.reproduce.cist import reproduce as cist_reproduce

        mine = copy.copy(self)
        mine.algos = cist_reproduce.plugin_refs(getattr(args, "algo", None) or ())
        mine.user_code = bool(mine.algos)
        return mine

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        specs, rounds = cist_cases(mode)
        more = (self.algos,) if self.algos else ()
        return [Task("instance", (spec, rounds, 0 if seed is None else seed, *more), 0.5) for spec in specs]

    def finish(self, out: Path, run: Run, tasks: Sequence[Task], results: Sequence[Any]) -> Finished:
        from dcnlab.reproduce.cist import plots as cist_plots
        from dcnlab.results.outputs import writing
        from dcnlab.topos.spec import parse_spec

        by = {c["spec"]: c for c in results}
        cases = [by[parse_spec(t.arg[0]).spec] for t in tasks]
        with writing(out, "--out"):
            cist_plots.plot_model(cases, out / "model-sweep.png")
            (out / "model.json").write_text(json.dumps(cases, indent=1))
        # Theorems 5-7 (construction time vs N) are timed later, alone (measure_alone)
        return Finished(cases, [out / "model-sweep.png", out / "model.json",
                                write_summary(self, out, cases, None, NO_EMULATION, run.quick)])

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

    def summary_extra(self, model: Any, emulation: Any) -> dict[str, Any]:
        from dcnlab.reproduce.cist import reproduce as cist_reproduce

        names = [n for n, _ in self.algos]
        return {"algorithms": cist_reproduce.plugin_rows(model, names)} if names and model is not None else {}

    def emulate(self, out: Path, quick: bool, say: Callable[[str], None]) -> Emulation:
        from dcnlab.reproduce.cist import bmv2 as cd
        from dcnlab.results.outputs import writing

        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
        results, files, lines = [], [], []
        for cfg in [cd.quick(cd.SMALL)] if quick else [cd.SMALL, cd.LARGE]:
            res = cd.run_experiment(cfg, progress=say)
            with writing(out, "--out"):
                png, js = cd.write_outputs(res, out)
            files += [png, js]
            results.append(res)
            lines += [""] + res.summary_lines() + [f"wrote {png} and {js}"]
        return Emulation([r.to_json() for r in results], "ran on BMv2: broadcasts under failures on "
                         + ", ".join(r.spec for r in results), all(r.ok for r in results), files, lines)

    def printed(self, done: Outcome, as_json: bool) -> tuple[str, int]:
        """``reproduce cist``: every instance, the construction cost against N, BMv2's checks; exit status 1 when a
        construction that succeeds is not valid or loses a pair below k failures, or a BMv2 check fails."""
        from dcnlab.reproduce.cist import model as cist_model
        from dcnlab.reproduce.cist import reproduce as cist_reproduce
        from dcnlab.reproduce.cist import scaling as cist_scaling

        out, cases = done.out, done.model
        scaling = cist_scaling.load(out) or {}
        # every construction that succeeds gives valid CISTs that lose nothing (a failing construction is a
        # condition the paper omits: a headline's failure, not the run's)
        ok = all(c["valid"] and c["no_loss_below_k"] is not False for c in cases if not c.get("error"))
        ok = ok and done.emulation_ok is not False
        if as_json:
            return json.dumps({"model": cases, "scaling": scaling, "emulation": done.emulation or [], "ok": ok,
                               "emulation_why": done.planned}), 0 if ok else 1
        scaling_files = [out / "operations.png", *([out / "scaling.png"] if scaling.get("points") else []),
                         out / "scaling.json"]
        lines = cist_model.model_lines(cases) + [f"model on {done.where}; wrote {out / 'model-sweep.png'} and "
                                                 f"{out / 'model.json'}"]
        lines += [""] + cist_reproduce.scaling_lines(scaling) + [f"wrote {' and '.join(map(str, scaling_files))}"]
        lines += done.emulation_lines if done.emulation is not None else ["", f"BMv2 experiment: {done.planned}"]
        return "\n".join(lines + [f"wrote {out / 'summary.json'}"]), 0 if ok else 1

    def falsifiers(self) -> dict[str, str]:
        from dcnlab.reproduce.cist import headlines

        return dict(headlines.FALSIFIERS)


REPRODUCTION = Cist()
