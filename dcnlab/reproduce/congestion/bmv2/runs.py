"""One scenario run on the testbed: flows started, pushed and stopped on time, meters set, the agents'
bins measured; the model's prediction comes along.

Decisions (ours: the paper's testbed is InfiniBand hardware, and none of this is in it):

* **NIC rate** = ``rate_pps``: a source never sends faster than the link (IB HCA at line rate). CC off
  therefore means "at line rate".
* **Meter bursts** are 50 ms of the tenant's rate, at least 16 packets: senders and BMv2 on a busy
  machine are scheduled in bursts of milliseconds, and a 4-packet bucket drops much of a tenant's
  share then (measured on the loaded machine: a flow of 1000 packets/s through a 1000 packets/s meter
  kept 76% with a 4-packet bucket and 100% with 16).
* **Start.** A new flow starts at ``CCTI_Min`` = 0 (line rate), as an IB QP does.
"""

from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import dataclass

import numpy as np

from dcnlab.controller.congestion import scenarios as sc
from dcnlab.controller.congestion.dataplane import PortMarks, TenantKey
from dcnlab.controller.congestion.fluid import ModelResult
from dcnlab.controller.congestion.params import HcaParams
from dcnlab.controller.congestion.policy import MeterRate
from dcnlab.reproduce.congestion.bmv2.config import EmuConfig, Progress
from dcnlab.reproduce.congestion.bmv2.plans import predict
from dcnlab.reproduce.congestion.bmv2.testbed import Testbed

log = logging.getLogger(__name__)

SPORT_BASE = 40000
METER_BURST_S = 0.05
METER_BURST_PACKETS = 16
START_DELAY_S = 0.3
DRAIN_S = 0.4


@dataclass(frozen=True)
class EmuRun:
    """One scenario on BMv2 and the model's prediction for it, both in emulated seconds."""

    plan: sc.Scenario
    emu: ModelResult
    model: ModelResult
    marks: dict[str, PortMarks]
    senders: dict[str, dict]
    receivers: dict[str, dict]
    load: tuple[float, float]
    """1-minute load average before and after the run."""
    wall_s: float


@dataclass(frozen=True)
class _Event:
    t: float
    order: int
    kind: str
    flow: str = ""
    params: HcaParams | None = None
    tenant: str = ""
    rate_bps: float | None = None


def _events(plan: sc.Scenario) -> list[_Event]:
    """Stops, starts (with the parameters pushed at that instant), pushes, meters, in time order."""
    at_start = {(c.time_s, c.flow): c.params for c in plan.changes}
    ev = []
    for f in plan.flows:
        ev.append(_Event(f.start_s, 1, "start", f.name, at_start.get((f.start_s, f.name), f.params)))
        if math.isfinite(f.stop_s) and f.stop_s < plan.duration_s:
            ev.append(_Event(f.stop_s, 0, "stop", f.name))
    starts = {(f.start_s, f.name) for f in plan.flows}
    ev += [_Event(c.time_s, 2, "push", c.flow, c.params) for c in plan.changes if (c.time_s, c.flow) not in starts]
    ev += [_Event(m.time_s, 3, "meter", tenant=m.tenant, rate_bps=m.rate_bps) for m in plan.meters]
    return sorted(ev, key=lambda e: (e.t, e.order))


