"""What ``dcnlab reproduce congestion`` runs: the model backend (:mod:`~dcnlab.reproduce.congestion.model`, its
plots, ``results.json``) or the BMv2 experiment (:mod:`~dcnlab.reproduce.congestion.bmv2`), and ``summary.json``
with 002's headlines (:mod:`~dcnlab.reproduce.congestion.headlines`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcnlab.reproduce.congestion import model as model_runs
from dcnlab.reproduce.congestion import plots
from dcnlab.results.outputs import writing

if TYPE_CHECKING:
    from dcnlab.controller.congestion.params import TimerMode


BMV2_SPEC = "dragonfly:p=5,a=1,h=1"


BMV2_QUEUE_RATE = 1000


def bmv2_missing() -> list[str]:
    """Why the BMv2 experiment cannot run here (empty: it can); :func:`dcnlab.emu.preflight.problems`."""
    from dcnlab.emu import preflight

    return preflight.problems(preflight.EMULATION_TOOLS, root=True)


NO_EMULATION = "not asked for (dcnlab reproduce congestion --emulate on runs the BMv2 experiment)"


def model_outputs(out: Path, scenarios: list[Any], results: dict[str, tuple[Any, float]], quick: bool, reason: str,
                  wall: float) -> dict[str, Any]:
    """The model backend's summary, its plots, ``results.json`` and ``summary.json`` in ``out``."""
    from dcnlab.reproduce.congestion import search

    summary = model_runs.summarize(scenarios, results, search.depends())
    summary["fairness_rates"] = model_runs.fairness_rates(scenarios, results)
    summary["backend"] = "model"
    summary["note"] = model_runs.BACKEND_NOTE
    summary["reason"] = reason
    summary["quick"] = quick
    summary["parameters"] = model_runs._params_json()
    summary["wall_seconds"] = round(wall, 2)
    data = dict(summary)
    with writing(out, "--out"):
        files = plots.plot_all(scenarios, results, summary, out)
        data["series"] = {name: res.to_dict() for name, (res, _) in sorted(results.items())}
        (out / "results.json").write_text(json.dumps(data))
    files.append(write_summary(out, summary, None, NO_EMULATION, quick))
    summary["files"] = [str(f) for f in files] + [str(out / "results.json")]
    return summary


def write_summary(out: Path, model: dict[str, Any] | None, emulation: dict[str, Any] | None, why: str,
                  quick: bool, model_why: str = "") -> Path:
    """``summary.json``: the headlines of 002 (:func:`dcnlab.reproduce.congestion.headlines.congestion`)."""
    from dcnlab.reproduce.congestion import headlines, search
    from dcnlab.results import summary

    with writing(out, "--out"):
        return summary.write(out / "summary.json", ("002",),
                             headlines.congestion(model, emulation, model_why, search.depends()),
                             emulation is not None, why, mechanism="congestion", quick=quick)


def bmv2_config(quick: bool, spec: str | None = None, queue_rate: int | None = None, timer_mode: str | None = None,
                ccti_timer: int | None = None, max_load: float | None = None, policy: str | None = None) -> Any:
    """The BMv2 experiment's configuration (:class:`dcnlab.reproduce.congestion.bmv2.EmuConfig`) from the
    command's options (None: the defaults)."""
    from dataclasses import replace

    from dcnlab.reproduce.congestion import bmv2 as bp

    cfg = bp.quick(bp.EmuConfig()) if quick else bp.EmuConfig()
    mode: TimerMode = "free" if timer_mode == "free" else "reset"
    return replace(cfg, spec=spec or BMV2_SPEC, rate_pps=queue_rate or BMV2_QUEUE_RATE, timer_mode=mode,
                   ccti_timer=ccti_timer or bp.DEFAULT_TIMER[mode], max_load=max_load, policy=policy or cfg.policy)


def run_model(out: Path, quick: bool, n_workers: int, cluster_address: str | None, reason: str,
              policies: tuple[str, ...] = ()) -> tuple[dict[str, Any], str]:
    """The model backend: every scenario on ``n_workers`` processes or the Dask cluster at ``cluster_address``,
    then :func:`model_outputs`; the summary and where it ran."""
    from dcnlab.sweep import pool

    scenarios = model_runs.build_scenarios(quick, policies) if policies else model_runs.build_scenarios(quick)
    with pool.connect(cluster_address) as cluster:
        t0 = time.perf_counter()
        results = model_runs.run_all(scenarios, n_workers)     # on the cluster when there is one (pool.active())
        wall = time.perf_counter() - t0
        where = pool.describe(n_workers, cluster)
    return model_outputs(out, scenarios, results, quick, reason, wall), where


def run_bmv2(out: Path, cfg: Any, quick: bool, progress: Any, model: dict[str, Any] | None = None
             ) -> tuple[dict[str, Any], list[Path], bool]:
    """The BMv2 experiment with ``cfg`` (:func:`bmv2_config`), its outputs and ``summary.json`` in ``out`` (with
    the figures of ``model``, the model parts' summary of :func:`run_model`, when they ran first): the
    experiment's summary, the files written and whether every check held."""
    from dcnlab.reproduce.congestion import bmv2 as bp

    result = bp.run_experiment(cfg, progress=progress)
    with writing(out, "--out"):
        files = bp.write_outputs(result, out)
    summary = result.summary()
    if cfg.policy != "tenant-fair":
        from dcnlab.controller.congestion.registry import get

        summary["policy"] = {"name": cfg.policy, "origin": get(cfg.policy).origin, "applies_to": "(c)"}
    figures = None if model is None else {k: v for k, v in model.items() if k != "files"}
    files.append(write_summary(out, figures, summary, f"ran on BMv2 ({cfg.spec}, {summary['wall_s']:.0f} s)",
                               quick, model_why="the model parts did not run"))
    ok = all(c["ok"] is not False for c in summary["checks"])
    return summary, files, ok
