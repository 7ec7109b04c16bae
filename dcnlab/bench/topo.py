"""``dcnlab bench topo``: build time and peak memory of large fabrics and routing state.

Each case runs in a fresh process so that its peak RSS is its own.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dcnlab.results.goals import verdict


@dataclass
class BenchResult:
    case: str
    seconds: float
    peak_mib: float
    detail: str


def _enumerate(spec: str) -> str:
    from dcnlab.topos.spec import parse_spec
    f = parse_spec(spec)
    nodes = sum(1 for _ in f.nodes())
    links = sum(1 for _ in f.links())
    assert nodes == sum(f.counts().values()) and links == f.num_links()
    return f"{nodes:,} nodes, {links:,} links enumerated"


def _materialize(spec: str) -> str:
    from dcnlab.topos.spec import parse_spec
    m = parse_spec(spec).materialize()
    return f"{len(m.node_list):,} nodes, {len(m.link_list):,} links, {len(m.host_list):,} hosts in memory"


def _routing(spec: str) -> str:
    from dcnlab.controller.routing import compute_forwarding, router_for
    from dcnlab.topos.spec import parse_spec
    state = compute_forwarding(router_for(parse_spec(spec)))
    return f"{len(state.tables):,} tables, {state.entries():,} entries"


CASES: dict[str, tuple[Callable[[str], str], str]] = {
    "bcube(8,5) enumerate": (_enumerate, "bcube:n=8,k=5"),
    "bcube(8,5) materialize": (_materialize, "bcube:n=8,k=5"),
    "midplane paper instance materialize": (_materialize, "midplane:"),
    "dragonfly(p=8,a=16,h=8) materialize": (_materialize, "dragonfly:p=8,a=16,h=8,arrangement=relative"),
    "fattree k=16 routing state": (_routing, "fattree:k=16"),
}


def _child(name: str) -> tuple[float, float, str]:
    fn, spec = CASES[name]
    t0 = time.perf_counter()
    detail = fn(spec)
    seconds = time.perf_counter() - t0
    return seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, detail


def run(names: list[str] | None = None, progress: Callable[[str], None] = lambda s: None) -> list[BenchResult]:
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    out = []
    for name in names or list(CASES):
        progress(name)
        with ctx.Pool(1) as pool:
            seconds, peak, detail = pool.apply(_child, (name,))
        out.append(BenchResult(name, seconds, peak, detail))
    return out


GOAL_SECONDS, GOAL_MIB = 10.0, 3 * 1024
TOPO_GOAL = f"<= {GOAL_SECONDS:g} s, <= {GOAL_MIB // 1024} GiB"
"""``bench topo``'s goal for every case: build time and peak memory."""


def topo_ok(r: Any) -> bool:
    return bool(r.seconds <= GOAL_SECONDS and r.peak_mib <= GOAL_MIB)


def topo_lines(results: Sequence[Any]) -> list[str]:
    """``bench topo``'s table: one line per case, each with its verdict against :data:`TOPO_GOAL`."""
    width = len(verdict(False, TOPO_GOAL))
    lines = [f"{'case':<40} {'seconds':>8} {'peak MiB':>9}  {'verdict':<{width}}  detail"]
    lines += [f"{r.case:<40} {r.seconds:8.2f} {r.peak_mib:9.0f}  {verdict(topo_ok(r), TOPO_GOAL):<{width}}  {r.detail}"
              for r in results]
    return lines
