"""Host side of IB-style congestion control inside an emulated host (IB CC partitioning (Zhang et al.),
§4.1; ECN marks stand for FECNs, as on the switch side).

``dcnlab.traffic.agent`` dispatches ``congestion.<verb>`` here; the state lives in ``agent.ext["congestion"]``
(:class:`CongestionHost`). A host can run any number of receivers and congestion-controlled flows.

* **Sender, per flow** (:class:`FlowSender`, one thread): UDP datagrams of a fixed frame size, sent with
  ECT(0) in the TOS byte (``IP_TOS``), carrying :mod:`dcnlab.traffic.wire`'s header (flow, sequence, send time).
  The pacing is :class:`dcnlab.traffic.cc.CcSender` (Algorithm 2: one ``CCT[CCTI]`` per aggregate of 4 packets,
  CCT and ``CCTI_Timer`` stretched by the run's :class:`~dcnlab.controller.congestion.cct.TimeScale`) through
  the host's NIC (:class:`Nic`), ``nic_pps`` packets/s (the emulated line rate: an IB HCA never sends
  faster than its link). With ``cc`` off the flow sends as fast as the NIC lets it and ignores BECNs
  (it still counts them).
* **BECN listener** (:class:`CnListener`, one thread per host and port, default ``CN_PORT`` 47900):
  decodes :class:`dcnlab.traffic.cc.CnPacket` datagrams and applies them to the flow they name (Algorithm 1).
* **Receiver** (:class:`CcReceiver`, one thread per UDP port): reads each datagram's TOS byte with
  ``IP_RECVTOS`` (``recvmsg`` ancillary data), counts CE-marked packets per flow and, through
  :class:`dcnlab.traffic.cc.BecnReflector`, sends one CN datagram to the source's listener for every ``C`` marks.
* **Sampling.** Everyone bins by wall-clock time from a common ``epoch`` (all hosts share the machine's
  clock): ``bin = floor((t - epoch) / bin_s)``, 100 ms by default. Receivers count packets, frame bytes
  and CE marks per flow and bin, binned by the kernel's arrival timestamp (``SO_TIMESTAMPNS``), so a
  receiving thread that a busy machine delays still puts each packet in the bin it arrived in; senders
  count packets sent, BECNs received and the mean CCTI per bin, and how the sending thread kept time
  ("Send timing" below).

Decisions:

* **One NIC per host.** Every flow of a host sends through one :class:`Nic` of ``nic_pps`` packets/s:
  a flow that is ready (Algorithm 2 lets it) reserves the NIC's next free slot, so flows that are ready
  together share the link in turn, as QPs share an HCA port. Two flows without CC on one host therefore
  get half the line rate each; that is the "shared input port" of the paper's parking lot (as we
  infer it from Fig. 3). A slot is ``max(previous slot + 1/nic_pps, ready time, now - nic_catch_up/nic_pps)``:
  a sender woken late (Python's sleep overshoots by tens of µs; a busy machine delays a thread by tens of
  ms) sends the slots it missed at once, up to ``nic_catch_up`` (default 1: one), a token bucket that never
  holds more than that; an idle NIC saves nothing, since a slot is never earlier than its packet was ready.
* **Departure jitter.** With ``jitter`` J (0..1, default 0) each packet leaves at a uniformly random moment
  up to J times its interval after its slot: the pause Algorithm 2 imposed before it, or the NIC's gap.
  The pacer takes such a delay off the next pause (its next aggregate is due one IRD after this one was),
  and the NIC's next slot is counted from this slot, so neither rate changes; periodic senders lose the
  fixed phases they would otherwise keep against a tail-drop queue
  (:mod:`dcnlab.reproduce.congestion.bmv2.config`, "Departure jitter").
* **Send timing.** A packet is *due* when the flow's pacing (Algorithm 2) and its host's NIC let it leave:
  ``max(ready, the NIC's next free slot)``. Each sender bin adds up how long after that (and after its jitter)
  its packets really left (``late``, ms; a thread woken late by the machine's scheduler, not by the NIC, the
  CCT or the jitter) and keeps the
  longest interval between two of the flow's packets (``gap``, ms). A sender starved of CPU shows up there
  (late tens of ms per bin, gaps of tens of ms, fewer packets than its NIC allowed), and so tells a flow
  that was never offered from one that a switch queue dropped (:mod:`dcnlab.reproduce.congestion.bmv2.budget`).
* **Runtime pushes** (``flow_update``) take the controller's ``CCTI_Increase`` and ``CCTI_Timer``
  (:class:`~dcnlab.controller.congestion.policy.FlowUpdate`); CCTI is kept (clamped to the bounds).
* **ICMP errors.** A connected UDP socket reports "port unreachable" from an earlier datagram on a later
  send; the sender counts such errors (``send_errors``) and keeps going.

Commands (one JSON reply each; times are seconds; ``epoch`` is a ``time.time()`` value):

* ``recv_start {port, becn_every=1, cn_port=47900, epoch, bin=0.1}``; ``recv_stats {port}``;
  ``recv_stop {port}`` -> per flow ``packets bytes marked becns lost max_seq src`` and
  ``bins: [[bin, packets, bytes, marked], ...]``.
* ``flow_start {flow, dst_ip, dport, sport, size, cc, params: {ccti_increase, ccti_timer, ccti_min,
  ccti_limit, timer_mode}, cct: {size, denominator}, scale, aggregate=4, nic_pps, nic_catch_up=1, jitter=0,
  ecn=true, epoch, bin=0.1, cn_port=47900}``.
* ``flow_update {flow, ccti_increase, ccti_timer?}``; ``flow_stats {flow}``; ``flow_stop {flow}`` ->
  ``packets becns ccti send_errors bins: [[bin, sent, becns, mean CCTI, late ms, longest gap ms], ...]``.
* ``reset`` stops every flow, receiver and listener of the host.
"""

