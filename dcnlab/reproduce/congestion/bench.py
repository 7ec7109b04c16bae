"""What ``dcnlab bench congestion`` measures: the fluid model's speed (simulated seconds per second) by flow count."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any


def bench_rows(flow_counts: Sequence[int], seconds: float) -> list[dict[str, Any]]:
    """One timed model run of ``seconds`` of IB time per flow count (4 tenants, CCTI_Increase 1..3)."""
    from dcnlab.controller.congestion.cct import Cct
    from dcnlab.controller.congestion.fluid import FlowDef, ModelConfig, simulate
    from dcnlab.controller.congestion.params import HcaParams

    rows = []
    for n in flow_counts:
        flows = [FlowDef(f"f{i}", f"t{i % 4}", params=HcaParams(ccti_increase=1 + i % 3, ccti_limit=4095))
                 for i in range(n)]
        cfg = ModelConfig(cct=Cct.paper(4096), sample_s=min(0.05, seconds))
        t0 = time.perf_counter()
        simulate(flows, seconds, cfg)
        wall = time.perf_counter() - t0
        rows.append({"flows": n, "simulated_s": seconds, "wall_s": wall, "sim_per_wall": seconds / wall,
                     "steps_per_s": seconds / cfg.dt_s / wall})
    return rows
