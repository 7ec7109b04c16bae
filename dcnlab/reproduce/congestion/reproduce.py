"""Parts of ``dcnlab reproduce congestion`` (run as every reproduction is,
:mod:`dcnlab.reproduce.congestion.reproduction`): the model backend's outputs (:mod:`~dcnlab.reproduce.congestion.
model`, its plots, ``results.json``) and the BMv2 experiment's configuration from the command's options
(:mod:`~dcnlab.reproduce.congestion.bmv2`)."""

from __future__ import annotations

import json
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


def model_outputs(out: Path, scenarios: list[Any], results: dict[str, tuple[Any, float]], quick: bool, reason: str,
                  wall: float) -> dict[str, Any]:
    """The model backend's summary, its plots and ``results.json`` in ``out`` (``files``: the plots and
    ``results.json``)."""
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
    summary["files"] = [str(f) for f in files] + [str(out / "results.json")]
    return summary


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
