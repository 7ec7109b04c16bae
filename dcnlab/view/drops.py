"""Lost packets where the program counts them (``/api/rates``' ``drops``).

A switch's program counts drops in some of its P4 counters; the view reads those counters (P4Runtime
counter reads, as the click-a-switch panel does) every :data:`INTERVAL` seconds and shows, per switch,
the packets per second they grew by. Which counters are drops:

* dcnlab's own program (``p4src/dcnlab.p4``): ``tenant_dropped`` (every cell: a tenant's packets its meter
  found red and dropped, ``meter.p4``) and ``agg_packets`` at the outcomes that drop a chunk (duplicate,
  stale, malformed, ``agg_drop``; ``aggregation.p4``);
* any other program (a lab's): every counter whose name holds ``drop`` (any case), every cell.

Choices: dcnlab's program counts no drop per port (its meters drop in ingress, per tenant; the traffic
manager's queue drops are not visible to the program), so a loss is shown per switch with its counter
and cell (tenant index, outcome, or index), not per port; a program with none of these counters
"counts no drops", and the page says so instead of showing zero. Losses the program does not count
(a queue overflow in BMv2) show only as the packets a switch forwards short of what it gets (the red
outline of :func:`dcnlab.view.rates.node_rates`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

INTERVAL = 2.0
"""Seconds between two reads of every switch's drop counters (a P4Runtime read per counter and switch)."""

KNOWN: dict[str, dict[int, str] | None] = {
    "tenant_dropped": None,
    "agg_packets": {2: "duplicate", 3: "stale", 4: "malformed", 8: "agg_drop"},
}
"""dcnlab's program: counter -> the cells that count drops and their names (None: every cell)."""
CELL_NAMES = {"tenant_dropped": "tenant"}

Cells = dict[tuple[str, int], int]
"""(counter, index) -> packets so far."""


def drop_counters(counters: Iterable[str]) -> dict[str, dict[int, str] | None]:
    """Of a program's counter names, those that count drops, with their drop cells (None: every cell)."""
    out: dict[str, dict[int, str] | None] = {}
    for c in counters:
        short = c.rsplit(".", 1)[-1]
        if short in KNOWN:
            out[c] = KNOWN[short]
        elif "drop" in short.lower():
            out[c] = None
    return out


@dataclass(frozen=True)
class DropSample:
    t: float
    cells: dict[str, Cells]
    """Per switch whose program counts drops: its drop cells' packets."""
    uncounted: frozenset[str] = field(default_factory=frozenset)
    """Switches whose program counts no drops."""
    errors: dict[str, str] = field(default_factory=dict)


def take_drops(switches: Iterable[str], counters_of: Callable[[str], Iterable[str]],
               read: Callable[[str, str], list[Any]], now: Callable[[], float]) -> DropSample:
    """One sample: ``counters_of(switch)`` names its program's counters, ``read(switch, counter)`` gives its
    cells (objects with ``index`` and ``packets``); a switch whose read fails is said in ``errors``."""
    cells: dict[str, Cells] = {}
    uncounted, errors = set(), {}
    t = now()
    for sw in switches:
        try:
            which = drop_counters(counters_of(sw))
            if not which:
                uncounted.add(sw)
                continue
            got: Cells = {}
            for c, keep in which.items():
                for x in read(sw, c):
                    i = x.index or 0
                    if keep is None or i in keep:
                        got[(c, i)] = int(x.packets)
            cells[sw] = got
        except Exception as e:     # noqa: BLE001 - shown on the page
            errors[sw] = f"{type(e).__name__}: {e}"[:200]
    return DropSample(t, cells, frozenset(uncounted), errors)


def losses(before: DropSample | None, after: DropSample | None) -> dict[str, Any]:
    """``{"counted": bool, "dt", "switches": {sw: {"pps", "total", "cells": [[label, pps, total]]}},
    "uncounted": [...], "note"}``: packets/s lost per switch over the two samples (switches with a loss
    only), and ``counted`` false when no switch's program counts drops."""
    if after is None:
        return {"counted": None, "note": "drop counters not read yet", "switches": {}}
    if not after.cells and not after.errors:
        return {"counted": False, "note": "this program counts no drops", "switches": {},
                "uncounted": sorted(after.uncounted)}
    dt = after.t - before.t if before is not None else 0.0
    out: dict[str, Any] = {}
    for sw, cells in after.cells.items():
        old = before.cells.get(sw, {}) if before is not None else {}
        rows, pps = [], 0.0
        for (c, i), n in sorted(cells.items()):
            d = max(n - old.get((c, i), n), 0) / dt if dt > 0 else 0.0
            if n or d:
                known = KNOWN.get(c.rsplit(".", 1)[-1])
                label = f"{c}[{known[i] if known else CELL_NAMES.get(c.rsplit('.', 1)[-1], 'index')}"
                label += "]" if known else f" {i}]"
                rows.append([label, round(d, 1), n])
                pps += d
        if rows:
            out[sw] = {"pps": round(pps, 1), "total": sum(r[2] for r in rows), "cells": rows}
    return {"counted": True, "dt": round(dt, 3), "switches": out, "uncounted": sorted(after.uncounted),
            "errors": after.errors, "note": "" if dt > 0 else "first drop reading pending"}


def controller_drops(controller: Any, switches: Iterable[str]) -> Callable[[], DropSample]:
    """A :class:`DropSample` taker reading through dcnlab's running controller (P4Runtime)."""
    import time
    names = list(switches)

    def counters_of(sw: str) -> Iterable[str]:
        return controller.pipeline_of(sw).p4info.externs["counter"]

    def read(sw: str, counter: str) -> list[Any]:
        return controller.client(sw).read_counter(controller.pipeline_of(sw).p4info, counter)
    return lambda: take_drops(names, counters_of, read, time.monotonic)
