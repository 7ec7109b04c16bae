"""IB CC partitioning (Zhang et al., 002) as one reproduction of ``dcnlab reproduce all``
(:class:`dcnlab.reproduce.protocol.Reproduction`): one task per fluid-model scenario, the outputs of
``reproduce congestion``, its BMv2 experiment, its readings and its search."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.protocol import Emulation, Finished, Reproduction, Run, Searcher, Task
from dcnlab.results import papers


def congestion_scenarios(mode: str) -> list[Any]:
    """The scenarios of ``reproduce all`` in ``mode`` (smoke: without the large-scale exploration)."""
    from dcnlab.reproduce.congestion import model as cc

    out = cc.build_scenarios(mode != "full")
    return out if mode != "smoke" else [s for s in out if not s.name.startswith("large_")]


def run_scenario(arg: Any) -> tuple[str, Any, float]:
    """One scenario (``arg``) on the fluid model: (its name, its result, its seconds)."""
    from dcnlab.reproduce.congestion import model as cc

    return cc._run_one(arg)


class Congestion(Reproduction):
    """Tenant bandwidth partitioning with InfiniBand congestion control (002)."""

    name = "congestion"
    title = "Tenant bandwidth partitioning"
    papers = (papers.paper("002"),)
    has_emulation = True
    run_task = staticmethod(run_scenario)

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        return [Task(s.name, s, 1.0 + len(s.flows) * s.duration_s / 20) for s in congestion_scenarios(mode)]

    def finish(self, out: Path, run: Run, tasks: Sequence[Task], results: Sequence[Any]) -> Finished:
        from dcnlab.reproduce.congestion import reproduce as cc

        got = {name: (res, sec) for name, res, sec in results}
        summary = cc.model_outputs(out, [t.arg for t in tasks], got, run.quick, f"run by {run.by}", run.seconds)
        return Finished({k: v for k, v in summary.items() if k != "files"}, [Path(f) for f in summary["files"]])

    def headlines(self, out: Path | None, model: Any, emulation: Any, model_why: str = "") -> list[Any]:
        from dcnlab.reproduce.congestion import headlines, search

        return headlines.congestion(model, emulation, model_why, search.depends())

    def emulate(self, out: Path, quick: bool, say: Callable[[str], None]) -> Emulation:
        from dcnlab.reproduce.congestion import bmv2 as bp
        from dcnlab.reproduce.congestion import reproduce as cc
        from dcnlab.results.outputs import writing

        cfg = cc.bmv2_config(quick)
        res = bp.run_experiment(cfg, progress=say)
        with writing(out, "--out"):
            files = list(bp.write_outputs(res, out))
        summary = res.summary()
        return Emulation(summary, f"ran on BMv2 ({cfg.spec}, {summary['wall_s']:.0f} s)", res.ok, files)

    def readings(self) -> dict[str, Callable[[bool, int], list[Any]]]:
        from dcnlab.reproduce.congestion import readings

        return {"002": readings.readings}

    def sensitivity(self) -> dict[str, Callable[[], Searcher]]:
        from dcnlab.reproduce.congestion import search

        return {"002": search.Search002}


REPRODUCTION = Congestion()
