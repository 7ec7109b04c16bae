"""M2 (Fang et al., 000) and IRS/SRS (Guo et al., 003) as one reproduction of ``dcnlab reproduce all`` and ``dcnlab
reproduce aggregation`` (:class:`dcnlab.reproduce.protocol.Reproduction`): the rounds of the model sweep's parts as
tasks, their outputs, the BMv2 experiment with 000's waiting time, the readings and the searches of both papers;
``reproduce aggregation`` runs its own plan (:func:`dcnlab.reproduce.aggregation.model.plans`: ``--quick``,
``--rounds``, ``--only``) with the user's ``--algo`` beside the papers' schemes, and BMv2 on its ``--topo``."""

from __future__ import annotations

import argparse
import copy
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.aggregation.run_plans import aggregation_plans, seed_rounds
from dcnlab.reproduce.protocol import Emulation, Finished, Outcome, Reproduction, Run, Searcher, Task, write_summary
from dcnlab.results import papers

NO_EMULATION = "not asked for (dcnlab reproduce aggregation --emulate on runs the BMv2 experiment)"


def round_seconds(part: str, point: Any) -> float:
    """Rough seconds of one round, as ``dcnlab bench reproduce`` measures them on one core (the longest: 003-size
    0.66 s at m = n = 1500, 003-delta 0.52 s at 1000, 000-size 0.13 s at 4000 senders, 003-k 0.08 s at k = 8)."""
    p = float(point)
    return {"003-k": 0.008 * p, "003-size": 0.66 * (p / 1500) ** 2, "003-delta": 0.52 * (p / 1000) ** 2,
            "000-k": 0.002 * p, "000-size": 0.13 * p / 4000}.get(part, 0.05 * (p % 100))


class Replicated(dict):  # type: ignore[type-arg]
    """The parts' results over the pooled rounds of every seed (a dict, as ``aggregation.json`` holds it), with
    ``by_seed``: seed -> the same results from that seed's rounds alone."""

    by_seed: dict[str, dict[str, Any]]