from __future__ import annotations

import logging
import math
import random
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

from dcnlab.controller.congestion.cct import (
    DEFAULT_CCT_SIZE,
    DEFAULT_DENOMINATOR,
    Cct,
    TimeScale,
)
from dcnlab.controller.congestion.params import HcaParams, ReceiverParams
from dcnlab.traffic import wire
from dcnlab.traffic.cc import CN_PORT, ECT0, BecnReflector, CcSender, CnPacket, is_ce

log = logging.getLogger(__name__)

IP_RECVTOS = getattr(socket, "IP_RECVTOS", 13)
"""Linux ``IP_RECVTOS`` (13): deliver each datagram's TOS byte as ``IP_TOS`` ancillary data."""
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
"""Linux ``SO_TIMESTAMPNS`` (35): the kernel's arrival time of each datagram (``struct timespec``)."""
TIMESPEC = struct.Struct("@qq")
DEFAULT_BIN_S = 0.1
MAX_CATCH_UP = 64
POLL_S = 0.05
MECHANISM = "congestion"


def bin_index(t: float, epoch: float, bin_s: float) -> int:
    return math.floor((t - epoch) / bin_s)


# -- sender --------------------------------------------------------------------------------------------------
@dataclass
class SendBin:
    sent: int = 0
    becns: int = 0
    ccti_sum: int = 0
    late_s: float = 0.0
    """Sum over the bin's packets of how long each left after it was due (module docstring, "Send timing")."""
    gap_s: float = 0.0
    """The longest interval between two packets of the flow that ended in this bin."""

    def row(self, b: int) -> list:
        return [b, self.sent, self.becns, round(self.ccti_sum / self.sent, 2) if self.sent else None,
                round(1000 * self.late_s, 2), round(1000 * self.gap_s, 2)]


class Nic:
    """A host's link: every flow of the host sends through it, one packet per ``1/pps`` seconds on average;
    a sender woken late makes up at most ``catch_up`` slots (module docstring, "One NIC per host")."""

    def __init__(self, pps: float, catch_up: int = 1) -> None:
        if not pps > 0:
            raise ValueError(f"nic_pps={pps} must be > 0 packets/s")
        if not 1 <= catch_up <= MAX_CATCH_UP:
            raise ValueError(f"nic_catch_up={catch_up} is out of range; valid: 1..{MAX_CATCH_UP} packets")
        self.pps = pps
        self.gap = 1.0 / pps
        self.catch_up = catch_up
        self._next = time.monotonic()
        self._lock = threading.Lock()

    def reserve(self, ready: float) -> tuple[float, float]:
        """The monotonic time at which a packet that is ready at ``ready`` may leave (its slot is taken), and
        when it was due: ``max(ready, the NIC's next free slot)``, the slot a sender that ran on time got."""
        with self._lock:
            due = max(self._next, ready)
            slot = max(due, time.monotonic() - self.catch_up * self.gap)
            self._next = slot + self.gap
            return slot, due


