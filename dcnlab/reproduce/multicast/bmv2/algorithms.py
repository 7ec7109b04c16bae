"""Other routers beside C-MR4LMS in the BMv2 experiment (``--emulate --algo A``).

Each router named by ``--algo`` (a built-in, an installed plug-in or a ``package.module:name`` / ``file.py:name``
reference; :mod:`dcnlab.controller.multicast.registry`) runs **before** C-MR4LMS, on the same fabric, with the
same initial jobs' groups (the same MGIDs and members) and the same table of C entries per port:

1. its router places the groups, one by one; after every add its whole routing is checked
   (:class:`~dcnlab.controller.multicast.registry.RouterPlanner`: trees, members covered, colors within C, one tree
   per (link, color)), and the groups' trees become switch state through the **same** data plane module as
   C-MR4LMS's (:class:`~dcnlab.controller.multicast.dataplane.MulticastDataplane`, one plane, its table limit of C
   entries per ingress port enforced when compiling);
2. one window like C-MR4LMS's *steady* one: every member sends ``count`` messages to each of its groups; the
   checks are the same (:func:`~.checks.evaluate`): every member receives each message exactly once, no host
   outside a group delivers one, the copies hosts filter and the packets every link counted equal the model's
   (so no packet crosses a link the trees do not hold), and the state written equals a from-scratch compilation;
3. its state is deleted and the hosts leave its groups; the next router, then C-MR4LMS, starts from a clean fabric.

Groups a router refuses are reported and not sent to. **Failover, churn (joins and leaves) and dual trees stay
C-MR4LMS's**: a router of the registry has no second tree and no incremental join or leave, so only C-MR4LMS runs
those windows (the table and the docstring say so). Without ``--algo`` nothing here runs and the experiment's
output is what it was.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Any

from dcnlab.reproduce.multicast.bmv2.setup import Run
from dcnlab.reproduce.multicast.bmv2.traffic import run_window, sync_membership

FLOW_FIRST = 11
"""Flow ids of the routers' windows (11, 12, ...): C-MR4LMS's windows use 1-4."""
FAILOVER_NOTE = ("failover, churn and dual trees: C-MR4LMS only (a router of the registry has one tree per "
                 "group and no incremental join or leave)")


def table_use(dp: Any) -> dict[str, Any]:
    """Multicast table entries written: per switch (max, total) and per ingress port (max), against the limit C."""
    rules = dp.installed_rules()
    per_switch = {sw: len(r) for sw, r in rules.items()}
    per_port = [n for r in rules.values() for n in Counter(k.in_port for k in r).values()]
    return {"entries_total": sum(per_switch.values()), "switches_with_entries": len(per_switch),
            "entries_per_switch_max": max(per_switch.values(), default=0),
            "entries_per_port_max": max(per_port, default=0), "table_limit_per_port": dp.colors,
            "per_switch": dict(sorted(per_switch.items()))}


def row(name: str, origin: str, dp: Any, window: Any, groups: int, refused: dict[int, str], installs: list[dict],
        problems: list[str], failover: str) -> dict[str, Any]:
    """One router's row of the table and of the JSON."""
    use = table_use(dp)
    return {"algorithm": name, "origin": origin, "groups": groups, "placed": groups - len(refused),
            "refused": {str(k): v for k, v in sorted(refused.items())}, "trees": len(dp.trees()),
            "install_updates": sum(o["updates"] for o in installs), **use,
            "window": asdict(window) | {"exact": window.exact, "counters_ok": window.counters_ok},
            "readback_ok": not problems, "readback_problems": problems[:5], "failover": failover,
            "checks": {"exactly_once": window.exact and window.outsider_delivered == 0,
                       "counters": window.copies_model_ok and window.counters_ok
                       and window.filtered == window.filtered_model,
                       "table_limit": use["entries_per_port_max"] <= dp.colors,
                       "readback": not problems}}


def run_algorithms(net: Any, fabric: Any, h: Any, cfg: Any, frames: dict[str, bytes], groups: list[Any],
                   say: Any) -> tuple[list[dict[str, Any]], dict[str, set[int]]]:
    """Every router of ``cfg.algorithms`` in turn (module docstring); their rows, and what the hosts are joined to
    at the end (nothing)."""
    from dcnlab.controller.multicast.dataplane import MulticastDataplane
    from dcnlab.controller.multicast.registry import RouterPlanner

    rows: list[dict[str, Any]] = []
    joined: dict[str, set[int]] = {}
    for i, name in enumerate(cfg.algorithms):
        planner = RouterPlanner(h, name, cfg.colors)
        dp = MulticastDataplane(net.controller, h, cfg.colors, planner=planner)
        run = Run(net, fabric, dp, cfg, frames, say, joined=joined)
        installs = [asdict(dp.add_group(g.mgid, g.members)) for g in groups]
        sync_membership(run)
        say(f"{name}: installed {len(dp.groups())} of {len(groups)} groups: "
            f"{sum(o['updates'] for o in installs)} updates")
        window = run_window(run, f"{name}", FLOW_FIRST + i, cfg.count, model=True)[0]
        rows.append(row(name, planner.algo.origin, dp, window, len(groups), planner.refused, installs, dp.verify(),
                        FAILOVER_NOTE))
        planner.clear()
        dp.sync()
        sync_membership(run)
        joined = run.joined
    return rows, joined
