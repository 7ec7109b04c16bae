"""What one machine runs for a cluster run: its run namespace, veths, tunnel ends, BMv2 processes and
its share of the all-pairs check.

This machine's :class:`Side` lives in the dcnlab process and uses the run's own directory; another
machine's lives in that machine's agent (:mod:`dcnlab.emu.cluster.agent`) with a run directory of
its own there, named ``<run id>-m<i>``, recorded (namespace first, then every process) exactly as a
one-machine run records itself, so that ``dcnlab clean`` *on that machine* can also finish the job.
The pieces are the one-machine emulator's: :mod:`dcnlab.emu.netns`, :mod:`dcnlab.emu.links`,
:mod:`dcnlab.emu.offloads`, :mod:`dcnlab.emu.bmv2`.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from dcnlab.emu import bmv2, links, netns, offloads
from dcnlab.emu.cluster import tunnels
from dcnlab.emu.cluster.probe import ProbeSide
from dcnlab.emu.reachability import ProbeHost
from dcnlab.emu.rundir import RunDir

log = logging.getLogger(__name__)

__all__ = ["Side", "config_from_dict", "config_to_dict"]


def config_to_dict(cfg: bmv2.BMv2Config) -> dict[str, Any]:
    d = asdict(cfg)
    d["ports"] = {str(k): v for k, v in cfg.ports.items()}
    d["run_dir"] = str(cfg.run_dir)
    d["socket_dir"] = str(cfg.socket_dir) if cfg.socket_dir is not None else None
    d["extra"] = list(cfg.extra)
    return d


def config_from_dict(d: dict[str, Any]) -> bmv2.BMv2Config:
    d = dict(d)
    d["ports"] = {int(k): v for k, v in d["ports"].items()}
    d["run_dir"] = Path(d["run_dir"])
    d["socket_dir"] = Path(d["socket_dir"]) if d.get("socket_dir") else None
    d["extra"] = tuple(d.get("extra") or ())
    return bmv2.BMv2Config(**d)


def reap_tagged(run_id: str, grace: float = 2.0) -> None:
    """Stop what is left here with the run's tag, but this process: the host shells, whose SSH session
    the coordinator closed (SIGHUP, as a hang-up would; an interactive bash ignores SIGTERM), then SIGKILL."""
    from dcnlab.emu.cleanup import stop_processes, tagged

    stop_processes({p for p in tagged(run_id) if p != os.getpid()}, grace=grace, first=signal.SIGHUP)


class Side:
    """One machine's part of a cluster run."""

    def __init__(self, run: RunDir, netns_name: str, owns_run: bool = True) -> None:
        """``owns_run``: remove the run's sockets and mark it finished on :meth:`stop` (an agent's run;
        this machine's run is the coordinator's, which finishes it once every machine is clean)."""
        self.run = run
        self.netns = netns_name
        self.owns_run = owns_run
        self.switches: dict[str, bmv2.BMv2Process] = {}
        self.probe: ProbeSide | None = None
        self._reported: set[str] = set()
        self._stopped = False

    # -- bring-up ----------------------------------------------------------------
    def setup(self) -> dict[str, Any]:
        """Create the run's namespace here (recorded first). Returns what the coordinator needs."""
        self.run.record_netns(self.netns)
        netns.create(self.netns)
        return {"run_dir": str(self.run.path), "sockets": str(self.run.sockets), "netns": self.netns}

    def record(self, processes: Sequence[tuple[str, int, str]]) -> None:
        """Record processes started here by someone else (the remote host shells)."""
        for name, pid, exe in processes:
            self.run.record_process(name, pid, exe)

    def links(self, veths: Sequence[links.VethPair], ends: Sequence[tunnels.TunnelEnd], switch_ends: Sequence[str],
              tc: Sequence[str]) -> None:
        """Veths (switch ends in the run namespace, host ends in the hosts), tunnel ends, offloads off on
        every switch-side interface, then tc shaping."""
        links.check_names([*switch_ends, *(p.b for p in veths if p.b_netns_pid)])
        links.create(self.netns, veths)
        tunnels.create(self.netns, ends)
        if switch_ends:
            offloads.disable(self.netns, list(switch_ends))
        if tc:
            links.shape(self.netns, list(tc))

    def start_switches(self, configs: Sequence[bmv2.BMv2Config]) -> dict[str, int]:
        out = {}
        for cfg in configs:
            sw = bmv2.BMv2Process(cfg)
            sw.start()
            self.switches[cfg.name] = sw
            assert sw.pid is not None
            self.run.record_process(f"switch:{cfg.name}", sw.pid, "simple_switch_grpc")
            out[cfg.name] = sw.pid
        return out

    def wait_ready(self, timeout: float) -> None:
        bmv2.wait_ready(list(self.switches.values()), timeout)

    def failures(self) -> list[tuple[str, int, str]]:
        """Switches that died since the last call: (name, exit status, log tail)."""
        out = []
        for name, sw in self.switches.items():
            rc = sw.failed()
            if rc is not None and name not in self._reported:
                self._reported.add(name)
                out.append((name, rc, sw.log_tail()))
        return out

    # -- all-pairs check ---------------------------------------------------------------
    def probe_open(self, hosts: Sequence[ProbeHost], names: Sequence[str], ips: Sequence[str], port: int) -> None:
        self.probe_close()
        self.probe = ProbeSide(hosts, names, ips, port)

    def probe_close(self) -> None:
        if self.probe is not None:
            self.probe.close()
            self.probe = None

    # -- teardown -----------------------------------------------------------------
    def stop(self) -> float:
        """Stop every switch, delete the namespace (and with it every veth and tunnel end), remove the
        sockets, mark the run finished. Idempotent; every step runs; the first error is raised."""
        if self._stopped:
            return 0.0
        self._stopped = True
        t = time.perf_counter()
        errors: list[BaseException] = []
        steps = [self.probe_close, lambda: bmv2.stop_all(list(self.switches.values())), lambda: netns.delete(self.netns)]
        if self.owns_run:
            steps += [lambda: reap_tagged(self.run.id), self.run.remove_sockets, self.run.mark_finished]
        for step in steps:
            try:
                step()
            except Exception as e:  # noqa: BLE001 - logged, teardown goes on, first re-raised
                log.error("teardown on this machine: %s", e)
                errors.append(e)
        if errors:
            raise errors[0]
        return time.perf_counter() - t
