"""A fabric, emulated: BMv2 for every forwarding node, a Mininet host for every host.

Bring-up order, chosen for speed:

1. Start everything that can overlap. Compile (content-keyed cache), create the Mininet hosts,
   create all veths in one batch, start every BMv2 process (``--no-p4``), and start a traffic
   agent in every host, which imports scapy while the switches boot.
2. Wait for every gRPC port at once (a polling loop with a sleep, bounded).
3. Connect, arbitrate and push the pipeline to all switches concurrently, then write the
   routing tables in one batched Write per switch.

Teardown is parallel and idempotent: all agents and BMv2 processes get their signal at once,
all links go in one ``ip -batch``, then the hosts, then the firewall rules. It runs on
exceptions and Ctrl-C too. Everything started is recorded in the run directory first, so
``dcnlab clean`` can finish the job after a crash.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.routing import compute_forwarding, router_for
from controller.rules import forwarding_updates
from controller.runtime.controller import Controller, SwitchTarget
from controller.runtime.pipeline import Pipeline
from controller.runtime.toolchain import require_tool
from emu import bmv2, guard, links
from emu.rundir import RunDir
from topos.errors import UserError
from topos.model import Fabric, HostInfo
from traffic.hostctl import AgentHandle, HostAddr, call_all

log = logging.getLogger(__name__)

Progress = Callable[[str], None]


@dataclass
class NetOptions:
    bw_mbps: float | None = None
    """Link rate (Mbit/s) shaped with tc on every link end; None = unshaped."""
    delay: str | None = None
    """Link delay for netem, e.g. "1ms"."""
    max_queue: int | None = None
    """tc queue limit in packets."""
    queue_rate_pps: int | None = None
    """BMv2 egress queue rate (packets/s) on every port (Thrift)."""
    queue_depth: int | None = None
    """BMv2 egress queue depth (packets) on every port (Thrift)."""
    log_level: str = "off"
    pcap: bool = False
    grpc_log: bool = False
    thrift_guard: bool = True
    ecmp: bool = True
    agents: bool = True
    routes: bool = True
    watch: bool = False
    """Reconnect automatically (re-push pipeline and state) when a switch's P4Runtime stream drops."""
    start_timeout: float = 30.0
    max_switches: int = 160
    grpc_base: int = 50051
    thrift_base: int = 9090

    def shaping(self) -> links.Shaping:
        return links.Shaping(self.bw_mbps, self.delay, self.max_queue)


@dataclass
class Timings:
    phases: dict[str, float] = field(default_factory=dict)

    def mark(self, name: str, since: float) -> float:
        now = time.perf_counter()
        self.phases[name] = now - since
        return now

    def total(self) -> float:
        return sum(self.phases.values())


def intf_name(node: str, port: int) -> str:
    return f"{node}-eth{port}"