class FlowSender:
    """One flow: a UDP socket, the CC state and a sending thread that sends through the host's NIC."""

    def __init__(self, req: dict, nic: Nic | None = None) -> None:
        self.flow = int(req["flow"])
        self.dst = (str(req["dst_ip"]), int(req["dport"]))
        self.size = int(req.get("size", 200))
        wire.check_frame_size(self.size)
        self.nic = nic or Nic(float(req["nic_pps"]))
        self.jitter = float(req.get("jitter", 0.0))
        if not (math.isfinite(self.jitter) and 0 <= self.jitter <= 1.0):
            raise ValueError(f"jitter={self.jitter} is out of range; valid: 0..1 (a fraction of the interval)")
        self._random = random.Random()
        self.epoch = float(req.get("epoch", time.time()))
        self.bin_s = float(req.get("bin", DEFAULT_BIN_S))
        p = req.get("params", {})
        params = HcaParams(**{k: p[k] for k in ("ccti_increase", "ccti_timer", "ccti_min", "ccti_limit",
                                                 "timer_mode") if k in p})
        c = req.get("cct", {})
        cct = Cct.paper(int(c.get("size", DEFAULT_CCT_SIZE)), float(c.get("denominator", DEFAULT_DENOMINATOR)))
        self.cc = CcSender(self.flow, params, cct, time.monotonic, aggregate=int(req.get("aggregate", 4)),
                           scale=TimeScale(float(req.get("scale", 1.0))), enabled=bool(req.get("cc", True)))
        self.lock = threading.Lock()
        self.bins: dict[int, SendBin] = {}
        self.send_errors = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if req.get("ecn", True):
            self.sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, ECT0)
        self.sock.bind(("0.0.0.0", int(req.get("sport", 0))))
        self.sock.connect(self.dst)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"cc-flow-{self.flow}", daemon=True)

    def start(self) -> FlowSender:
        self.thread.start()
        return self

    def _bin(self, now_wall: float) -> SendBin:
        b = bin_index(now_wall, self.epoch, self.bin_s)
        cur = self.bins.get(b)
        if cur is None:
            cur = self.bins[b] = SendBin()
        return cur

    def _sleep_until(self, t: float) -> bool:
        """Sleep until monotonic time ``t``; False if the flow was stopped meanwhile."""
        while True:
            if self._stop.is_set():
                return False
            delay = t - time.monotonic()
            if delay <= 0:
                return True
            time.sleep(min(delay, POLL_S))

    def _loop(self) -> None:
        payload = bytearray(self.size - wire.ETH_IP_UDP)
        ready = last = time.monotonic()
        seq = 0
        hsize = wire.HEADER.size
        interval = self.nic.gap
        while self._sleep_until(ready):
            slot, due = self.nic.reserve(ready)
            dither = self._random.random() * self.jitter * interval if self.jitter else 0.0
            if not self._sleep_until(slot + dither):
                break
            late = time.monotonic() - due - dither
            payload[:hsize] = wire.pack(self.flow, seq, time.time_ns())
            try:
                self.sock.send(payload)
            except (ConnectionRefusedError, BlockingIOError):
                self.send_errors += 1
            seq += 1
            t = time.monotonic()
            with self.lock:
                wait = self.cc.after_send(t)          # Algorithm 2
                ccti = self.cc.ccti.ccti
                sb = self._bin(time.time())
                sb.sent += 1
                sb.ccti_sum += ccti
                sb.late_s += late
                sb.gap_s = max(sb.gap_s, t - last)
            ready, last = t + wait, t
            interval = wait if wait > 0 else self.nic.gap

    def on_cn(self, cn: CnPacket) -> None:
        with self.lock:
            self.cc.on_cn(cn)
            self._bin(time.time()).becns += cn.becns

    def update(self, ccti_increase: int, ccti_timer: int | None = None) -> dict:
        with self.lock:
            self.cc.apply_update(ccti_increase, ccti_timer)
            return {"flow": self.flow, "ccti": self.cc.ccti.index(), "ccti_increase": ccti_increase,
                    "ccti_timer": self.cc.ccti.params.ccti_timer}

    def stats(self) -> dict:
        with self.lock:
            snap = self.cc.snapshot()
            rows = [sb.row(b) for b, sb in sorted(self.bins.items())]
        snap.update(send_errors=self.send_errors, bins=rows, epoch=self.epoch, bin=self.bin_s)
        return snap

    def stop(self) -> dict:
        self._stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout=2)
        self.sock.close()
        return self.stats()


class CnListener:
    """Receives congestion notifications on ``port`` and hands each to the flow it names."""

    def __init__(self, host: CongestionHost, port: int = CN_PORT) -> None:
        self.host, self.port = host, port
        self.received = 0
        self.unknown = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("0.0.0.0", port))
        self.sock.settimeout(POLL_S)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"cc-cn-{port}", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(512)
            except TimeoutError:
                continue
            except OSError:
                return
            cn = CnPacket.unpack(data)
            if cn is None:
                continue
            self.received += 1
            flow = self.host.flows.get(cn.flow)
            if flow is None:
                self.unknown += 1
                continue
            flow.on_cn(cn)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=2)
        self.sock.close()


