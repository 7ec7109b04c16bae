"""Parts of ``dcnlab reproduce aggregation`` (run as every reproduction is,
:mod:`dcnlab.reproduce.aggregation.reproduction`): the model sweep's outputs and the BMv2 experiment's
configuration from the command's options."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from dcnlab.reproduce.aggregation import bmv2, plots


def write_outputs(out: Path, results: dict[str, Any], meta: dict[str, Any]) -> list[Path]:
    """``aggregation.json`` (``meta``: how it ran, the user's tree builders that ran beside the papers' schemes
    under ``algorithms``) and the plots in ``out``; the plots."""
    from dcnlab.results.outputs import writing

    with writing(out, "--out"):
        (out / "aggregation.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
        return plots.charts(results, out)


def config_from_args(args: argparse.Namespace) -> bmv2.EmuConfig:
    """The BMv2 experiment's configuration from the command's options (``--quick``, ``--seed``, ``--topo``)."""
    cfg = bmv2.QUICK if getattr(args, "quick", False) else bmv2.EmuConfig()
    seed = getattr(args, "seed", None)
    if seed is not None:
        cfg = dataclasses.replace(cfg, seed=int(seed))
    topo = getattr(args, "topo", None)
    if topo:
        cfg = dataclasses.replace(cfg, specs=tuple(topo) if isinstance(topo, (list, tuple)) else (topo,))
    extra = getattr(args, "algo", None)
    if extra:
        cfg = dataclasses.replace(cfg, extra_algorithms=tuple(dict.fromkeys(extra)))
    return cfg
