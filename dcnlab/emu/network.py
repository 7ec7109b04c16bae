"""A fabric, emulated: BMv2 for every forwarding node, a Mininet host for every host.

Each run gets a network namespace of its own, named after the run (``dcnlab-<run id>``). Every
BMv2 process and every switch-side interface lives there; hosts are Mininet hosts with their own
namespaces, as usual. Two runs of the same fabric therefore never clash, and the machine's own
namespace and firewall are never touched. P4Runtime runs over Unix sockets in the root-only run
directory; Thrift listens only inside the run's namespace.

Bring-up order, chosen for speed:

1. Start everything that can overlap. Compile (content-keyed cache), create the run namespace and
   the Mininet hosts, create all veths in one batch, start every BMv2 process (``--no-p4``), and
   start a traffic agent in every host, which starts while the switches boot.
2. Wait for every switch's socket at once (a polling loop with a sleep, bounded).
3. Connect, arbitrate and push the pipeline to all switches concurrently, then write the
   routing tables in one batched Write per switch.

While the run lives, a monitor thread notices a switch that dies (within ``monitor_interval``),
logs which one and the tail of its log, and with ``watch`` restarts it and re-pushes its pipeline
and state.

Teardown is parallel and idempotent: all agents and BMv2 processes get their signal at once,
then the host shells go, then the run namespace, which takes every link with it. It runs on
exceptions and Ctrl-C too. The namespace is recorded before it exists, and every process carries
the run's tag, so ``dcnlab clean`` can finish the job after a crash.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from dcnlab.controller.routing import compute_forwarding, router_for
from dcnlab.controller.rules import forwarding_updates
from dcnlab.controller.runtime.controller import Controller, SwitchTarget
from dcnlab.controller.runtime.entry_files import Entries, load_entries
from dcnlab.controller.runtime.errors import RuntimeErrorBase
from dcnlab.controller.runtime.pipeline import Pipeline
from dcnlab.controller.runtime.toolchain import require_tool
from dcnlab.emu import bmv2, faults, links, netns, offloads
from dcnlab.emu.counters import intf_name
from dcnlab.emu.loopback import LoopbackRelays
from dcnlab.emu.loopback import warning as loopback_warning
from dcnlab.emu.hostcmds import HostCommands
from dcnlab.emu.hosts import FastHost, enter_prefix, finish_shells
from dcnlab.emu.options import MAX_EMULATED_HOSTS, NetOptions, check_memory
from dcnlab.emu.reachability import ProbeHost, Reachability, probe_all_pairs
from dcnlab.emu.rundir import RunDir
from dcnlab.topos.errors import UserError
from dcnlab.topos.files import HostConf, LinkShape, UserFabric
from dcnlab.topos.model import Fabric, HostInfo, Role
from dcnlab.traffic.hostctl import AgentHandle, HostAddr

log = logging.getLogger(__name__)

Progress = Callable[[str], None]

__all__ = ["Endpoint", "FabricNetwork", "NetOptions", "Reachability", "SwitchFailure", "intf_name"]


@dataclass(frozen=True)
class Endpoint:
    """Where a controller reaches one switch of a running network (also in ``<run>/endpoints.json``)."""
    switch: str
    device_id: int
    grpc: str
    """``unix:/run/...`` (root only)."""
    grpc_tcp: str | None
    """``127.0.0.1:PORT`` with ``grpc_tcp``, else None."""
    thrift_port: int
    netns: str
    """The run's namespace, where the Thrift port listens (``nsenter --net=/run/netns/NETNS simple_switch_CLI ...``)."""
    election_id: tuple[int, int] | None
    """dcnlab's own election id while it is primary; None once it stepped down."""


@dataclass
class Timings:
    phases: dict[str, float] = field(default_factory=dict)

    def mark(self, name: str, since: float) -> float:
        now = time.perf_counter()
        self.phases[name] = now - since
        return now

    def total(self) -> float:
        return sum(v for k, v in self.phases.items() if k != "teardown")


