"""IB CC partitioning (Zhang et al., 002) as one reproduction of ``dcnlab reproduce all`` and ``dcnlab reproduce
congestion`` (:class:`dcnlab.reproduce.protocol.Reproduction`): one task per fluid-model scenario, its outputs,
its BMv2 experiment, its readings and its search; ``reproduce congestion`` adds the tenant experiment (c) under
each ``--algo`` policy, and runs BMv2 with its options."""

from __future__ import annotations

import argparse
import copy
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.reproduce.protocol import Emulation, Finished, Outcome, Reproduction, Run, Searcher, Task, write_summary
from dcnlab.results import papers

NO_EMULATION = "not asked for (dcnlab reproduce congestion --emulate on runs the BMv2 experiment)"
BMV2_OPTIONS = ("spec", "queue_rate", "timer_mode", "ccti_timer", "max_load")
"""``reproduce congestion``'s options of the BMv2 experiment (:func:`~dcnlab.reproduce.congestion.reproduce.
bmv2_config`'s keywords)."""


def congestion_scenarios(mode: str, policies: tuple[str, ...] = ()) -> list[Any]:
    """The scenarios in ``mode`` (smoke: without the large-scale exploration), with (c) under each of ``policies``."""
    from dcnlab.reproduce.congestion import model as cc

    out = cc.build_scenarios(mode != "full", policies) if policies else cc.build_scenarios(mode != "full")
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
    policies: tuple[str, ...] = ()
    """``--algo``: the policies (c) runs under beside the paper's (the first also on BMv2)."""
    options: dict[str, Any] = {}
    """``reproduce congestion``'s options of the BMv2 experiment (:data:`BMV2_OPTIONS`)."""

    def configure(self, args: argparse.Namespace) -> Congestion:
        """``reproduce congestion``: ``--algo`` policies and the BMv2 experiment's options."""
        mine = copy.copy(self)
        mine.policies = tuple(getattr(args, "algo", None) or ())
        mine.options = {k: getattr(args, k, None) for k in BMV2_OPTIONS}
        mine.user_code = bool(mine.policies)
        return mine

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        return [Task(s.name, s, 1.0 + len(s.flows) * s.duration_s / 20)
                for s in congestion_scenarios(mode, self.policies)]

    def finish(self, out: Path, run: Run, tasks: Sequence[Task], results: Sequence[Any]) -> Finished:
        from dcnlab.reproduce.congestion import reproduce as cc

        got = {name: (res, sec) for name, res, sec in results}
        summary = cc.model_outputs(out, [t.arg for t in tasks], got, run.quick, f"run by {run.by}", run.seconds)
        files = [Path(f) for f in summary.pop("files")]
        files.insert(len(files) - 1, write_summary(self, out, summary, None, NO_EMULATION, run.quick))
        return Finished(summary, files)     # files: the plots, summary.json, results.json

    def headlines(self, out: Path | None, model: Any, emulation: Any, model_why: str = "") -> list[Any]:
        from dcnlab.reproduce.congestion import headlines, search

        return headlines.congestion(model, emulation, model_why, search.depends())

    def emulate(self, out: Path, quick: bool, say: Callable[[str], None]) -> Emulation:
        from dcnlab.reproduce.congestion import bmv2 as bp
        from dcnlab.reproduce.congestion import reproduce as cc
        from dcnlab.results.outputs import writing

        cfg = cc.bmv2_config(quick, **self.options, policy=self.policies[0] if self.policies else None)
        res = bp.run_experiment(cfg, progress=say)
        with writing(out, "--out"):
            files = list(bp.write_outputs(res, out))
        summary = res.summary()
        if cfg.policy != "tenant-fair":
            from dcnlab.controller.congestion.registry import get

            summary["policy"] = {"name": cfg.policy, "origin": get(cfg.policy).origin, "applies_to": "(c)"}
        return Emulation(summary, f"ran on BMv2 ({cfg.spec}, {summary['wall_s']:.0f} s)", res.ok, files)

    def printed(self, done: Outcome, as_json: bool) -> tuple[str, int]:
        """``reproduce congestion``: the model's checks against the paper, then BMv2's (``--json``: the model's
        summary with BMv2's under ``emulation``)."""
        from dcnlab.reproduce.congestion import bmv2 as bp
        from dcnlab.reproduce.congestion import model as cc

        summary = {**done.model, "files": [str(f) for f in done.files]}
        emu = None if done.emulation is None else {
            "backend": "bmv2", "note": cc.BMV2_NOTE, "ok": done.emulation_ok,
            "files": [str(f) for f in done.emulation_files] + [str(done.out / "summary.json")], **done.emulation}
        status = 1 if done.emulation_ok is False else 0
        if as_json:
            return json.dumps({**summary, "emulation": emu, "emulation_why": done.planned}), status
        lines = [f"{cc.BACKEND_NOTE}; BMv2: {done.planned}", cc.checks_table(summary["checks"]),
                 f"\n{sum(c['ok'] for c in summary['checks'])}/{len(summary['checks'])} model checks ok; "
                 f"{summary['wall_seconds']:.1f} s on {done.where}", *(f"wrote {f}" for f in summary["files"])]
        if emu is not None:
            lines += [f"\n{cc.BMV2_NOTE}"]
            if "policy" in emu:
                lines.append(f"(c) ran under the policy {emu['policy']['name']} ({emu['policy']['origin']})")
            lines += bp.summary_lines(emu)
            for r in emu["rejected_runs"]:
                lines.append(f"\n{r['scenario']}: attempt {r['attempt']} rejected and repeated: {r['why']} "
                             f"(load {r['load'][0]:.1f} -> {r['load'][1]:.1f})")
            if emu["load"]["disturbed_runs"]:
                lines.append(f"\nwarning: the load average exceeded {bp.DISTURBED_LOAD_PER_CPU:g} per CPU during "
                             f"{', '.join(emu['load']['disturbed_runs'])} (max {emu['load']['max_1min']:.1f} on "
                             f"{emu['load']['cpus']} CPUs): other work disturbed the emulation; rerun when the "
                             "machine is quieter")
            checked = [c["ok"] for c in emu["checks"] if c["ok"] is not None]
            lines.append(f"\n{sum(checked)}/{len(checked)} BMv2 checks ok; "
                         f"{emu['wall_s']:.0f} s; time scale x{emu['time_scale']:.1f} (emulated s per IB s)")
            lines += [f"wrote {f}" for f in emu["files"]]
        return "\n".join(lines), status

    def readings(self) -> dict[str, Callable[[bool, int], list[Any]]]:
        from dcnlab.reproduce.congestion import readings

        return {"002": readings.readings}

    def sensitivity(self) -> dict[str, Callable[[], Searcher]]:
        from dcnlab.reproduce.congestion import search

        return {"002": search.Search002}

    def falsifiers(self) -> dict[str, str]:
        from dcnlab.reproduce.congestion import headlines

        return dict(headlines.FALSIFIERS)


REPRODUCTION = Congestion()
