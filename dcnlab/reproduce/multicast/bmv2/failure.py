"""The failure window: a link is cut, the controller told, the groups of the broken tree moved to their second
tree (step 5 of the timeline, :mod:`dcnlab.reproduce.multicast.bmv2.timeline`), and what it cost.
"""

from __future__ import annotations

import logging
import re
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dcnlab.emu.netns import command
from dcnlab.reproduce.multicast.bmv2.checks import WindowResult
from dcnlab.reproduce.multicast.bmv2.setup import EmulationError, Run
from dcnlab.reproduce.multicast.bmv2.traffic import FLOW_FAILURE, run_window
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

_MONITOR_LINE = re.compile(r"^(?:Deleted\s+)?\d+:\s+([^:@\s]+)(?:@\S+)?:\s+<([^>]*)>")


class LinkWatcher:
    """``ip -o monitor link`` in the run's namespace: calls ``on_down(interface, perf_counter time)``
    the first time an interface loses its carrier (no ``LOWER_UP``)."""

    def __init__(self, net: Any, on_down: Callable[[str, float], None]) -> None:
        import os

        self.on_down = on_down
        self.down: dict[str, float] = {}
        self.errors: list[str] = []
        self.proc = subprocess.Popen(command(net.netns, "ip", "-o", "monitor", "link"), stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, **net.run.tag))
        net.run.record_process("monitor:links", self.proc.pid, "ip")
        self.thread = threading.Thread(target=self._loop, name="link-watcher", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        from dcnlab.controller.runtime.errors import RuntimeErrorBase

        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            now = time.perf_counter()
            m = _MONITOR_LINE.match(line)
            if not m or line.startswith("Deleted"):
                continue
            name, flags = m.group(1), set(m.group(2).split(","))
            if "LOWER_UP" in flags or name in self.down:
                continue
            self.down[name] = now
            try:
                self.on_down(name, now)
            except (RuntimeErrorBase, UserError, ValueError) as e:   # reported; the watcher keeps watching
                log.error("failover for %s failed: %s", name, e)
                self.errors.append(f"{name}: {type(e).__name__}: {e}")

    def close(self) -> None:
        from dcnlab.traffic.hostctl import stop_child
        stop_child(self.proc)
        self.thread.join(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def choose_cut(dp: Any) -> int:
    """The link above L0 of a first-plane tree carried by the most groups (ties: highest level, then lowest
    id); an L0 up-link only if no tree reaches above L0.  Above L0 both ends belong to the first plane only,
    which matters for the ``down`` cut (see :data:`CUTS`)."""
    h = dp.h
    load: Counter[int] = Counter()
    for t in dp.trees():
        if t.plane == 0:
            for lk in t.links:
                if lk >= h.num_hosts:
                    load[lk] += t.tfi
    if not load:
        raise UserError("no group's tree crosses a switch-to-switch link: nothing to cut")
    return max(load, key=lambda lk: (h.link_level(lk) >= 1, load[lk], h.link_level(lk), -lk))


@dataclass(frozen=True)
class Failover:
    cut: str
    """How the link was cut (:data:`CUTS`)."""
    link: tuple[str, str]
    interfaces: tuple[str, str]
    cut_at: float
    """Seconds into the failure window."""
    detected: bool
    detection_seconds: float | None
    """From the cut until the controller was told (``down``: the watcher's notice of the carrier loss;
    ``drop``: the injector's port-status notification right after the cut)."""
    failover_seconds: float | None
    """From the watcher's notice until the edge entries were rewritten."""
    compute_seconds: float | None
    write_seconds: float | None
    total_seconds: float | None
    """From the cut until traffic was switched."""
    groups: tuple[int, ...]
    trees: tuple[tuple[int, int], ...]
    updates: int
    switches: int
    rescued: int
    """Receptions in the failure window that arrived in fewer copies than before the cut (one tree's copy was
    lost; the other delivered)."""
    lost_while_switching: int
    timeline: tuple[tuple[float, float, float], ...] = ()
    """(seconds after the cut, copies received / copies the model gave before the cut, for the moved groups and
    for the others) per bin of one sending period, by message send time."""
    compute_cpu_seconds: float | None = None


def failure_window(run: Run, link: int) -> tuple[WindowResult, Failover]:
    from dcnlab.emu import faults
    from dcnlab.emu.network import intf_name

    cfg, dp = run.cfg, run.dp
    u, up, d, dn = dp.h.link_ends(link)
    intfs = (intf_name(u, up), intf_name(d, dn))
    port_of = {intfs[0]: (u, up), intfs[1]: (d, dn)}
    state: dict[str, Any] = {}
    done = threading.Event()

    def on_down(intf: str, when: float) -> None:
        if intf not in port_of or "stats" in state:
            return
        state["detected"] = when
        stats = dp.port_down(*port_of[intf])
        state["stats"] = stats
        state["switched"] = time.perf_counter()
        done.set()

    def cut(t_window: float) -> None:
        time.sleep(max(0.0, cfg.cut_at - (time.perf_counter() - t_window)))
        state["cut"] = time.perf_counter()
        state["cut_wall"] = time.time()
        state["cut_offset"] = state["cut"] - t_window
        faults.cut(run.net.netns, intfs, cfg.cut)   # "down": the watcher notices the carrier loss
        if cfg.cut == "drop":
            for intf in intfs:                    # the port-status event a switch raises on loss of signal
                on_down(intf, time.perf_counter())

    watcher = LinkWatcher(run.net, on_down) if cfg.cut == "down" else None
    try:
        if watcher is not None:
            time.sleep(0.2)   # let ip monitor subscribe
        result, reports, meta = run_window(run, "failure", FLOW_FAILURE, cfg.fail_count, model=False, during=cut)
        detected = done.wait(cfg.detect_timeout)
    finally:
        if watcher is not None:
            watcher.close()
    if not detected:   # make the controller react anyway, so the next window runs on a consistent state
        dp.port_down(u, up)
    if watcher is not None and watcher.errors:
        raise EmulationError("failover failed: " + "; ".join(watcher.errors))
    stats = state.get("stats")
    moved = tuple(stats.groups) if stats else ()
    rescued, lost_switching, timeline = _copy_timeline(run, reports, meta, meta["preds"], state, moved)
    fo = Failover(cfg.cut, (u, d), intfs, state.get("cut_offset", cfg.cut_at), detected,
                  state["detected"] - state["cut"] if detected else None,
                  state["switched"] - state["detected"] if detected else None,
                  stats.compute_seconds if stats else None, stats.write_seconds if stats else None,
                  state["switched"] - state["cut"] if detected else None, moved,
                  tuple(stats.trees) if stats else (), stats.updates if stats else 0,
                  stats.switches if stats else 0, rescued, lost_switching, timeline,
                  stats.compute_cpu_seconds if stats else None)
    return result, fo


def _copy_timeline(run: Run, reports: dict[str, dict], meta: dict, preds: dict, state: dict,
                   moved: tuple[int, ...]) -> tuple[int, int, tuple[tuple[float, float, float], ...]]:
    """Receptions that came in fewer copies than the model's count before the cut (one tree's copy was lost,
    the other delivered: rescued) or in none (lost), and, per bin of one sending period, the copies received
    as a fraction of that count, for the moved groups and for the others."""
    info = {h.name: h for h in run.fabric.hosts()}
    name_of_ip = {h.ip: h.name for h in info.values()}
    rate = run.cfg.rate_pps
    cut_wall = state.get("cut_wall")
    rescued = lost = 0
    bins: dict[int, list[list[int]]] = {}
    for host, rep in reports.items():
        node = info[host].node
        for mgid_s, by_src in rep["groups"].items():
            mgid = int(mgid_s)
            for src_ip, flows in by_src.items():
                f = flows.get(str(FLOW_FAILURE))
                src = name_of_ip.get(src_ip)
                if f is None or src is None or (src, mgid) not in preds:
                    continue
                want = preds[(src, mgid)][(node, host)]
                start = meta["starts"].get(src)
                for seq, copies in enumerate(f.get("seqs", [])):
                    if copies == 0:
                        lost += 1
                    elif copies < want:
                        rescued += 1
                    if start is not None and cut_wall is not None:
                        b = int((start + seq / rate - cut_wall) * rate // 1)
                        slot = bins.setdefault(b, [[0, 0], [0, 0]])[0 if mgid in moved else 1]
                        slot[0] += copies
                        slot[1] += want
    timeline = tuple(((b + 0.5) / rate, (m[0] / m[1]) if m[1] else float("nan"),
                      (o[0] / o[1]) if o[1] else float("nan")) for b, (m, o) in sorted(bins.items()))
    return rescued, lost, timeline
