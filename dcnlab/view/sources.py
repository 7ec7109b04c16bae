"""Where the page's data comes from: a plan on the model backend, or a running fabric.

A source answers ``topology()``, ``trees()``, ``rates()``, ``switch(name)`` and ``link(a, b)`` with
JSON-ready objects; :mod:`dcnlab.view.server` only serves them.

* :class:`PlanSource`: a fabric and the planner's trees (``dcnlab plan ... --view``); no traffic,
  links a plan failed (``plan cist --fail``) shown cut.
* :class:`LiveSource`: a running fabric (its namespace), sampled once a second; a switch read back
  through ``reader`` (P4Runtime tables and counters, Thrift registers), bounded by ``read_timeout``.
"""

from __future__ import annotations

import concurrent.futures as cf
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.topos.model import Fabric
from dcnlab.view import rates as rates_mod
from dcnlab.view.drops import INTERVAL as DROP_INTERVAL
from dcnlab.view.drops import DropSample, losses
from dcnlab.view.flows import ViewFlow, ViewTenant, resolve_flows
from dcnlab.view.layout import topology as make_topology
from dcnlab.view.trees import ViewTree, resolve

MAX_ENTRIES = 200
"""Entries shown per table (the rest counted)."""
MAX_CELLS = 64
"""Non-zero counter or register cells shown per array."""

Reader = Callable[[str], dict[str, Any]]