class FabricNetwork:
    def __init__(self, fabric: Fabric, options: NetOptions | None = None, pipeline: Pipeline | None = None,
                 progress: Progress | None = None) -> None:
        self.fabric = fabric
        self.opts = options or NetOptions()
        self.pipeline = pipeline
        self.progress = progress or (lambda msg: log.info("%s", msg))
        self.run: RunDir | None = None
        self.mn: Any = None                          # mininet.net.Mininet (hosts only)
        self.hosts: dict[str, Any] = {}              # name -> mininet.node.Host
        self.host_info: dict[str, HostInfo] = {h.name: h for h in fabric.hosts()}
        self.switches: dict[str, bmv2.BMv2Process] = {}
        self.agents: dict[str, AgentHandle] = {}
        self.controller: Controller | None = None
        self.root_intfs: list[str] = []
        self.link_group: int | None = None
        self.timings = Timings()
        self._stopped = False
        self._check_size()

    def _check_size(self) -> None:
        n = sum(1 for _ in self.fabric.forwarding_nodes())
        if n > self.opts.max_switches:
            raise UserError(f"{self.fabric.spec} has {n} forwarding nodes; emulation is limited to "
                            f"max_switches={self.opts.max_switches} (about 45 MB of RAM per BMv2 process); "
                            f"use the model backend for paper-scale instances")

    # -- bring-up ----------------------------------------------------------------
    def start(self) -> FabricNetwork:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        from mininet.log import lg
        from mininet.net import Mininet

        lg.propagate = False  # Mininet prints through its own handler; no second copy via the root logger

        t = time.perf_counter()
        f, o = self.fabric, self.opts
        if os.geteuid() != 0:
            raise UserError("emulation needs root (network namespaces, veths, BMv2 on raw interfaces)")
        o.shaping().check_kernel()
        require_tool("simple_switch_grpc")
        # Frames are crafted with scapy in this process; pay its import while other work runs.
        threading.Thread(target=importlib.import_module, args=("scapy.layers.inet",), daemon=True).start()
        if self.pipeline is None:
            from p4src.compiler import compile_program
            self.pipeline = compile_program().pipeline()
        t = self.timings.mark("compile", t)
        self.run = RunDir.create(f.spec)

        fwd = list(f.forwarding_nodes())
        grpc_ports = bmv2.free_ports(len(fwd), o.grpc_base, "127.0.0.1")
        thrift_ports = bmv2.free_ports(len(fwd), o.thrift_base)
        if o.thrift_guard:
            guard.install(thrift_ports, self.run.path.name, self.run.record_firewall)

        # Hosts: Mininet namespaces with shells (no Mininet links, controller or switches).
        # Mininet.init() would raise machine-wide sysctls (fixLimits); dcnlab changes nothing
        # outside what it creates, and static per-host neighbour tables need none of them.
        Mininet.inited = True
        self.mn = Mininet(topo=None, build=False, controller=None, autoSetMacs=False, autoStaticArp=False,
                          waitConnected=False)
        for h in f.hosts():
            host = self.mn.addHost(h.name, ip=None)
            self.hosts[h.name] = host
            self.run.record_process(f"host:{h.name}", host.pid, "bash")
        for host in self.hosts.values():  # no IPv6 chatter from hosts: set before their link exists
            host.sendCmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        for host in self.hosts.values():
            host.waitOutput()
        t = self.timings.mark("hosts", t)

        # Links.
        pairs, root_ends, host_side = [], [], {}
        for l in f.links():
            a_fwd, b_fwd = f.node(l.a).forwards, f.node(l.b).forwards
            ia, ib = intf_name(l.a, l.a_port), intf_name(l.b, l.b_port)
            if a_fwd and b_fwd:
                pairs.append(links.VethPair(ia, ib))
                root_ends += [ia, ib]
            else:
                sw_if, hn = (ia, l.b) if a_fwd else (ib, l.a)
                hi = intf_name(hn, 0)
                pairs.append(links.VethPair(sw_if, hi, self.hosts[hn].pid))
                root_ends.append(sw_if)
                host_side[hn] = hi
        links.check_names(root_ends)
        self.link_group = links.free_group(self.run.path.name)
        self.run.state.link_group = self.link_group
        self.run.record_interfaces(root_ends)
        self.root_intfs = root_ends
        links.create(pairs, root_ends, self.link_group)
        shaping = o.shaping()
        if shaping.active:
            links.shape([line for d in root_ends for line in shaping.tc_lines(d)])
        t = self.timings.mark("links", t)

        # Switches: start all, then wait for all.
        for i, node in enumerate(fwd):
            ports = {p: intf_name(node.name, p) for p in range(node.ports) if f.peer(node.name, p) is not None}
            cfg = bmv2.BMv2Config(node.name, i, ports, grpc_ports[i], thrift_ports[i], self.run.path,
                                  o.log_level, o.pcap)
            sw = bmv2.BMv2Process(cfg)
            sw.start()
            self.switches[node.name] = sw
            self.run.record_process(f"switch:{node.name}", sw.pid, "simple_switch_grpc")
        self.progress(f"started {len(self.switches)} BMv2 switches")

        # Host configuration (addresses, static ARP, shaping) and agents, while switches boot.
        self._configure_hosts(host_side, shaping)
        if o.agents:
            for name, host in self.hosts.items():
                info = self.host_info[name]
                a = AgentHandle(HostAddr(name, host_side[name], info.ip, info.mac), popen=host.popen,
                                log_file=self.run.path / f"agent-{name}.err")
                self.agents[name] = a
                self.run.record_process(f"agent:{name}", a.pid, "python")
        t = self.timings.mark("spawn", t)

        bmv2.wait_ready(list(self.switches.values()), o.start_timeout,
                        progress=lambda done, total: self.progress(f"switches ready: {done}/{total}"))
        t = self.timings.mark("switch-ready", t)

        targets = [SwitchTarget(n, sw.cfg.device_id, sw.cfg.grpc_addr, sw.cfg.thrift_port)
                   for n, sw in self.switches.items()]
        self.controller = Controller(self.pipeline, targets, log_dir=self.run.path if o.grpc_log else None)
        self.controller.start()
        if o.watch:
            self.controller.watch()
        t = self.timings.mark("pipeline", t)

        if o.routes:
            state = compute_forwarding(router_for(f))
            self.controller.write(forwarding_updates(state, o.ecmp))
        if o.queue_rate_pps is not None or o.queue_depth is not None:
            for name, sw in self.switches.items():
                self.controller.thrift(name).set_queues(o.queue_depth, o.queue_rate_pps, sorted(sw.cfg.ports))
        t = self.timings.mark("routes", t)
        for a in self.agents.values():
            a.wait_ready()
        self.timings.mark("agents", t)
        self.progress(f"{f.spec} up in {self.timings.total():.2f} s")

    def _configure_hosts(self, host_side: dict[str, str], shaping: links.Shaping) -> None:
        from mininet.link import Intf

        infos = list(self.host_info.values())
        for name, host in self.hosts.items():
            info, dev = self.host_info[name], host_side[name]
            neigh = "\n".join(f"neigh replace {o.ip} lladdr {o.mac} dev {dev} nud permanent"
                              for o in infos if o.name != name)
            tc = "\n".join(shaping.tc_lines(dev))
            # TX checksum offload would leave TCP/UDP checksums unfinished on frames that BMv2
            # forwards between veths; compute them in software instead.  One { } group = one
            # shell prompt; heredocs keep every pty line short.
            lines = ["rc=0",
                     f"ip link set dev {dev} address {info.mac} && ip addr add {info.ip}/8 dev {dev} && "
                     f"ethtool -K {dev} tx off >/dev/null && ip link set dev {dev} up && "
                     f"ip link set dev lo up || rc=1"]
            if neigh:
                lines += ["ip -batch - <<'EOF' || rc=1", neigh, "EOF"]
            if tc:
                lines += ["tc -batch - <<'EOF' || rc=1", tc, "EOF"]
            host.sendCmd("{ " + "\n".join(lines) + "\necho DCNLAB_RC=$rc\n}")
            # Tell Mininet about the interface (for its CLI) without it running any command.
            intf = Intf(dev, node=host, port=0, moveIntfFn=lambda *a, **k: None, up=None)
            intf.ip, intf.prefixLen, intf.mac = info.ip, 8, info.mac
        for name, host in self.hosts.items():
            out = host.waitOutput()
            if "DCNLAB_RC=0" not in out:
                raise UserError(f"configuring host {name} failed: {out.strip()[-300:]}")

    # -- use ---------------------------------------------------------------------
    def addr(self, host: str) -> HostAddr:
        return self.agents[host].host

    def agent(self, host: str) -> AgentHandle:
        return self.agents[host]

    def reachability(self, port: int = 9999, retries: int = 2, settle: float = 0.2) -> dict[str, set[str]]:
        """All-pairs probe with scapy-crafted packets. Return, per host, the sources it heard from."""
        names = list(self.agents)
        agents = [self.agents[n] for n in names]
        index = {n: self.host_info[n].index for n in names}
        heard: dict[str, set[str]] = {n: set() for n in names}
        by_index = {index[n]: n for n in names}
        for attempt in range(retries + 1):
            missing = {n: [d for d in names if d != n and n not in heard[d]] for n in names}
            if not any(missing.values()):
                break
            call_all(agents, [{"cmd": "recv_start", "port": port}] * len(agents))
            senders = [a for a, n in zip(agents, names) if missing[n]]
            call_all(senders, [a.probe_request([self.addr(d) for d in missing[a.host.name]], port,
                                               index[a.host.name]) for a in senders])
            time.sleep(settle * (attempt + 1))
            for n, rep in zip(names, call_all(agents, [{"cmd": "recv_stop", "port": port}] * len(agents))):
                heard[n] |= {by_index[int(flow)] for flow in rep["flows"] if int(flow) in by_index}
        return heard

    def restart_switch(self, name: str, timeout: float = 20.0) -> None:
        """Kill and restart one BMv2 process; the controller re-pushes its pipeline and state."""
        sw = self.switches[name]
        sw.signal(9)
        sw.proc.wait()
        sw.start()
        self.run.record_process(f"switch:{name}", sw.pid, "simple_switch_grpc")
        bmv2.wait_ready([sw], timeout)
        self.controller.reconnect(name, timeout)

    # -- teardown ----------------------------------------------------------------
    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        t = time.perf_counter()
        for a in self.agents.values():   # tell every agent to quit at once; close() waits below
            a.request_quit()
        if self.controller is not None:
            self.controller.close()
        for sw in self.switches.values():
            sw.signal(15)
        links.delete(self.root_intfs, self.link_group)
        for host in self.hosts.values():
            host.terminate()
        for a in self.agents.values():
            a.close()
        bmv2.stop_all(list(self.switches.values()))
        if self.run is not None:
            guard.remove(self.run.state.firewall)  # removing an absent rule is harmless
            self.run.mark_finished()
        self.timings.phases["teardown"] = time.perf_counter() - t

    def __enter__(self) -> FabricNetwork:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