def run_plan(tb: Testbed, plan: sc.Scenario, progress: Progress | None = None) -> EmuRun:
    """Run one scenario on the testbed and measure it; the model's prediction comes along."""
    from dcnlab.traffic import congestion_agent as ca

    say = progress or (lambda m: log.info("%s", m))
    cfg, dp, net = tb.cfg, tb.dp, tb.net
    t_wall = time.perf_counter()
    load0 = os.getloadavg()[0]
    routes: dict[str, tuple[int, int]] = plan.meta["routes"]
    ids = {f.name: i + 1 for i, f in enumerate(plan.flows)}
    tenant_index = {t.name: i for i, t in enumerate(plan.tenants)}
    tenant_of = {f.name: f.tenant for f in plan.flows}
    hosts = {name: tb.senders[slot] for name, (slot, _) in routes.items()}
    rx = net.agent(tb.receiver)
    rx_ip = net.addr(tb.receiver).ip
    bsw, bport = tb.bottleneck
    dp.reset_marking_phase(bsw)
    if plan.meta["mode"] == "meter":
        dp.classify(bsw, {TenantKey(net.addr(hosts[f.name]).ip, SPORT_BASE + ids[f.name]): tenant_index[f.tenant]
                          for f in plan.flows})
    else:
        dp.classify(bsw, {})
    before = dp.marks(bsw).get(bport, PortMarks())

    epoch = time.time() + START_DELAY_S
    ports = sorted({port for _, port in routes.values()})
    for port in ports:
        rx.call({"cmd": "congestion.recv_start", "port": port, "becn_every": cfg.becn_every, "epoch": epoch,
                 "bin": cfg.sample_s})
    senders: dict[str, dict] = {}
    running: set[str] = set()
    say(f"{plan.name}: {len(plan.flows)} flows over {plan.duration_s:g} s")
    increase: dict[str, int] = {}
    meters: dict[str, float] = {}
    try:
        for ev in _events(plan):
            delay = epoch + ev.t - time.time()
            if delay > 0:
                time.sleep(delay)
            if ev.kind == "start":
                assert ev.params is not None
                slot_host = hosts[ev.flow]
                req = ca.flow_start_request(ids[ev.flow], rx_ip, routes[ev.flow][1], sport=SPORT_BASE + ids[ev.flow],
                                            size=cfg.frame_bytes, nic_pps=cfg.rate_pps, params=ev.params,
                                            scale=cfg.scale, cc=bool(plan.meta["cc"]), epoch=epoch, bin_s=cfg.sample_s,
                                            cct_size=cfg.cct_size, aggregate=cfg.aggregate, jitter=cfg.jitter,
                                            nic_catch_up=cfg.nic_catch_up)
                net.agent(slot_host).call(req)
                running.add(ev.flow)
            elif ev.kind == "stop":
                senders[ev.flow] = net.agent(hosts[ev.flow]).call({"cmd": "congestion.flow_stop", "flow": ids[ev.flow]})
                running.discard(ev.flow)
            elif ev.kind == "push":
                assert ev.params is not None
                net.agent(hosts[ev.flow]).call({"cmd": "congestion.flow_update", "flow": ids[ev.flow],
                                               "ccti_increase": ev.params.ccti_increase,
                                               "ccti_timer": ev.params.ccti_timer})
            elif ev.kind == "meter" and ev.rate_bps is not None:
                idx = tenant_index[ev.tenant]
                burst = max(METER_BURST_PACKETS * cfg.frame_bytes, int(ev.rate_bps / 8 * METER_BURST_S))
                dp.set_meters(bsw, [MeterRate("bottleneck", ev.tenant, idx, ev.rate_bps, burst)])
                meters[ev.tenant] = ev.rate_bps
            if ev.params is not None:
                increase[ev.flow] = ev.params.ccti_increase
            _publish(tb, plan, hosts, running, increase, meters)
        delay = epoch + plan.duration_s - time.time()
        if delay > 0:
            time.sleep(delay)
    finally:
        for name in sorted(running):
            senders[name] = net.agent(hosts[name]).call({"cmd": "congestion.flow_stop", "flow": ids[name]})
        time.sleep(DRAIN_S)
        receivers = {str(port): rx.call({"cmd": "congestion.recv_stop", "port": port}) for port in ports}
    marks = {"bottleneck": dp.marks(bsw).get(bport, PortMarks()) - before}
    emu = measured_result(plan, cfg, ids, tenant_of, senders, receivers, routes)
    model = predict(plan, cfg)
    run = EmuRun(plan, emu, model, marks, senders, receivers, (load0, os.getloadavg()[0]),
                 time.perf_counter() - t_wall)
    say(f"{plan.name}: done in {run.wall_s:.1f} s; bottleneck marked {marks['bottleneck'].marked} of "
        f"{marks['bottleneck'].packets} packets; load {run.load[0]:.1f} -> {run.load[1]:.1f}")
    return run


def _publish(tb: Testbed, plan: sc.Scenario, hosts: dict[str, str], running: set[str], increase: dict[str, int],
             meters: dict[str, float]) -> None:
    """The running flows, for ``dcnlab view RUN_DIR`` (:func:`dcnlab.view.flows.published_flows`; a small
    file replaced whole at each start, stop, push and meter change); never disturbs the run."""
    import json

    from dcnlab.view.flows import PUBLISHED
    try:
        doc = {"flows": [{"id": f.name, "tenant": f.tenant, "src": hosts[f.name], "dst": tb.receiver,
                          "ccti_increase": increase.get(f.name), "meter_bps": meters.get(f.tenant)}
                         for f in plan.flows if f.name in running],
               "tenants": [{"name": t.name, "weight": t.weight, "meter_bps": meters.get(t.name)} for t in plan.tenants],
               "bottleneck": [tb.bottleneck[0], tb.receiver], "bottleneck_bps": tb.cfg.link_bps,
               "note": f"BMv2 {plan.name}, {'CC on' if plan.meta.get('cc') else 'CC off'}, {plan.meta.get('mode', '')}"}
        tmp = tb.net.run.path / (PUBLISHED + ".tmp")
        tmp.write_text(json.dumps(doc))
        tmp.replace(tb.net.run.path / PUBLISHED)
    except Exception as e:     # noqa: BLE001 - the view is optional; the run goes on
        log.debug("flows not published for the view: %s", e)


def measured_result(plan: sc.Scenario, cfg: EmuConfig, ids: dict[str, int], tenant_of: dict[str, str],
                    senders: dict[str, dict], receivers: dict[str, dict],
                    routes: dict[str, tuple[int, int]]) -> ModelResult:
    """The agents' 100 ms bins as a :class:`ModelResult` (throughput in bit/s of the emulated frames)."""
    n_samples = round(plan.duration_s / cfg.sample_s)
    names = [f.name for f in plan.flows]
    thr = np.zeros((n_samples, len(names)))
    becns = np.zeros((n_samples, len(names)), dtype=np.int64)
    ccti = np.full((n_samples, len(names)), np.nan)
    marked, sent = np.zeros(len(names)), np.zeros(len(names))
    for j, name in enumerate(names):
        rec = receivers[str(routes[name][1])]["flows"].get(str(ids[name]))
        if rec is not None:
            marked[j] = rec["marked"]
            for b, _pk, nbytes, _ce in rec["bins"]:
                if 0 <= b < n_samples:
                    thr[b, j] = nbytes * 8 / cfg.sample_s
        snd = senders.get(name)
        if snd is not None:
            sent[j] = snd["packets"]
            for b, _sent, nb, mean_ccti, *_timing in snd["bins"]:
                if 0 <= b < n_samples:
                    becns[b, j] = nb
                    if mean_ccti is not None:
                        ccti[b, j] = mean_ccti
    times = (np.arange(n_samples) + 1) * cfg.sample_s
    return ModelResult(tuple(names), tuple(tenant_of[n] for n in names), tuple(f.start_s for f in plan.flows),
                       tuple(f.stop_s for f in plan.flows), cfg.sample_s, times, thr, becns, ccti,
                       np.full(n_samples, np.nan), cfg.link_bps, marked, sent)