class Source:
    live = False

    def __init__(self, fabric: Fabric, trees: Sequence[ViewTree] = (), max_nodes: int | None = None) -> None:
        self.fabric = fabric
        self._topo = make_topology(fabric) if max_nodes is None else make_topology(fabric, max_nodes)
        self._trees = resolve(trees, self._topo) | {"version": 0}
        self._tree_list = list(trees)
        self._opener: Any = None
        self._open_lock = threading.Lock()
        self._flows: dict[str, Any] = {"flows": [], "tenants": [], "version": 0}
        self._links = {frozenset((l.a, l.b)) for l in fabric.links()} if not self._topo["aggregated"] else set()

    def topology(self) -> dict[str, Any]:
        return {k: v for k, v in self._topo.items() if not k.startswith("_")} | {"live": self.live}

    def trees(self) -> dict[str, Any]:
        return self._trees

    def set_trees(self, trees: Sequence[ViewTree]) -> None:
        """Replace the trees (an experiment added or moved groups); the page sees the new ``trees`` version
        in its next rates and reloads them, keeping the picked tree if it is still there."""
        self._trees = resolve(trees, self._topo) | {"version": self._trees["version"] + 1}
        self._tree_list = list(trees)
        self._opener = None              # opened blocks carry the trees: computed again

    def block(self, block_id: str) -> dict[str, Any] | None:
        """An aggregated drawing's block opened into its members or sub-blocks (:mod:`dcnlab.view.opening`);
        None for an id that names no block (or a drawing without blocks)."""
        if not self._topo["aggregated"]:
            return None
        with self._open_lock:            # one opening at a time: the first one indexes every node
            if self._opener is None:
                from dcnlab.view.opening import Opener
                self._opener = Opener(self.fabric, self._topo)
            return self._opener.detail(block_id, self._tree_list)

    def flows(self) -> dict[str, Any]:
        return self._flows

    def set_flows(self, flows: Sequence[ViewFlow], tenants: Sequence[ViewTenant] = (),
                  bottleneck: tuple[str, str] | None = None, bottleneck_bps: float | None = None,
                  note: str = "", sent: bool = False) -> None:
        """Replace the tenants' flows (:mod:`dcnlab.view.flows`); the page sees the new ``flows`` version in
        its next rates and redraws them."""
        self._flows = resolve_flows(flows, tenants, self._topo, bottleneck, bottleneck_bps, note, sent) | {
            "version": self._flows["version"] + 1}

    def rates(self) -> dict[str, Any]:
        return {"dt": 0, "links": {}, "state": {}, "max": 0.0, "note": "model backend: no traffic",
                "trees": self._trees["version"], "flows": self._flows["version"]}

    def switch(self, name: str) -> dict[str, Any]:
        return {"switch": name, "note": "model backend: no switch to read"}

    def link(self, a: str, b: str) -> dict[str, Any]:
        return {"link": [a, b], "note": "model backend: no counters"}

    def has_node(self, name: str) -> bool:
        try:
            self.fabric.node(name)
            return True
        except KeyError:
            return False

    def has_link(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self._links

    def close(self) -> None:
        pass


class PlanSource(Source):
    """A plan on the model backend; ``cut``: node pairs of failed links, switches whose links all failed."""

    def __init__(self, fabric: Fabric, trees: Sequence[ViewTree] = (), cut: Iterable[tuple[str, str]] = (),
                 max_nodes: int | None = None) -> None:
        super().__init__(fabric, trees, max_nodes)
        self._cut = rates_mod.rates(self._topo, None, rates_mod.Sample(0.0, {}, {p: "cut" for p in cut}))["state"]

    def rates(self) -> dict[str, Any]:
        return super().rates() | {"state": self._cut}


class LiveSource(Source):
    live = True

    def __init__(self, fabric: Fabric, netns: str, reader: Reader | None = None, trees: Sequence[ViewTree] = (),
                 interval: float = 1.0, read_timeout: float = 5.0,
                 take: Callable[[], rates_mod.Sample] | None = None,
                 drops: Callable[[], DropSample] | None = None, drop_interval: float = DROP_INTERVAL,
                 flows_file: Path | None = None) -> None:
        """``drops``: one reading of the switches' drop counters (:mod:`dcnlab.view.drops`), taken every
        ``drop_interval`` seconds in a thread of its own; None: the page says no counters are read.
        ``flows_file``: where a running experiment publishes its tenants' flows
        (:func:`dcnlab.view.flows.published_flows`), read again with each new sample."""
        self.flows_file = flows_file
        super().__init__(fabric, trees)
        links = list(fabric.links())
        self.reader, self.read_timeout = reader, read_timeout
        self.sampler = rates_mod.Sampler(take or (lambda: rates_mod.sample_netns(fabric, netns, links)), interval).start()
        self.drops = rates_mod.Sampler(drops, drop_interval).start() if drops is not None else None
        self._pool = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="view-read")
        self._cache: tuple[Any, dict[str, Any]] | None = None

    def rates(self) -> dict[str, Any]:
        prev, last = self.sampler.latest()
        if last is None:
            return super().rates() | {"note": self.sampler.error or "first sample pending"}
        if self._cache is None or self._cache[0] is not last:
            self._cache = (last, rates_mod.rates(self._topo, prev, last))
            if self.flows_file is not None:
                self._published(prev, last)
        out = dict(self._cache[1]) | {"trees": self._trees["version"], "flows": self._flows["version"]}
        if self.drops is None:
            out["drops"] = {"counted": None, "note": "drop counters are not read by this view", "switches": {}}
        else:
            out["drops"] = losses(*self.drops.latest())
            if self.drops.error:
                out["drops"]["note"] = self.drops.error
        if self.sampler.error:
            out["note"] = self.sampler.error
        return out

    def _published(self, prev: rates_mod.Sample | None, last: rates_mod.Sample) -> None:
        """The experiment's flows (if it published any) with their rates over the last two samples."""
        import json

        from dcnlab.view.flows import published_flows
        assert self.flows_file is not None
        try:
            doc = json.loads(self.flows_file.read_text())
        except (OSError, ValueError):
            return                               # not published (yet), or being written: next sample
        try:
            got = published_flows(doc, self.fabric, last.counts, prev.counts if prev else None,
                                  last.t - prev.t if prev else 0.0)
        except (KeyError, TypeError, ValueError) as e:
            self.set_flows([], note=f"published flows unreadable: {e}"[:200])
            return
        self.set_flows(got["flows"], got["tenants"], got["bottleneck"], got["bottleneck_bps"], got["note"], True)

    def link(self, a: str, b: str) -> dict[str, Any]:
        prev, last = self.sampler.latest()
        return rates_mod.link_detail(last, prev, a, b)

    def switch(self, name: str) -> dict[str, Any]:
        """Read back in a worker thread; after ``read_timeout`` seconds the answer says so (the read goes on)."""
        if self.reader is None:
            return {"switch": name, "note": "no P4Runtime access from this view"}
        fut = self._pool.submit(self.reader, name)
        try:
            return fut.result(timeout=self.read_timeout)
        except cf.TimeoutError:
            return {"switch": name, "error": f"read-back timed out after {self.read_timeout:g} s"}
        except Exception as e:     # noqa: BLE001 - shown on the page, not a server error
            return {"switch": name, "error": f"{type(e).__name__}: {e}"[:500]}

    def close(self) -> None:
        self.sampler.stop()
        if self.drops is not None:
            self.drops.stop()
        self._pool.shutdown(wait=False, cancel_futures=True)


