"""The model sweep's outputs of ``dcnlab reproduce multicast`` (run as every reproduction is,
:mod:`dcnlab.reproduce.multicast.reproduction`): ``multicast.json`` and the plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dcnlab.reproduce.multicast import model, plots
from dcnlab.reproduce.multicast.model import COLORS, SPEC


def write_outputs(out: Path, rows: list[dict[str, Any]], quick: bool, wall: float
                  ) -> tuple[list[dict[str, Any]], list[Path]]:
    """``multicast.json`` (every row, a random pattern's once per draw, with the paper's statements beside ours) and
    the plots in ``out``: (the rows in the order of ``multicast.json``, the plots)."""
    from dcnlab.results.outputs import writing

    rows = model.sort_rows(rows)        # deterministic whatever order the tasks finished in
    cs = model.claims(rows)
    from dcnlab.controller.multicast.registry import get
    data = {"spec": SPEC, "colors": COLORS, "quick": quick, "wall_seconds": wall, "draws": model.draws_of(rows),
            "rows": rows,
            "claims": [c.__dict__ for c in cs],
            "algorithms": [{"name": a, "origin": get(a).origin, "summary": get(a).summary}
                           for a in sorted({r["algo"] for r in rows}, key=model.algo_rank)]}
    with writing(out, "--out"):
        (out / "multicast.json").write_text(json.dumps(data, indent=1) + "\n")
        pngs = plots.plot(rows, out)
    return rows, pngs