@dataclass(frozen=True)
class SwitchFailure:
    """A switch process that died while the run lived."""

    switch: str
    status: int
    at: float
    """time.monotonic() when the monitor noticed."""
    log_tail: str
    restarted: bool = False

    def __str__(self) -> str:
        how = "restarted and re-pushed" if self.restarted else "not restarted (no --watch)"
        return f"switch {self.switch} died (exit status {self.status}); {how}; log tail:\n{self.log_tail}"


def user_programs(fabric: Fabric) -> dict[str, Path]:
    """Each switch's program from a topology file (``{}``: dcnlab's own program everywhere).

    Switches may run different programs; a fabric either runs dcnlab's program or the user's, so a
    file that gives some switches a program must give every switch one (or a top-level ``program``)."""
    if not isinstance(fabric, UserFabric):
        return {}
    progs = {n.name: fabric.program_of(n.name) for n in fabric.forwarding_nodes()}
    if all(p is None for p in progs.values()):
        return {}
    missing = [n for n, p in progs.items() if p is None]
    if missing:
        raise UserError(f"{fabric.spec}: switch {missing[0]} has no program while others have one; valid: a "
                        f"program for every switch (per switch or top-level), or none (dcnlab's own)")
    bad = next((p for p in progs.values() if p is not None and p.suffix != ".p4"), None)
    if bad is not None:
        raise UserError(f"{fabric.spec}: program {bad} is not a P4 source; dcnlab compiles the program itself "
                        f"(give the .p4 file)")
    return {n: p for n, p in progs.items() if p is not None}


def user_program(fabric: Fabric) -> Path | None:
    """The program every switch of a topology file runs, if they all run the same one."""
    progs = set(user_programs(fabric).values())
    return progs.pop() if len(progs) == 1 else None


def _shaping(ls: LinkShape) -> links.Shaping:
    """tc shaping of one link end (``loss: 0`` in a file is no loss)."""
    return links.Shaping(ls.bw_mbps, f"{ls.delay_ms:g}ms" if ls.delay_ms else None, ls.max_queue, ls.loss_pct or None)