# -- receiver ------------------------------------------------------------------------------------------------
@dataclass
class RecvFlow:
    src: str = ""
    packets: int = 0
    bytes: int = 0
    marked: int = 0
    max_seq: int = -1
    bins: dict[int, list[int]] = field(default_factory=dict)
    """bin -> [packets, frame bytes, CE-marked]."""

    def summary(self, becns: int) -> dict:
        return {"src": self.src, "packets": self.packets, "bytes": self.bytes, "marked": self.marked,
                "becns": becns, "max_seq": self.max_seq, "lost": max(0, self.max_seq + 1 - self.packets),
                "bins": [[b, *v] for b, v in sorted(self.bins.items())]}


class CcReceiver:
    """Counts arrivals and CE marks per flow on a UDP port; reflects one CN per ``C`` marks to the source."""

    def __init__(self, port: int, becn_every: int = 1, cn_port: int = CN_PORT, epoch: float | None = None,
                 bin_s: float = DEFAULT_BIN_S) -> None:
        self.port, self.cn_port = port, cn_port
        self.epoch = time.time() if epoch is None else epoch
        self.bin_s = bin_s
        self.reflector = BecnReflector(ReceiverParams(becn_every), clock_ns=time.time_ns)
        self.flows: dict[int, RecvFlow] = {}
        self.other = 0
        self.cn_errors = 0
        self._lock = threading.Lock()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.bind(("0.0.0.0", port))
        self.sock.settimeout(POLL_S)
        self.cn_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"cc-recv-{port}", daemon=True)
        self.thread.start()

    def handle(self, data: bytes, tos: int, src: str, now: float) -> CnPacket | None:
        """Account one datagram (UDP payload) with IP TOS ``tos`` from ``src``; return the CN due, if any."""
        hdr = wire.unpack(data)
        if hdr is None:
            self.other += 1
            return None
        flow, seq, _ = hdr
        with self._lock:
            rec = self.flows.get(flow)
            if rec is None:
                rec = self.flows[flow] = RecvFlow(src)
            ce = is_ce(tos)
            rec.packets += 1
            size = len(data) + wire.ETH_IP_UDP
            rec.bytes += size
            rec.max_seq = max(rec.max_seq, seq)
            b = bin_index(now, self.epoch, self.bin_s)
            row = rec.bins.get(b)
            if row is None:
                row = rec.bins[b] = [0, 0, 0]
            row[0] += 1
            row[1] += size
            if ce:
                rec.marked += 1
                row[2] += 1
            return self.reflector.on_packet(flow, tos)

    def _loop(self) -> None:
        space = socket.CMSG_SPACE(4) + socket.CMSG_SPACE(TIMESPEC.size)
        while not self._stop.is_set():
            try:
                data, anc, _flags, addr = self.sock.recvmsg(65535, space)
            except TimeoutError:
                continue
            except OSError:
                return
            tos, arrival = 0, None
            for level, kind, cdata in anc:
                if level == socket.IPPROTO_IP and kind == socket.IP_TOS and cdata:
                    tos = cdata[0]
                elif level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= TIMESPEC.size:
                    sec, nsec = TIMESPEC.unpack_from(cdata)
                    arrival = sec + nsec * 1e-9
            cn = self.handle(data, tos, addr[0], time.time() if arrival is None else arrival)
            if cn is not None:
                try:
                    self.cn_sock.sendto(cn.pack(), (addr[0], self.cn_port))
                except OSError:
                    self.cn_errors += 1

    def report(self) -> dict:
        with self._lock:
            becns = {f: r.becns for f, r in self.reflector.flows.items()}
            flows = {str(f): r.summary(becns.get(f, 0)) for f, r in sorted(self.flows.items())}
        return {"port": self.port, "epoch": self.epoch, "bin": self.bin_s, "other": self.other,
                "cn_errors": self.cn_errors, "flows": flows}

    def stop(self) -> dict:
        self._stop.set()
        self.thread.join(timeout=2)
        self.sock.close()
        self.cn_sock.close()
        return self.report()


