"""The experiment's traffic: host agents told their groups, and one window of messages from every member.

**Pacing.**  ``rate_pps`` counts messages per second per stream (a stream = one member sending to one of its
groups); senders start staggered over one period, so that BMv2's 64-packet queues never overflow.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from dcnlab.reproduce.multicast.bmv2.checks import WindowResult, evaluate
from dcnlab.reproduce.multicast.bmv2.setup import Run

FLOW_STEADY, FLOW_CHURNED, FLOW_FAILURE, FLOW_FAILED_OVER = 1, 2, 3, 4


def sync_membership(run: Run) -> None:
    """Tell every host agent the groups it is in now (joins and leaves as differences)."""
    want: dict[str, set[int]] = {name: set() for name in run.net.agents}
    for mgid, members in run.dp.groups().items():
        for x in members:
            want[run.host_name(x)].add(mgid)
    handles, reqs = [], []
    for name, mgids in want.items():
        have = run.joined.get(name, set())
        for m in sorted(mgids - have):
            handles.append(run.net.agent(name))
            reqs.append({"cmd": "multicast.join", "mgid": m})
        for m in sorted(have - mgids):
            handles.append(run.net.agent(name))
            reqs.append({"cmd": "multicast.leave", "mgid": m})
    for a, r in zip(handles, reqs):   # one agent may get several; in order
        a.call(r)
    run.joined = want


def _streams(run: Run, flow: int) -> dict[str, list[tuple[int, int, int]]]:
    out: dict[str, list[tuple[int, int, int]]] = {name: [] for name in run.net.agents}
    for mgid, members in sorted(run.dp.groups().items()):
        if len(members) < 2:
            continue
        color = run.dp.color(mgid)
        for x in sorted(members):
            out[run.host_name(x)].append((mgid, color, flow))
    return {k: v for k, v in out.items() if v}


def _predictions(run: Run, streams: dict[str, list[tuple[int, int, int]]]) -> dict[tuple[str, int], Counter]:
    return {(s, mgid): run.dp.predicted_copies(s, mgid) for s, ss in streams.items() for mgid, _, _ in ss}


def _submit(run: Run, streams: dict[str, list[tuple[int, int, int]]], count: int) -> list[Any]:
    from dcnlab.traffic.multicast_agent import send_request

    rate = run.cfg.rate_pps
    agents = []
    for i, (h, ss) in enumerate(sorted(streams.items())):
        a = run.net.agent(h)
        a.submit(send_request(a.host.iface, run.frames[h], ss, count, rate, 0, offset_s=i / len(streams) / rate))
        agents.append(a)
    return agents


def _expect(run: Run, streams: dict[str, list[tuple[int, int, int]]], count: int) -> dict[str, list]:
    ip_of = {h.name: h.ip for h in run.fabric.hosts()}
    out: dict[str, list] = {name: [] for name in run.net.agents}
    for src, ss in streams.items():
        for mgid, _, flow in ss:
            for x in run.dp.groups()[mgid]:
                dst = run.host_name(x)
                if dst != src:
                    out[dst].append([mgid, ip_of[src], flow, count])
    return out


def run_window(run: Run, name: str, flow: int, count: int, model: bool,
            during: Callable[[float], None] | None = None) -> tuple[WindowResult, dict[str, dict], dict]:
    from dcnlab.traffic import measure
    from dcnlab.traffic.hostctl import call_all

    t0 = time.perf_counter()
    net = run.net
    hosts = sorted(net.agents)
    handles = [net.agent(h) for h in hosts]
    streams = _streams(run, flow)
    preds = _predictions(run, streams)
    call_all(handles, [{"cmd": "multicast.recv_start"}] * len(handles))
    sends: list[dict] = []
    try:
        before = measure.snapshot(net.controller) if model else None
        t_window = time.perf_counter()
        agents = _submit(run, streams, count)
        if during is not None:
            during(t_window)
        sends = [a.result() for a in agents]
        time.sleep(run.cfg.settle)
        after = measure.snapshot(net.controller) if model else None
    finally:
        expect = _expect(run, streams, count)
        replies = call_all(handles, [{"cmd": "multicast.recv_stop", "expect": expect[h], "seqs": not model}
                                     for h in hosts])
    reports = dict(zip(hosts, replies))
    counters = after - before if model and after is not None and before is not None else None
    frames = sum(s["frames"] for s in sends)
    result = evaluate(run, name, flow, count, streams, reports, preds, model, frames, counters,
                       time.perf_counter() - t0)
    starts = {h: s["start"] for h, s in zip(sorted(streams), sends)}
    run.say(f"window {name}: delivered {result.delivered}/{result.receptions}, lost {result.lost}, dups {result.dups}, "
            f"filtered {result.filtered}" + (f", link packets {result.link_packets} (model {result.link_model})"
                                             if model else "") + f"; {result.seconds:.1f} s")
    return result, reports, {"streams": streams, "preds": preds, "starts": starts}