def run_round(arg: tuple[Any, ...]) -> Any:
    """One round ``(part, point, round, seed[, None, algos])`` of the model sweep (``algos``: ``(name,
    reference)`` of the user's tree builders, :func:`dcnlab.reproduce.aggregation.plugins.worker_refs`)."""
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

    command: bool = False
    """Whether ``reproduce aggregation`` configured it (:meth:`configure`): its own plan and options."""
    only: tuple[str, ...] = ()
    rounds: int | None = None
    algos: tuple[tuple[str, str], ...] = ()
    topo: tuple[str, ...] = ()
    seed: int | None = None

    def configure(self, args: argparse.Namespace) -> Aggregation:
        """``reproduce aggregation``: its plan (``--quick``, ``--rounds``, ``--only``), ``--algo`` (checked here, one
        line), and for BMv2 ``--topo`` and ``--seed``."""
        from dcnlab.reproduce.aggregation import model as am
        from dcnlab.reproduce.aggregation import plugins

        mine = copy.copy(self)
        mine.command, mine.only, mine.rounds = True, tuple(args.only or am.PARTS), args.rounds
        mine.algos = plugins.worker_refs(args.algo or (), mine.only)
        mine.user_code = bool(mine.algos)
        mine.topo, mine.seed = tuple(args.topo or ()), args.seed
        return mine

    def plans(self, mode: str) -> dict[str, Any]:
        """The parts that run in ``mode`` and their plans."""
        from dcnlab.reproduce.aggregation import model as am

        if not self.command or mode == "smoke":
            return aggregation_plans(mode)
        pl = am.plans(mode != "full", self.rounds)
        return {part: pl[part] for part in self.only}

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        """Every round of every part, the plan's rounds shared out among the run's seeds
        (:data:`run_plans.SEEDS` replications, :func:`run_plans.split`)."""
        from dcnlab.reproduce.aggregation import plugins

        pl, more = self.plans(mode), (None, self.algos) if self.algos else ()
        return [Task(part, (part, p, rnd, sd, *(more if part in plugins.PARTS else ())), round_seconds(part, p))
                for part in pl for sd, n in seed_rounds(seed, pl[part].rounds) for p in pl[part].points
                for rnd in range(n)]

    def finish(self, out: Path, run: Run, tasks: Sequence[Task], results: Sequence[Any]) -> Finished:
        """The parts over the pooled rounds of every seed (``aggregation.json``, the plots), and each seed's own
        figures (:class:`Replicated`), which the headlines judge beside the pooled ones."""
        from dcnlab.reproduce.aggregation import model as am
        from dcnlab.reproduce.aggregation import plugins
        from dcnlab.reproduce.aggregation import reproduce as am_reproduce

        pl = self.plans(run.mode)
        model = Replicated(am.collect(list(pl), pl, list(results)))
        seeds = sorted({t.arg[3] for t in tasks}) or [1 if run.seed is None else run.seed]
        model.by_seed = {}
        for sd in seeds:        # each seed's figures from its own rounds (a part with fewer rounds than seeds: none)
            mine = {part: am.Plan(part, plan.points, dict(seed_rounds(run.seed, plan.rounds)).get(sd, 0))
                    for part, plan in pl.items()}
            mine = {part: plan for part, plan in mine.items() if plan.rounds}
            model.by_seed[str(sd)] = am.collect(list(mine), mine, [r for t, r in zip(tasks, results)
                                                                   if t.arg[3] == sd and t.arg[0] in mine])
        meta = {"quick": run.quick, "seed": seeds[0], "seeds": seeds, "workers": run.workers,
                "cluster": run.cluster, "wall_seconds": round(run.seconds, 1), "load_average": os.getloadavg(),
                "run_by": run.by,
                "by_seed": {sd: {part: {"overall": r.get("overall"), "overall_se": r.get("overall_se")}
                                 for part, r in m.items()} for sd, m in model.by_seed.items()}}
        names = [n for n, _ in self.algos]
        if names:
            meta["algorithms"] = plugins.describe(names)
        files = am_reproduce.write_outputs(out, model, meta)
        return Finished(model, [out / "aggregation.json", *files,
                                write_summary(self, out, model, None, NO_EMULATION, run.quick)])

    def headlines(self, out: Path | None, model: Any, emulation: Any, model_why: str = "") -> list[Any]:
        """The papers' headlines from the pooled figures, each judged beside every seed's own
        (:func:`dcnlab.results.summary.over_seeds`)."""
        from dcnlab.reproduce.aggregation import headlines
        from dcnlab.results.summary import over_seeds

        worked = headlines.bcube41_examples() if model is not None else None
        heads = headlines.aggregation(model, emulation, worked, why=model_why)
        by_seed = getattr(model, "by_seed", None) or {}
        if len(by_seed) < 2:
            return heads
        # each seed's figures only (its marks of the readings that flip a verdict are the pooled headline's)
        return over_seeds(heads, {sd: headlines.aggregation(m, None, worked, why=model_why, sensitivity=False)
                                  for sd, m in by_seed.items()})

    def summary_extra(self, model: Any, emulation: Any) -> dict[str, Any]:
        """The user's tree builders' rows, when any ran beside the papers'."""
        from dcnlab.reproduce.aggregation import plugins

        names = [n for n, _ in self.algos]
        return {"algorithms": plugins.rows(model, names)} if names and model is not None else {}

    def emulate(self, out: Path, quick: bool, say: Callable[[str], None]) -> Emulation:
        """The word-count jobs on BMv2 (``reproduce aggregation``'s ``--topo``, ``--seed`` and ``--algo`` when it
        runs them) and, without ``--topo``, 000's waiting time on the largest BCube."""
        from dcnlab.reproduce.aggregation import bmv2 as ab
        from dcnlab.reproduce.aggregation import reproduce as ab_reproduce
        from dcnlab.reproduce.aggregation import waiting as aw
        from dcnlab.results.outputs import writing

        cfg = ab_reproduce.config_from_args(argparse.Namespace(quick=quick, seed=self.seed, topo=self.topo,
                                                               algo=[n for n, _ in self.algos]))
        res = ab.run_experiment(cfg, say)
        with writing(out, "--out"):
            png, js = ab.write_outputs(res, out)
        data, why, ok, lines = res.to_json(), ab.emulation_note(res), res.ok, res.summary_lines()
        files = [png, js]
        if not self.topo:
            waited = aw.run_and_write(quick, self.seed, out, say)
            files += [out / aw.PLOT, out / "aggregation-waiting.json"]
            data["waiting"] = waited.to_json()
            why += (f"; waiting time: {len(waited.jobs)} incasts on {waited.config.spec} "
                    f"({waited.seconds:.0f} s)")
            ok, lines = ok and waited.ok, lines + waited.summary_lines()
        return Emulation(data, why, ok, files, ["", *lines, f"wrote {png} and {js}"])

    def printed(self, done: Outcome, as_json: bool) -> tuple[str, int]:
        """``reproduce aggregation``: the parts' table beside the papers' figures (``--json``: one object with the
        results, the table's lines and BMv2's), BMv2's checks."""
        from dcnlab.reproduce.aggregation import model as am

        out, results, status = done.out, done.model, 0 if done.emulation_ok is not False else 1
        if as_json:
            meta = json.loads((out / "aggregation.json").read_text())["meta"]
            return json.dumps({"meta": meta, "results": results, "table": am.table(results).splitlines(),
                               "emulation": done.emulation, "emulation_why": done.planned}, default=str), status
        plots = [f for f in done.files if f.suffix == ".png"]
        lines = [am.table(results), f"\n{len(done.tasks)} rounds in {done.run.seconds:.1f} s on {done.where}; wrote "
                 f"{out / 'aggregation.json'}, {out / 'summary.json'} and {len(plots)} plots in {out}/"]
        lines += done.emulation_lines if done.emulation is not None else [f"BMv2 experiment: {done.planned}"]
        return "\n".join(lines), status

    def readings(self) -> dict[str, Callable[[bool, int], list[Any]]]:
        from dcnlab.reproduce.aggregation import readings_000, readings_003

        return {"000": readings_000.readings, "003": readings_003.readings}

    def sensitivity(self) -> dict[str, Callable[[], Searcher]]:
        from dcnlab.reproduce.aggregation import search_000, search_003

        return {"000": search_000.Search000, "003": search_003.Search003}

    def falsifiers(self) -> dict[str, str]:
        from dcnlab.reproduce.aggregation import falsifiers

        return dict(getattr(falsifiers, "FALSIFIERS", {}))


REPRODUCTION = Aggregation()