# -- host state and commands ---------------------------------------------------------------------------------
class CongestionHost:
    """Everything congestion-related that runs in one host."""

    def __init__(self) -> None:
        self.flows: dict[int, FlowSender] = {}
        self.receivers: dict[int, CcReceiver] = {}
        self.listeners: dict[int, CnListener] = {}
        self.nics: dict[tuple[float, int], Nic] = {}
        """The host's NIC, by rate and catch-up (every experiment gives all flows of a host the same)."""

    def start_flow(self, req: dict) -> dict:
        flow = int(req["flow"])
        if flow in self.flows:
            return {"error": f"congestion: flow {flow} is already running"}
        cn_port = int(req.get("cn_port", CN_PORT))
        if cn_port not in self.listeners:
            self.listeners[cn_port] = CnListener(self, cn_port)
        key = (float(req["nic_pps"]), int(req.get("nic_catch_up", 1)))
        nic = self.nics.get(key)
        if nic is None:
            nic = self.nics[key] = Nic(*key)
        sender = FlowSender(req, nic)
        self.flows[flow] = sender.start()
        return {"ok": True, "flow": flow, "ccti": sender.cc.ccti.ccti}

    def reset(self) -> dict:
        flows = {str(f): s.stop() for f, s in self.flows.items()}
        recv = {str(p): r.stop() for p, r in self.receivers.items()}
        for lst in self.listeners.values():
            lst.stop()
        self.flows.clear()
        self.receivers.clear()
        self.listeners.clear()
        self.nics.clear()
        return {"flows": flows, "receivers": recv}


VERBS = ("recv_start", "recv_stats", "recv_stop", "flow_start", "flow_update", "flow_stats", "flow_stop", "reset")


def handle(agent, verb: str, req: dict) -> dict:
    """Entry point for ``dcnlab.traffic.agent`` (``congestion.<verb>``)."""
    host = agent.ext.get(MECHANISM)
    if host is None:
        host = agent.ext[MECHANISM] = CongestionHost()
    assert isinstance(host, CongestionHost)
    if verb == "recv_start":
        port = int(req["port"])
        if port in host.receivers:
            return {"error": f"congestion: already receiving on port {port}"}
        host.receivers[port] = CcReceiver(port, int(req.get("becn_every", 1)), int(req.get("cn_port", CN_PORT)),
                                          float(req["epoch"]) if "epoch" in req else None,
                                          float(req.get("bin", DEFAULT_BIN_S)))
        return {"ok": True}
    if verb in ("recv_stats", "recv_stop"):
        port = int(req["port"])
        rx = host.receivers.pop(port, None) if verb == "recv_stop" else host.receivers.get(port)
        if rx is None:
            return {"error": f"congestion: not receiving on port {port}"}
        return rx.stop() if verb == "recv_stop" else rx.report()
    if verb == "flow_start":
        return host.start_flow(req)
    if verb in ("flow_update", "flow_stats", "flow_stop"):
        sender = host.flows.get(int(req["flow"]))
        if sender is None:
            return {"error": f"congestion: no flow {req['flow']} on this host; running: {sorted(host.flows)}"}
        if verb == "flow_update":
            timer = req.get("ccti_timer")
            return sender.update(int(req["ccti_increase"]), None if timer is None else int(timer))
        if verb == "flow_stats":
            return sender.stats()
        del host.flows[sender.flow]
        return sender.stop()
    if verb == "reset":
        return host.reset()
    return {"error": f"congestion: unknown verb {verb!r}; valid: {', '.join(VERBS)}"}


# -- requests (controller side) ------------------------------------------------------------------------------
def flow_start_request(flow: int, dst_ip: str, dport: int, *, sport: int, size: int, nic_pps: float,
                       params: HcaParams, scale: TimeScale, cc: bool = True, epoch: float | None = None,
                       bin_s: float = DEFAULT_BIN_S, cct_size: int = DEFAULT_CCT_SIZE,
                       denominator: float = DEFAULT_DENOMINATOR, aggregate: int = 4, ecn: bool = True,
                       cn_port: int = CN_PORT, jitter: float = 0.0, nic_catch_up: int = 1) -> dict:
    """A ``congestion.flow_start`` request for one flow (the parameters are validated here already)."""
    params.check_cct(cct_size)
    return {"cmd": f"{MECHANISM}.flow_start", "flow": flow, "dst_ip": dst_ip, "dport": dport, "sport": sport,
            "size": size, "nic_pps": nic_pps, "nic_catch_up": nic_catch_up, "cc": cc, "ecn": ecn, "aggregate": aggregate,
            "params": {"ccti_increase": params.ccti_increase, "ccti_timer": params.ccti_timer,
                       "ccti_min": params.ccti_min, "ccti_limit": params.ccti_limit, "timer_mode": params.timer_mode},
            "cct": {"size": cct_size, "denominator": denominator}, "scale": scale.factor,
            "epoch": time.time() if epoch is None else epoch, "bin": bin_s, "cn_port": cn_port, "jitter": jitter}