@contextmanager
def _env(extra: dict[str, str]) -> Iterator[None]:
    """Set environment variables for children spawned without an explicit environment (Mininet's)."""
    old = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class FabricNetwork:
    def __init__(self, fabric: Fabric, options: NetOptions | None = None, pipeline: Pipeline | None = None,
                 progress: Progress | None = None, program: Path | None = None,
                 entries: Mapping[str, Sequence[Path]] | None = None) -> None:
        """``program``: a user's P4 source for every switch (default: the topology file's, else dcnlab's
        own program). With a user's program dcnlab installs no routes of its own; the topology file's
        runtime JSON and CLI command files are written instead. ``entries``: more entry files per
        switch (runtime JSON or ``simple_switch_CLI`` commands), written after the topology file's."""
        self.fabric = fabric
        self.opts = options or NetOptions()
        self.opts.validate()
        self.pipeline = pipeline
        self.progress = progress or (lambda msg: log.info("%s", msg))
        self._check_size()      # from the fabric's counts, before any per-host or per-switch record
        self.extra_entries = {n: [Path(x) for x in files] for n, files in (entries or {}).items()}
        if self.extra_entries:
            unknown = sorted(set(self.extra_entries) - {n.name for n in fabric.forwarding_nodes()})
            if unknown:
                raise UserError(f"entries: no switch named {', '.join(map(repr, unknown))} in {fabric.spec}")
        self.programs: dict[str, Path] = ({n.name: program for n in fabric.forwarding_nodes()} if program is not None
                                          else user_programs(fabric))
        """Each switch's user program; empty with dcnlab's own program (which then installs routes)."""
        self.program: Path | None = program if program is not None else user_program(fabric)
        """The user program when every switch runs the same one."""
        self.pipelines: dict[str, Pipeline] = {}
        self.run: RunDir | None = None
        self.netns: str | None = None
        self.mn: Any = None                          # mininet.net.Mininet (hosts only)
        self.hosts: dict[str, Any] = {}              # name -> mininet.node.Host
        self.host_info: dict[str, HostInfo] = {h.name: h for h in fabric.hosts()}
        self.switches: dict[str, bmv2.BMv2Process] = {}
        self.agents: dict[str, AgentHandle] = {}
        self.addrs: dict[str, HostAddr] = {}
        self.controller: Controller | None = None
        self.failures: list[SwitchFailure] = []
        self.timings = Timings()
        self._stopped = False
        self._stop_monitor = threading.Event()
        self._monitor: threading.Thread | None = None
        self._restarting: set[str] = set()
        self._lock = threading.Lock()
        self.relays: LoopbackRelays | None = None
        self.host_commands: HostCommands | None = None

    def _check_size(self) -> None:
        """Refuse a fabric above ``max_switches`` forwarding nodes or :data:`MAX_EMULATED_HOSTS` hosts,
        from its closed-form counts (nothing is enumerated: fattree:k=406 has 16.7 million hosts)."""
        counts = self.fabric.counts()
        hosts = counts.get(Role.HOST, 0)
        n = sum(counts.values()) - hosts
        if n > self.opts.max_switches:
            raise UserError(f"{self.fabric.spec} has {n:,} forwarding nodes and {hosts:,} hosts; emulation is "
                            f"limited to max_switches={self.opts.max_switches} (about 30 MB of RAM per BMv2 "
                            f"process); use the model backend for paper-scale instances")
        if hosts > MAX_EMULATED_HOSTS:
            raise UserError(f"{self.fabric.spec} has {hosts:,} hosts; emulation is limited to "
                            f"{MAX_EMULATED_HOSTS:,} hosts (one Mininet host each); use the model backend")
        check_memory(self.fabric.spec, n, hosts)

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
            raise UserError("emulation needs root (network namespaces, veths, BMv2 on raw interfaces); "
                            "run dcnlab as root, e.g. with sudo")
        o.shaping().check_kernel()
        require_tool("simple_switch_grpc")
        compact = o.log_level not in ("trace", "debug", "info")
        if self.pipeline is None and self.programs:
            from dcnlab.p4src.compiler import compile_program
            built = {p: compile_program(p.stem, src_dir=p.parent).pipeline(compact=compact)
                     for p in dict.fromkeys(self.programs.values())}   # each distinct program once (cached)
            self.pipelines = {n: built[p] for n, p in self.programs.items()}
            self.pipeline = next(iter(built.values()))
        if self.pipeline is None:
            from dcnlab.p4src.compiler import compile_program
            from dcnlab.p4src.sizing import sizing_for
            self.pipeline = compile_program(defines=sizing_for(f).defines()).pipeline(
                compact=o.log_level not in ("trace", "debug", "info"))
        entries = self._load_user_entries(f)    # checked against the P4Info before anything exists
        t = self.timings.mark("compile", t)
        self.run = RunDir.create(f.spec)
        tag = self.run.tag
        if o.grpc_tcp is not None:      # bound now: a port in use is an error before anything else exists
            self.relays = LoopbackRelays({o.grpc_tcp + i: self.run.sockets / f"sw{i}.sock"
                                          for i, _ in enumerate(f.forwarding_nodes())})
            log.warning("%s", loopback_warning(len(self.relays.addresses)))

        # The run's namespace, recorded before it exists.
        self.netns = f"dcnlab-{self.run.id}"
        self.run.record_netns(self.netns)
        netns.create(self.netns)

        # Hosts: Mininet namespaces with shells (no Mininet links, controller or switches).
        # Mininet.init() would raise machine-wide sysctls (fixLimits); dcnlab changes nothing
        # outside what it creates, and static per-host neighbour tables need none of them.
        Mininet.inited = True
        self.mn = Mininet(topo=None, build=False, controller=None, autoSetMacs=False, autoStaticArp=False,
                          waitConnected=False)
        with _env(tag):
            for h in f.hosts():
                host = self.mn.addHost(h.name, cls=FastHost, ip=None)
                self.hosts[h.name] = host
                self.run.record_process(f"host:{h.name}", host.pid, "bash")
        finish_shells(list(self.hosts.values()))
        for host in self.hosts.values():  # no IPv6 chatter from hosts: set before their link exists
            host.sendCmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        for host in self.hosts.values():
            host.waitOutput()
        t = self.timings.mark("hosts", t)

        # Links: every switch-side end in the run namespace, host ends in the hosts.
        pairs, switch_ends, host_side = [], [], {}
        for l in f.links():
            a_fwd, b_fwd = f.node(l.a).forwards, f.node(l.b).forwards
            ia, ib = intf_name(l.a, l.a_port), intf_name(l.b, l.b_port)
            if a_fwd and b_fwd:
                pairs.append(links.VethPair(ia, ib))
                switch_ends += [ia, ib]
            else:
                sw_if, hn = (ia, l.b) if a_fwd else (ib, l.a)
                hi = "eth0" if isinstance(f, UserFabric) else intf_name(hn, 0)   # what exercises' scripts expect
                pairs.append(links.VethPair(sw_if, hi, self.hosts[hn].pid))
                switch_ends.append(sw_if)
                host_side[hn] = hi
        links.check_names(switch_ends + list(host_side.values()))
        links.create(self.netns, pairs)
        offloads.disable(self.netns, switch_ends)
        shaping = o.shaping()
        if shaping.active:
            links.shape(self.netns, [line for d in switch_ends for line in shaping.tc_lines(d)])
        elif isinstance(f, UserFabric) and f.link_shape:
            per_end = {intf_name(node, port): _shaping(ls) for (node, port), ls in f.link_shape.items()
                       if f.node(node).forwards}
            for sh in {(s.delay is not None, s.loss_pct is not None): s for s in per_end.values()}.values():
                sh.check_kernel()       # netem for delay, the BPF classifier for loss: before links exist
            links.shape(self.netns, [line for dev, sh in per_end.items() for line in sh.tc_lines(dev)])
        t = self.timings.mark("links", t)

        # Switches: start all, then wait for all.
        for i, node in enumerate(f.forwarding_nodes()):
            ports = {p: intf_name(node.name, p) for p in range(node.ports) if f.peer(node.name, p) is not None}
            cfg = bmv2.BMv2Config(node.name, i, ports, o.thrift_base + i, self.run.path, self.netns,
                                  self.run.sockets, o.log_level, o.pcap, extra=tuple(o.bmv2_args), env=tag)
            sw = bmv2.BMv2Process(cfg)
            sw.start()
            self.switches[node.name] = sw
            self.run.record_process(f"switch:{node.name}", sw.pid, "simple_switch_grpc")
        self.progress(f"started {len(self.switches)} BMv2 switches")

        # Host configuration (addresses, static ARP, shaping) and agents, while switches boot.
        self._configure_hosts(host_side, shaping)
        self._run_host_commands(tag)
        self.addrs = {name: HostAddr(name, host_side[name], self.host_info[name].ip, self.host_info[name].mac)
                      for name in self.hosts}
        if o.agents:
            for name, host in self.hosts.items():
                a = AgentHandle(self.addrs[name], popen=host.popen,
                                log_file=self.run.path / f"agent-{name}.err", env=tag)
                self.agents[name] = a
                self.run.record_process(f"agent:{name}", a.pid, "python")
        t = self.timings.mark("spawn", t)

        bmv2.wait_ready(list(self.switches.values()), o.start_timeout,
                        progress=lambda done, total: self.progress(f"switches ready: {done}/{total}"))
        t = self.timings.mark("switch-ready", t)

        targets = [SwitchTarget(n, sw.cfg.device_id, sw.cfg.grpc_addr, sw.cfg.thrift_port, self.netns)
                   for n, sw in self.switches.items()]
        self.controller = Controller(self.pipelines or self.pipeline, targets,
                                     log_dir=self.run.path if o.grpc_log else None)
        self.controller.start()
        if o.watch:   # also re-push to a switch that someone else restarted
            self.controller.watch()
        t = self.timings.mark("pipeline", t)

        if entries:
            self._write_user_entries(entries)
        if o.routes and not self.programs and o.controller:
            state = compute_forwarding(router_for(f))
            self.controller.write(forwarding_updates(state, o.ecmp))
        if o.queue_rate_pps is not None or o.queue_depth is not None:   # one CLI process per switch, in parallel
            with ThreadPoolExecutor(max_workers=8) as pool:
                list(pool.map(lambda item: self.controller.thrift(item[0]).set_queues(
                    o.queue_depth, o.queue_rate_pps, sorted(item[1].cfg.ports)), self.switches.items()))
        if not o.controller:
            self.controller.step_down()     # the user's controller becomes primary
        self._record_endpoints()
        t = self.timings.mark("routes", t)
        for a in self.agents.values():
            a.wait_ready()
        self.timings.mark("agents", t)
        if o.monitor:
            self._monitor = threading.Thread(target=self._watch_switches, name="bmv2-monitor", daemon=True)
            self._monitor.start()
        self.progress(f"{f.spec} up in {self.timings.total():.2f} s")

    def endpoints(self) -> list[Endpoint]:
        """Each switch's P4Runtime and Thrift endpoints, in device-id order."""
        tcp = self.relays.addresses if self.relays is not None else {}
        own = self.controller.election_id if self.controller is not None and self.opts.controller else None
        return [Endpoint(n, sw.cfg.device_id, sw.cfg.grpc_addr, tcp.get(sw.cfg.socket_path), sw.cfg.thrift_port,
                         self.netns or "", own) for n, sw in self.switches.items()]

    def _record_endpoints(self) -> None:
        assert self.run is not None
        data = [dict(e.__dict__) for e in self.endpoints()]
        (self.run.path / "endpoints.json").write_text(json.dumps(data, indent=1) + "\n")

    def _load_user_entries(self, f: Fabric) -> dict[str, Entries]:
        """Each switch's runtime JSON and CLI command file (the topology file's, then ``entries``),
        checked against the P4Info (:class:`~dcnlab.controller.runtime.entry_files.EntryFileError`
        names the file, entry and field)."""
        assert self.pipeline is not None
        files: dict[str, list[Path]] = {}
        if isinstance(f, UserFabric):
            for name, conf in f.switch_conf.items():
                files[name] = [p for p in (conf.runtime_json, conf.cli_input) if p is not None]
        for name, extra in self.extra_entries.items():
            files.setdefault(name, []).extend(extra)
        out: dict[str, Entries] = {}
        for name, paths in files.items():
            entries = Entries()
            for path in paths:
                entries.extend(load_entries(path, (self.pipelines.get(name) or self.pipeline).p4info))
            if entries.updates or entries.thrift:
                out[name] = entries
        return out

    def _write_user_entries(self, per_switch: dict[str, Entries]) -> None:
        assert self.controller is not None
        self.controller.write({n: e.updates for n, e in per_switch.items() if e.updates})
        for name, e in per_switch.items():
            if e.thrift:
                self.controller.thrift(name).run(e.thrift)

    def _configure_hosts(self, host_side: dict[str, str], shaping: links.Shaping) -> None:
        from mininet.link import Intf

        infos = list(self.host_info.values())
        for name, host in self.hosts.items():
            info, dev = self.host_info[name], host_side[name]
            conf = (self.fabric.host_conf.get(name) if isinstance(self.fabric, UserFabric) else None) or HostConf()
            neigh = "\n".join(f"neigh replace {o.ip} lladdr {o.mac} dev {dev} nud permanent"
                              for o in infos if o.name != name)
            own = self.fabric.shape_of(info.node, info.node_port) if isinstance(self.fabric, UserFabric) else None
            # the file's shaping of this host's link also applies host -> switch (BMv2 reads a frame
            # before the switch end's tc could drop it)
            tc = "\n".join(shaping.tc_lines(dev) if shaping.active or own is None else _shaping(own).tc_lines(dev))
            # TX checksum offload would leave TCP/UDP checksums unfinished on frames that BMv2
            # forwards between veths; compute them in software instead.  One { } group = one
            # shell prompt; heredocs keep every pty line short.
            lines = ["rc=0",
                     f"ip link set dev {dev} address {info.mac} && ip addr add {info.ip}/{conf.prefix_len} dev {dev} && "
                     f"ethtool -K {dev} tx off >/dev/null && ip link set dev {dev} up && "
                     f"ip link set dev lo up || rc=1"]
            if neigh:
                lines += ["ip -batch - <<'EOF' || rc=1", neigh, "EOF"]
            if tc:
                lines += ["tc -batch - <<'EOF' || rc=1", tc, "EOF"]
            if conf.gateway_mac:
                lines.append(f"ip neigh replace {conf.gateway} lladdr {conf.gateway_mac} dev {dev} nud permanent "
                             f"|| rc=1")
            if conf.gateway:
                lines.append(f"ip route add default via {conf.gateway} dev {dev} || rc=1")
            host.sendCmd("{ " + "\n".join(lines) + "\necho DCNLAB_RC=$rc\n}")
            # Tell Mininet about the interface (for its CLI) without it running any command.
            intf = Intf(dev, node=host, port=0, moveIntfFn=lambda *a, **k: None, up=None)
            intf.ip, intf.prefixLen, intf.mac = info.ip, conf.prefix_len, info.mac
        for name, host in self.hosts.items():
            out = host.waitOutput()
            if "DCNLAB_RC=0" not in out:
                raise UserError(f"configuring host {name} failed: {out.strip()[-300:]}")

    def _run_host_commands(self, tag: dict[str, str]) -> None:
        """The topology file's host ``commands``, each bounded by ``host_command_timeout``
        (:mod:`dcnlab.emu.hostcmds`); what they leave running is stopped at teardown."""
        if not isinstance(self.fabric, UserFabric):
            return
        jobs = {name: (enter_prefix(host.pid), conf.commands) for name, host in self.hosts.items()
                if (conf := self.fabric.host_conf.get(name)) is not None and conf.commands}
        if jobs:
            assert self.run is not None
            self.host_commands = HostCommands(self.run.path, self.opts.host_command_timeout, tag, self.fabric.spec)
            self.host_commands.run(jobs)

    # -- switch monitor ------------------------------------------------------------
    def _watch_switches(self) -> None:
        while not self._stop_monitor.wait(self.opts.monitor_interval):
            for name, sw in list(self.switches.items()):
                if name in self._restarting or self._stop_monitor.is_set():
                    continue
                rc = sw.failed()
                if rc is None:
                    continue
                failure = SwitchFailure(name, rc, time.monotonic(), sw.log_tail())
                log.error("switch %s died (exit status %s); log tail:\n%s", name, rc, failure.log_tail)
                if self.opts.watch:
                    try:
                        self.restart_switch(name, kill=False)
                    except RuntimeErrorBase as e:
                        log.error("restarting %s failed: %s", name, e)
                    else:
                        failure = SwitchFailure(name, rc, failure.at, failure.log_tail, restarted=True)
                        log.warning("switch %s restarted; pipeline and state re-pushed", name)
                with self._lock:
                    self.failures.append(failure)
                if not self.opts.watch:
                    self._restarting.add(name)  # report a dead switch once

    def check_switches(self) -> None:
        """Raise :class:`UserError` naming every switch that died and was not brought back."""
        dead = [f for f in self.failures if not f.restarted]
        if dead:
            raise UserError("; ".join(str(f) for f in dead))

    # -- use ---------------------------------------------------------------------
    def addr(self, host: str) -> HostAddr:
        return self.addrs[host]

    def agent(self, host: str) -> AgentHandle:
        return self.agents[host]

    def reachability(self, port: int = 9999, deadline: float = 10.0, attempts: int = 4,
                     budget_pps: float | None = None) -> Reachability:
        """All-pairs UDP probes from the hosts' own kernels, paced, retrying missing pairs (see
        :mod:`dcnlab.emu.reachability`). Needs no agents."""
        hosts = [ProbeHost(n, self.host_info[n].ip, h.pid) for n, h in self.hosts.items()]
        return probe_all_pairs(hosts, port=port, deadline=deadline, attempts=attempts, budget_pps=budget_pps,
                               forwarding_nodes=len(self.switches))

    def link_ends(self, a: str, b: str) -> list[str]:
        """The two switch-side interfaces of the link between forwarding nodes ``a`` and ``b``."""
        node = self.fabric.node(a)
        for port in range(node.ports):
            peer = self.fabric.peer(a, port)
            if peer is not None and peer[0] == b:
                return [intf_name(a, port), intf_name(b, peer[1])]
        raise UserError(f"no link between {a} and {b} in {self.fabric.spec}")

    def cut_link(self, a: str, b: str, how: faults.CutMode = "drop") -> None:
        """Cut the link a–b in both directions (see :mod:`dcnlab.emu.faults` for the two ways)."""
        faults.cut(self.netns, self.link_ends(a, b), how)

    def restore_link(self, a: str, b: str) -> None:
        faults.restore(self.netns, self.link_ends(a, b))

    def restart_switch(self, name: str, timeout: float = 20.0, kill: bool = True) -> None:
        """(Kill and) restart one BMv2 process; the controller re-pushes its pipeline and state."""
        sw = self.switches[name]
        self._restarting.add(name)
        try:
            if kill:
                sw.signal(9)
            sw.proc.wait()
            sw.start()
            self.run.record_process(f"switch:{name}", sw.pid, "simple_switch_grpc")
            bmv2.wait_ready([sw], timeout)
            if name not in self.controller.handed_over():   # else the user's controller re-pushes it
                self.controller.reconnect(name, timeout)
        finally:
            self._restarting.discard(name)

    # -- teardown ----------------------------------------------------------------
    def stop(self) -> None:
        """Tear everything down. Every step runs even when an earlier one fails (a half-done teardown
        would leave processes and the namespace behind); the first failure is raised at the end."""
        if self._stopped:
            return
        self._stopped = True
        t = time.perf_counter()
        errors: list[BaseException] = []

        def step(fn: Callable[[], object]) -> None:
            try:
                fn()
            except Exception as e:   # noqa: BLE001 - logged, teardown goes on, re-raised below
                log.error("teardown step %s failed: %s", getattr(fn, "__name__", fn), e)
                errors.append(e)

        self._stop_monitor.set()
        if self._monitor is not None:
            self._monitor.join(timeout=30)
        for a in self.agents.values():   # tell every agent to quit at once; close() waits below
            step(a.request_quit)
        if self.controller is not None:
            step(self.controller.close)
        if self.relays is not None:
            step(self.relays.close)
        for sw in self.switches.values():
            step(partial(sw.signal, 15))
        if self.host_commands is not None:
            step(self.host_commands.stop)
        for host in self.hosts.values():
            step(host.terminate)
        for a in self.agents.values():
            step(a.close)
        step(lambda: bmv2.stop_all(list(self.switches.values())))
        if self.netns is not None:
            step(lambda: netns.delete(self.netns))
        if self.run is not None:
            step(self.run.remove_sockets)
            step(self.run.mark_finished)
        self.timings.phases["teardown"] = time.perf_counter() - t
        if errors:
            raise errors[0]

    def __enter__(self) -> FabricNetwork:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
