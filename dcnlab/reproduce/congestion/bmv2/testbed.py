"""The experiment's testbed: one emulated fabric with its bottleneck queue and marking, for every scenario.

One emulated fabric runs every scenario in turn. Host 0 is the receiver and hosts 1-4 (sender slots 0-3)
send; the default fabric, ``dragonfly:p=5,a=1,h=1`` (two BMv2 switches with five hosts each), has all
five on one switch, so every packet crosses a single BMv2: on a busy 2-core machine each extra BMv2 hop
loses packets when its process is starved. The bottleneck is the BMv2 egress queue of the receiver's
port, rate-limited to ``rate_pps`` packets/s with ``queue_depth`` packets of buffer over Thrift (the
queue must live inside BMv2, not in tc, for BMv2's ECN marking to see it). That port marks CE (the FECN) as
``p4src/ecn.p4`` does; the receiver host reflects BECNs; each sender runs Algorithm 1 and 2
(:mod:`dcnlab.traffic.congestion_agent`). Any fabric with 5 hosts works (``--spec``, e.g. ``bcube:n=5,k=0``).

Decisions (ours: the paper's testbed is InfiniBand hardware, and none of this is in it):

* **Priority.** The emulation measures time: a sender thread that a busy machine starves sends less
  than its CCT allows, and a starved BMv2 drains its queue late. The machine is shared (other work runs
  numba and compilers on both cores), so the run's own BMv2 switches and host agents, every thread,
  get niceness ``nice`` = -10 (:func:`renice`; root, as the emulation needs anyway). Nothing else is
  touched, and the processes die with the run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dcnlab.controller.congestion.dataplane import CongestionDataplane
from dcnlab.reproduce.congestion.bmv2.config import EmuConfig, Progress
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)


@dataclass
class Testbed:
    """A running emulation prepared for the experiment."""

    net: Any
    dp: CongestionDataplane
    receiver: str
    senders: list[str]
    bottleneck: tuple[str, int]
    cfg: EmuConfig


def renice(pids: Sequence[int], nice: int) -> int:
    """Set the niceness of every thread of ``pids`` (Linux: a thread has its own; threads created later
    inherit their creator's). Returns the number of threads changed; processes gone meanwhile are skipped."""
    n = 0
    for pid in pids:
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except FileNotFoundError:
            continue
        for tid in tids:
            try:
                os.setpriority(os.PRIO_PROCESS, tid, nice)
                n += 1
            except ProcessLookupError:
                continue
    return n


@contextmanager
def testbed(cfg: EmuConfig, progress: Progress | None = None) -> Iterator[Testbed]:
    """Bring the fabric up (no ECMP: one path per pair), set the bottleneck queue and its marking."""
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.topos.spec import parse_spec

    say = progress or (lambda m: log.info("%s", m))
    fabric = parse_spec(cfg.spec)
    if fabric.num_hosts() < 5:
        raise UserError(f"{cfg.spec} has {fabric.num_hosts()} hosts; the experiment needs 5 "
                        f"(a receiver and 4 senders), e.g. bcube:n=5,k=0")
    net = FabricNetwork(fabric, NetOptions(ecmp=False), progress=say)
    with net:
        dp = CongestionDataplane(net.controller, packet_bytes=cfg.frame_bytes)
        bottleneck = fabric.host_attachment(0)
        tb = Testbed(net, dp, fabric.host_name(0), [fabric.host_name(i) for i in range(1, 5)], bottleneck, cfg)
        if cfg.nice is not None:
            pids = [sw.pid for sw in net.switches.values() if sw.pid] + [a.pid for a in net.agents.values()]
            n = renice(pids, cfg.nice)
            say(f"niceness {cfg.nice} for {n} threads of {len(pids)} switch and agent processes")
        dp.set_bottleneck(bottleneck[0], [bottleneck[1]], cfg.rate_pps, cfg.queue_depth)
        dp.set_marking(bottleneck[0], [bottleneck[1]], cfg.switch_params())
        say(f"bottleneck {bottleneck[0]} port {bottleneck[1]}: {cfg.rate_pps} packets/s, depth {cfg.queue_depth}, "
            f"marking from {cfg.switch_params().threshold_packets} packets, 1 in {cfg.marking_rate + 1}")
        yield tb