def read_switch(name: str, p4info: Any, read_table: Callable[[str], list[Any]],
                read_counter: Callable[[str], list[Any]],
                read_registers: Callable[[list[str]], dict[str, Any]] | None = None) -> dict[str, Any]:
    """A switch's tables (entries as text, at most :data:`MAX_ENTRIES` each), counters and registers
    (non-zero cells, at most :data:`MAX_CELLS` each); a part that fails says why instead."""
    out: dict[str, Any] = {"switch": name, "tables": {}, "counters": {}, "registers": {}}
    for t in sorted(p4info.tables):
        try:
            entries = read_table(t)
            out["tables"][t] = {"count": len(entries), "entries": [str(e) for e in entries[:MAX_ENTRIES]]}
        except Exception as e:     # noqa: BLE001
            out["tables"][t] = {"error": str(e)[:300]}
    for c in sorted(p4info.externs["counter"]):
        try:
            cells = [x for x in read_counter(c) if x.packets or x.bytes]
            out["counters"][c] = {"nonzero": len(cells),
                                  "cells": [[x.index, x.packets, x.bytes] for x in cells[:MAX_CELLS]]}
        except Exception as e:     # noqa: BLE001
            out["counters"][c] = {"error": str(e)[:300]}
    regs = sorted(p4info.externs["register"])
    if read_registers is not None and regs:
        try:
            values = read_registers(regs)
        except Exception as e:     # noqa: BLE001
            values = {r: str(e)[:300] for r in regs}
        for r in regs:
            vals = values.get(r, "not read")
            if isinstance(vals, str):
                out["registers"][r] = {"error": vals}
                continue
            cells = [[i, v] for i, v in enumerate(vals) if v]
            out["registers"][r] = {"size": len(vals), "nonzero": len(cells), "cells": cells[:MAX_CELLS]}
    return out


def thrift_registers(thrift: Any) -> Callable[[list[str]], dict[str, list[int] | str]]:
    """Every register of a switch in one ``simple_switch_CLI`` (one process, not one per register)."""
    def read(names: list[str]) -> dict[str, list[int] | str]:
        outs = thrift.run([f"register_read {r}" for r in names])
        result: dict[str, list[int] | str] = {}
        for r, res in zip(names, outs):
            m = re.search(r"=\s*(.*)$", res, re.S)
            body = m.group(1).strip() if m else None
            result[r] = ([int(v) for v in body.split(",")] if body else []) if body is not None else res[:300]
        return result
    return read


def controller_reader(controller: Any) -> Reader:
    """Read back through dcnlab's running controller (P4Runtime) and its Thrift channels."""
    def read(name: str) -> dict[str, Any]:
        info = controller.pipeline_of(name).p4info
        client = controller.client(name)
        return read_switch(name, info, lambda t: client.read_table(info, t), lambda c: client.read_counter(info, c),
                           thrift_registers(controller.thrift(name)))
    return read
