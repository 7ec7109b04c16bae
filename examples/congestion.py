"""IB-style congestion control (FECN/BECN) on BMv2: two senders into one bottleneck.

Hosts h0_0_1 and h0_0_2 send to h0_0_0 through their switch, whose port to h0_0_0 is the bottleneck:
its BMv2 egress queue drains 1000 packets/s (``Switch.set_queue``), and the congestion data plane marks
CE (the FECN) on packets that find more than 16 queued. The receiver reflects one BECN per mark and
each sender runs the IB CC algorithm (``dcnlab.traffic.congestion_agent``). First without CC (both
senders at line rate: the queue overflows), then with CC and CCTI_Increase 1 and 2: the shares settle
near 2:1, the second flow backing off twice as far per BECN (IB CC partitioning (Zhang et al.), Theorem 1).

Run as root: ``.venv/bin/python examples/congestion.py``
"""

import time

import dcnlab
from dcnlab.controller.congestion.dataplane import CongestionDataplane
from dcnlab.traffic.congestion_agent import flow_start_request

SPEC, RATE_PPS, DEPTH, FRAME = "dragonfly:p=3,a=1,h=1", 1000, 128, 200
RECEIVER, SENDERS, PORT = "h0_0_0", ["h0_0_1", "h0_0_2"], 5001
SECONDS, WARMUP = 8.0, 3.0


def run(net: dcnlab.Network, cc: bool, increases: list[int]) -> dict[str, dict]:
    """One run of SECONDS: both flows start together; per flow the receiver's and the sender's report."""
    rx, epoch = net.hosts[RECEIVER], time.time() + 0.2
    rx.agent.call({"cmd": "congestion.recv_start", "port": PORT, "epoch": epoch, "bin": 0.5})
    scale = dcnlab.congestion.TimeScale.for_link(RATE_PPS)       # 1000 packets/s stands for an 8 Gb/s IB link
    for flow, (host, inc) in enumerate(zip(SENDERS, increases), start=1):
        params = dcnlab.congestion.HcaParams(ccti_increase=inc, ccti_timer=20, ccti_limit=255, timer_mode="free")
        net.hosts[host].agent.call(flow_start_request(flow, rx.ip, PORT, sport=40000 + flow, size=FRAME, cc=cc,
                                                      nic_pps=RATE_PPS, params=params, scale=scale, epoch=epoch,
                                                      bin_s=0.5))
    time.sleep(SECONDS + 0.2)
    sent = {f: net.hosts[h].agent.call({"cmd": "congestion.flow_stop", "flow": f}) for f, h in enumerate(SENDERS, 1)}
    time.sleep(0.3)
    got = rx.agent.call({"cmd": "congestion.recv_stop", "port": PORT})["flows"]
    return {h: {"rx": got.get(str(f), {}), "tx": sent[f]} for f, h in enumerate(SENDERS, 1)}


def main() -> None:
    fabric = dcnlab.parse_spec(SPEC)
    switch, port = fabric.host_attachment(0)                      # RECEIVER's switch and port
    with dcnlab.Network(fabric, agents=True, ecmp=False) as net:
        net.switches[switch].set_queue(depth=DEPTH, rate_pps=RATE_PPS, ports=[port])
        dp = CongestionDataplane(net.controller, packet_bytes=FRAME)
        dp.set_marking(switch, [port], dcnlab.congestion.SwitchParams(threshold=14, marking_rate=1))
        print(f"{SPEC}: bottleneck {switch} port {port} -> {RECEIVER}, {RATE_PPS} packets/s, {DEPTH} deep")
        for title, cc, inc in (("CC off", False, [1, 1]), ("CC on, CCTI_Increase 1 and 2", True, [1, 2])):
            before = dp.marks(switch).get(port)
            flows = run(net, cc, inc)
            marks = dp.marks(switch)[port] - before
            print(f"{title}: bottleneck marked {marks.marked} of {marks.packets} packets")
            rates = {}
            for host, r in flows.items():
                late = [b for b in r["rx"].get("bins", []) if WARMUP / 0.5 <= b[0] < SECONDS / 0.5]
                rates[host] = sum(b[1] for b in late) / (SECONDS - WARMUP)
                print(f"  {host} -> {RECEIVER}: {rates[host]:4.0f} packets/s after {WARMUP:g} s; sent "
                      f"{r['tx']['packets']}, lost {r['tx']['packets'] - r['rx'].get('packets', 0)}, "
                      f"{r['tx']['becns']} BECNs received")
            a, b = (rates[h] for h in SENDERS)
            why = f"Theorem 1: {inc[1] / inc[0]:g} : 1" if cc else "no CC: the full queue's tail drop decides"
            print(f"  throughput ratio {a / max(b, 1):.2f} : 1 ({why})")

if __name__ == "__main__":
    main()
