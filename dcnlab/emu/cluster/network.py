"""A fabric over several machines: :class:`ClusterNetwork`, a :class:`~dcnlab.emu.network.FabricNetwork`
whose switches and hosts are spread by a :class:`~dcnlab.emu.cluster.partition.Placement`.

Every machine runs its share as a one-machine run does (see :mod:`dcnlab.emu.network`): its BMv2
processes and switch-side interfaces in a run namespace of its own (``dcnlab-<run id>`` here,
``dcnlab-<run id>-m<i>`` on machine ``i``), hosts as Mininet hosts (remote ones through Mininet's
``RemoteMixin``, :mod:`dcnlab.emu.cluster.remote`), links inside a machine as veths, and cut links
as VXLAN tunnel ends (:mod:`dcnlab.emu.cluster.tunnels`). The controller is this process's, as
always: it reaches a remote switch's P4Runtime Unix socket through its machine's SSH master, which
forwards a local Unix socket in this run's socket directory to it; nothing listens on a network
address. Routing, the all-pairs check (:mod:`dcnlab.emu.cluster.probe`) and the per-port counters
are the one-machine ones.

Bring-up, each step on every machine at once: SSH masters and agents (``hello`` checks root, the
tools and the dcnlab version on each machine and refuses in one line), run namespaces, host shells,
links and tunnels, BMv2 processes, host configuration and socket forwards, readiness, pipeline
and routes. Teardown: controller, host shells, then each machine's part (its agent stops its
switches and deletes its namespace), agents, masters, sockets. A machine's agent also tears its
part down when its SSH connection closes, so a coordinator killed with SIGKILL leaves the other
machines clean once SSH notices; ``dcnlab clean`` finishes the rest (:mod:`dcnlab.emu.cluster.records`).

Not supported across machines (refused before anything starts): a program of the user's (its
Thrift entries and registers need the CLI inside the switch's namespace), ``--no-controller``,
``--grpc-tcp``, BMv2 queue settings (Thrift) and ``--watch``.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from dcnlab.controller.routing import compute_forwarding, router_for
from dcnlab.controller.rules import forwarding_updates
from dcnlab.controller.runtime.controller import Controller, SwitchTarget
from dcnlab.controller.runtime.toolchain import require_tool
from dcnlab.emu import bmv2, links
from dcnlab.emu.cluster import records, tunnels
from dcnlab.emu.cluster.agent import PROTOCOL, AgentClient, RemoteSide
from dcnlab.emu.cluster.partition import Placement, place
from dcnlab.emu.cluster.probe import ProbeSideLike, probe_cluster
from dcnlab.emu.cluster.remote import (Server, SshPool, agent_command, finish_remote_shells, remote_host_class,
                                       remote_python, ssh_base)
from dcnlab.emu.cluster.side import Side
from dcnlab.emu.hosts import FastHost, finish_shells
from dcnlab.emu.network import Endpoint, FabricNetwork, Progress, SwitchFailure, _env, _shaping, intf_name
from dcnlab.emu.options import MAX_EMULATED_HOSTS, NetOptions
from dcnlab.emu.reachability import ProbeHost, Reachability
from dcnlab.emu.rundir import RunDir, run_root
from dcnlab.topos.errors import UserError
from dcnlab.topos.files import UserFabric
from dcnlab.topos.model import Fabric, Role
from dcnlab.traffic.hostctl import HostAddr

log = logging.getLogger(__name__)

__all__ = ["ClusterNetwork", "RemoteSwitch"]

T = TypeVar("T")


class RemoteSwitch(bmv2.BMv2Process):
    """A BMv2 process on another machine, as :class:`~dcnlab.emu.network.FabricNetwork` sees a switch:
    its configuration (paths on that machine), its pid there, and the local socket forwarded to its
    P4Runtime socket. Its agent watches it (:meth:`ClusterNetwork.check_switches` asks)."""

    def __init__(self, cfg: bmv2.BMv2Config, pid: int, machine: str, local_socket: Path) -> None:
        super().__init__(cfg)
        self.remote_pid, self.machine, self.local_socket = pid, machine, local_socket

    def start(self) -> None:
        raise UserError(f"switch {self.cfg.name} runs on {self.machine}; its agent starts it")

    def ready(self) -> bool:
        return self.local_socket.exists()

    def failed(self) -> int | None:
        return None

    def log_tail(self, lines: int = 15) -> str:
        return f"(on {self.machine}: {self.cfg.out_file})"

    def signal(self, sig: int) -> None:
        raise UserError(f"switch {self.cfg.name} runs on {self.machine}; signals go to local switches only")


def _parallel(fns: Sequence[Callable[[], T]]) -> list[T]:
    """Run ``fns`` at once; raise the first error after all have finished."""
    if len(fns) <= 1:
        return [fn() for fn in fns]
    with ThreadPoolExecutor(max_workers=len(fns)) as pool:
        futures = [pool.submit(fn) for fn in fns]
        errors = [f.exception() for f in futures]
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return [f.result() for f in futures]


class ClusterNetwork(FabricNetwork):
    def __init__(self, fabric: Fabric, servers: Sequence[Server], options: NetOptions | None = None,
                 progress: Progress | None = None, ssh_config: Path | None = None,
                 placement: Placement | None = None) -> None:
        """``servers``: the machines (:func:`~dcnlab.emu.cluster.remote.parse_servers`), this one first.
        ``placement``: default :func:`~dcnlab.emu.cluster.partition.place`."""
        self.servers = list(servers)
        super().__init__(fabric, options, progress=progress)
        o = self.opts
        if self.programs:
            raise UserError("argument --servers: only with dcnlab's own program (a program of your own needs "
                            "Thrift inside each switch's namespace); drop --servers or the program")
        refused = [name for name, on in (("--no-controller", not o.controller), ("--grpc-tcp", o.grpc_tcp is not None),
                                         ("--queue-rate", o.queue_rate_pps is not None),
                                         ("--queue-depth", o.queue_depth is not None), ("--watch", o.watch)) if on]
        if refused:
            raise UserError(f"argument --servers: not with {', '.join(refused)} (one machine only)")
        if o.agents:
            log.warning("ClusterNetwork starts no traffic agents (NetOptions.agents is ignored)")
        if ssh_config is not None and not ssh_config.is_file():
            raise UserError(f"argument --ssh-config: {ssh_config} is not a file; valid: an ssh_config(5) file")
        self.ssh_config = ssh_config
        self.placement = placement or place(fabric, [s.name for s in self.servers])
        self.sides: list[Any] = []                  # Side here, RemoteSide elsewhere (index = machine)
        self.pools: dict[int, SshPool] = {}
        self.clients: dict[int, AgentClient] = {}
        self.remote_info: dict[int, dict[str, Any]] = {}
        self.connections: dict[int, tuple[str, str]] = {}
        """machine -> (this machine's address as it sees it, its own address) from SSH_CONNECTION."""
        self.reached: set[int] = set()
        """Machines whose agent answered: only these can hold anything of the run."""
        self.record: records.ClusterRecord | None = None

    def _check_size(self) -> None:
        """Per machine: at most ``max_switches`` forwarding nodes on each (balanced placement), and at
        most :data:`MAX_EMULATED_HOSTS` hosts in all."""
        counts = self.fabric.counts()
        hosts = counts.get(Role.HOST, 0)
        n = sum(counts.values()) - hosts
        per = -(-n // max(1, len(self.servers)))
        if per > self.opts.max_switches:
            raise UserError(f"{self.fabric.spec} has {n:,} forwarding nodes: {per} per machine over "
                            f"{len(self.servers)} machines; the limit is max_switches={self.opts.max_switches} "
                            f"per machine; add machines (see `dcnlab plan cluster`)")
        if hosts > MAX_EMULATED_HOSTS:
            raise UserError(f"{self.fabric.spec} has {hosts:,} hosts; emulation is limited to "
                            f"{MAX_EMULATED_HOSTS:,} hosts")

    def machine_run_id(self, i: int) -> str:
        assert self.run is not None
        return self.run.id if i == 0 else f"{self.run.id}-m{i}"

    def machine_netns(self, i: int) -> str:
        return f"dcnlab-{self.machine_run_id(i)}"

    def _address(self, j: int, seen_from: int) -> str:
        """Machine ``j``'s address for machine ``seen_from``'s tunnel ends."""
        if j == 0:
            return self.connections[seen_from][0]
        return self.connections[j][1]

    # -- bring-up ----------------------------------------------------------------
    def connect(self) -> None:
        """Check this machine, create the run's record, then connect to every other machine (SSH
        masters, agents, ``hello``), all before anything is built: a machine that cannot take part is
        refused in one line. :meth:`start` calls it; called alone, :meth:`stop` undoes it."""
        if self.run is not None:
            return
        t = time.perf_counter()
        o, pl = self.opts, self.placement
        if os.geteuid() != 0:
            raise UserError("emulation needs root (network namespaces, veths, BMv2 on raw interfaces); "
                            "run dcnlab as root, e.g. with sudo")
        o.shaping().check_kernel()
        ssh_base(self.ssh_config)
        if pl.parts[0].switches:
            require_tool("simple_switch_grpc")
        self.run = run = RunDir.create(self.fabric.spec)
        remote = [s for s in self.servers if not s.local]
        self.record = records.ClusterRecord([s.name for s in remote],
                                            {s.name: self.machine_run_id(s.index) for s in remote},
                                            str(self.ssh_config) if self.ssh_config else None, remote_python(),
                                            str(run_root().absolute()), str(records.control_dir(run)))
        records.save(run, self.record)      # before anything exists on another machine
        ctl = Path(self.record.control_dir)
        ctl.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(ctl, 0o700)
        self._connect(remote, run.tag)
        self.timings.mark("connect", t)

    def _start(self) -> None:
        from mininet.log import lg
        from mininet.net import Mininet

        lg.propagate = False
        f, o, pl = self.fabric, self.opts, self.placement
        self.connect()
        t = time.perf_counter()
        if self.pipeline is None:
            from dcnlab.p4src.compiler import compile_program
            from dcnlab.p4src.sizing import sizing_for
            self.pipeline = compile_program(defines=sizing_for(f).defines()).pipeline(
                compact=o.log_level not in ("trace", "debug", "info"))
        t = self.timings.mark("compile", t)
        run = self.run
        assert run is not None
        tag = run.tag
        remote = [s for s in self.servers if not s.local]

        # Run namespaces, every machine at once.
        local = Side(run, self.machine_netns(0), owns_run=False)
        self.netns = local.netns
        self.sides = [local] + [RemoteSide(self.clients[s.index]) for s in remote]
        infos = _parallel([local.setup] + [partial(self.sides[s.index].setup, self.machine_run_id(s.index), f.spec)
                                          for s in remote])
        self.remote_info = {s.index: infos[s.index] for s in remote}

        # Hosts: local FastHosts and remote ones (RemoteMixin), all shells spawned before any is awaited.
        Mininet.inited = True
        self.mn = Mininet(topo=None, build=False, controller=None, autoSetMacs=False, autoStaticArp=False,
                          waitConnected=False)
        remote_cls = remote_host_class()
        remote_hosts = []
        with _env(tag):
            for h in f.hosts():
                m = pl.machine_of[h.name]
                if m == 0:
                    host = self.mn.addHost(h.name, cls=FastHost, ip=None)
                else:
                    host = self.mn.addHost(h.name, cls=remote_cls, ip=None, pool=self.pools[m],
                                           tag={"DCNLAB_RUN": self.machine_run_id(m)})
                    remote_hosts.append(host)
                self.hosts[h.name] = host
        finish_shells([h for h in self.hosts.values() if not getattr(h, "isRemote", False)])
        finish_remote_shells(remote_hosts)
        for name, host in self.hosts.items():
            m = pl.machine_of[name]
            if m == 0:
                run.record_process(f"host:{name}", host.pid, "bash")
            else:
                run.record_process(f"host:{name}@m{m}", host.shell.pid, "ssh")
        _parallel([partial(self.sides[s.index].record,
                           [(f"host:{n}", h.pid, "bash") for n, h in self.hosts.items() if pl.machine_of[n] == s.index])
                   for s in remote])
        for host in self.hosts.values():
            host.sendCmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        for host in self.hosts.values():
            host.waitOutput()
        t = self.timings.mark("hosts", t)

        # Links: veths inside each machine, VXLAN tunnel ends for cut links.
        n_m = len(self.servers)
        veths: list[list[links.VethPair]] = [[] for _ in range(n_m)]
        ends: list[list[tunnels.TunnelEnd]] = [[] for _ in range(n_m)]
        switch_ends: list[list[str]] = [[] for _ in range(n_m)]
        host_side: dict[str, str] = {}
        cut_index = 0
        for link in f.links():
            ma, mb = pl.machine_of[link.a], pl.machine_of[link.b]
            a_fwd, b_fwd = f.node(link.a).forwards, f.node(link.b).forwards
            ia, ib = intf_name(link.a, link.a_port), intf_name(link.b, link.b_port)
            if ma != mb:
                cut_index += 1
                vni = tunnels.vni(run.id, cut_index)
                ends[ma].append(tunnels.TunnelEnd(ia, vni, self._address(mb, ma)))
                ends[mb].append(tunnels.TunnelEnd(ib, vni, self._address(ma, mb)))
                switch_ends[ma].append(ia)
                switch_ends[mb].append(ib)
            elif a_fwd and b_fwd:
                veths[ma].append(links.VethPair(ia, ib))
                switch_ends[ma] += [ia, ib]
            else:
                sw_if, hn = (ia, link.b) if a_fwd else (ib, link.a)
                hi = "eth0" if isinstance(f, UserFabric) else intf_name(hn, 0)
                veths[ma].append(links.VethPair(sw_if, hi, self.hosts[hn].pid))
                switch_ends[ma].append(sw_if)
                host_side[hn] = hi
        shaping = o.shaping()
        per_end: dict[str, links.Shaping] = {}
        if shaping.active:
            per_end = {d: shaping for ends_m in switch_ends for d in ends_m}
        elif isinstance(f, UserFabric) and f.link_shape:
            per_end = {intf_name(node, port): _shaping(ls) for (node, port), ls in f.link_shape.items()
                       if f.node(node).forwards}
            for sh in {(s.delay is not None, s.loss_pct is not None): s for s in per_end.values()}.values():
                sh.check_kernel()
        tc = [[line for d in switch_ends[m] if d in per_end for line in per_end[d].tc_lines(d)] for m in range(n_m)]
        _parallel([partial(self.sides[m].links, veths[m], ends[m], switch_ends[m], tc[m]) for m in range(n_m)])
        t = self.timings.mark("links", t)

        # Switches: every machine starts its own at once.
        cfgs: list[list[bmv2.BMv2Config]] = [[] for _ in range(n_m)]
        for i, node in enumerate(f.forwarding_nodes()):
            m = pl.machine_of[node.name]
            ports = {p: intf_name(node.name, p) for p in range(node.ports) if f.peer(node.name, p) is not None}
            if m == 0:
                rdir, sdir = run.path, run.sockets
            else:
                rdir, sdir = Path(self.remote_info[m]["run_dir"]), Path(self.remote_info[m]["sockets"])
            cfgs[m].append(bmv2.BMv2Config(node.name, i, ports, o.thrift_base + i, rdir, self.machine_netns(m), sdir,
                                           o.log_level, o.pcap, extra=tuple(o.bmv2_args),
                                           env={"DCNLAB_RUN": self.machine_run_id(m)}))
        pids = _parallel([partial(self.sides[m].start_switches, cfgs[m]) for m in range(n_m)])
        order = {n.name: i for i, n in enumerate(f.forwarding_nodes())}
        for m in range(n_m):
            for cfg in cfgs[m]:
                if m == 0:
                    self.switches[cfg.name] = self.sides[0].switches[cfg.name]
                else:
                    self.switches[cfg.name] = RemoteSwitch(cfg, pids[m][cfg.name], self.servers[m].name,
                                                           run.sockets / cfg.socket_path.name)
        self.switches = dict(sorted(self.switches.items(), key=lambda kv: order[kv[0]]))
        self.progress(f"started {len(self.switches)} BMv2 switches on {n_m} machines")

        self._configure_hosts(host_side, shaping)
        self._run_host_commands(run.tag)
        self.addrs = {name: HostAddr(name, host_side[name], self.host_info[name].ip, self.host_info[name].mac)
                      for name in self.hosts}
        for m in range(1, n_m):
            self.pools[m].first.forward([(str(sw.local_socket), str(sw.cfg.socket_path))
                                         for sw in self.switches.values()
                                         if isinstance(sw, RemoteSwitch) and pl.machine_of[sw.cfg.name] == m])
        t = self.timings.mark("spawn", t)

        _parallel([partial(self.sides[m].wait_ready, o.start_timeout) for m in range(n_m)])
        self.progress(f"switches ready: {len(self.switches)}/{len(self.switches)}")
        t = self.timings.mark("switch-ready", t)

        targets = [SwitchTarget(n, sw.cfg.device_id, f"unix:{sw.local_socket}", None, None)
                   if isinstance(sw, RemoteSwitch) else
                   SwitchTarget(n, sw.cfg.device_id, sw.cfg.grpc_addr, sw.cfg.thrift_port, self.netns)
                   for n, sw in self.switches.items()]
        self.controller = Controller(self.pipeline, targets, log_dir=run.path if o.grpc_log else None)
        self.controller.start()
        t = self.timings.mark("pipeline", t)
        if o.routes:
            self.controller.write(forwarding_updates(compute_forwarding(router_for(f)), o.ecmp))
        self._record_endpoints()
        self.timings.mark("routes", t)
        if o.monitor:
            import threading
            self._monitor = threading.Thread(target=self._watch_switches, name="bmv2-monitor", daemon=True)
            self._monitor.start()
        self.progress(f"{f.spec} up on {n_m} machines in {self.timings.total():.2f} s")

    def _connect(self, remote: Sequence[Server], tag: dict[str, str]) -> None:
        """SSH masters and an agent on every other machine, at once; one line naming every problem."""
        assert self.run is not None and self.record is not None
        ctl = Path(self.record.control_dir)
        counts = {s.index: len(self.placement.parts[s.index].hosts) for s in remote}

        def connect(s: Server) -> tuple[Server, dict[str, Any]]:
            pool = SshPool(s.name, ctl, s.index, self.ssh_config, self.run.path, tag)
            self.pools[s.index] = pool
            pool.open(counts[s.index])
            rid = self.machine_run_id(s.index)
            argv = pool.first.argv(agent_command(["serve"], str(run_root().absolute()), rid))
            client = AgentClient(s.name, argv, self.run.path / f"agent-m{s.index}.log", tag)
            self.clients[s.index] = client
            return s, client.call("hello", timeout=60.0)

        problems = []
        results = []
        with ThreadPoolExecutor(max_workers=max(1, len(remote))) as pool:
            futures = [pool.submit(connect, s) for s in remote]
            for s, fut in zip(remote, futures):
                try:
                    results.append(fut.result())
                except UserError as e:
                    problems.append(str(e) if str(e).startswith("server ") else f"server {s.name}: {e}")
        for s, hello in results:
            self.reached.add(s.index)
            why = list(hello.get("problems", []))
            if hello.get("protocol") != PROTOCOL:
                why.append(f"its dcnlab speaks agent protocol {hello.get('protocol')}, this one {PROTOCOL} "
                           f"(install the same dcnlab there)")
            conn = str(hello.get("ssh_connection", "")).split()
            if len(conn) >= 3:
                self.connections[s.index] = (conn[0], conn[2])    # (our address there, its address)
            else:
                why.append("its agent does not see SSH_CONNECTION (the tunnels need both addresses)")
            if why:
                problems.append(f"server {s.name}: {'; '.join(why)}")
        if problems:
            raise UserError("dcnlab run --servers needs ssh, root, dcnlab and the toolchain on every server: "
                            + "; ".join(problems))

    def endpoints(self) -> list[Endpoint]:
        own = self.controller.election_id if self.controller is not None else None
        out = []
        for n, sw in self.switches.items():
            grpc = f"unix:{sw.local_socket}" if isinstance(sw, RemoteSwitch) else sw.cfg.grpc_addr
            out.append(Endpoint(n, sw.cfg.device_id, grpc, None, sw.cfg.thrift_port, sw.cfg.netns or "", own))
        return out

    def check_switches(self) -> None:
        for m, side in enumerate(self.sides):
            if m == 0:
                continue
            for name, rc, tail in side.failures():
                self.failures.append(SwitchFailure(name, rc, time.monotonic(), f"(on {self.servers[m].name})\n{tail}"))
        super().check_switches()

    def restart_switch(self, name: str, timeout: float = 20.0, kill: bool = True) -> None:
        if isinstance(self.switches.get(name), RemoteSwitch):
            raise UserError(f"switch {name} runs on {self.placement.machine(name)}; restarts are for local switches")
        super().restart_switch(name, timeout, kill)

    # -- use ---------------------------------------------------------------------
    def reachability(self, port: int = 9999, deadline: float = 10.0, attempts: int = 4,
                     budget_pps: float | None = None) -> Reachability:
        """All-pairs probes, each machine sending and receiving its own hosts' (:mod:`~dcnlab.emu.cluster.probe`)."""
        names = list(self.hosts)
        ips = [self.host_info[n].ip for n in names]
        opened: list[tuple[int, ProbeSideLike]] = []
        try:
            for m, side in enumerate(self.sides):
                mine = [ProbeHost(n, self.host_info[n].ip, self.hosts[n].pid) for n in names
                        if self.placement.machine_of[n] == m]
                if not mine:
                    continue
                side.probe_open(mine, names, ips, port)
                opened.append((m, side.probe if m == 0 else side))
            return probe_cluster([p for _, p in opened], names, deadline=deadline, attempts=attempts,
                                 budget_pps=budget_pps, forwarding_nodes=len(self.switches))
        finally:
            for m, _ in opened:
                try:
                    self.sides[m].probe_close() if m == 0 else self.sides[m].close()
                except Exception as e:  # noqa: BLE001 - the check's result stands; teardown cleans
                    log.warning("closing the probe side on %s: %s", self.servers[m].name, e)

    # -- teardown ----------------------------------------------------------------
    def stop(self) -> None:
        """Tear every machine's part down; every step runs; the first failure is raised at the end. The run
        is marked finished only when every other machine confirmed its part gone."""
        if self._stopped:
            return
        self._stopped = True
        t = time.perf_counter()
        errors: list[BaseException] = []

        def step(fn: Callable[[], object], what: str) -> bool:
            try:
                fn()
                return True
            except Exception as e:  # noqa: BLE001 - logged, teardown goes on, re-raised below
                log.error("teardown: %s failed: %s", what, e)
                errors.append(e)
                return False

        self._stop_monitor.set()
        if self._monitor is not None:
            self._monitor.join(timeout=30)
        if self.controller is not None:
            step(self.controller.close, "controller")
        if self.host_commands is not None:
            step(self.host_commands.stop, "host commands")
        for host in self.hosts.values():
            step(host.terminate, f"host {host.name}")
        confirmed = {0}
        if self.sides:
            def stop_side(m: int) -> bool:
                ok = step(self.sides[m].stop, f"machine {self.servers[m].name}")
                if m in self.clients:
                    step(self.clients[m].close, f"agent on {self.servers[m].name}")
                return ok
            with ThreadPoolExecutor(max_workers=len(self.sides)) as pool:
                done = list(pool.map(stop_side, range(len(self.sides))))
            confirmed |= {m for m, ok in enumerate(done) if ok}
        else:
            for c in self.clients.values():
                step(c.close, f"agent on {c.machine}")
        for pool_ in self.pools.values():
            step(pool_.stop, f"ssh to {pool_.dest}")
        missing = [s for s in self.servers if s.index in self.reached and s.index not in confirmed]
        if self.record is not None and missing:
            # an agent that failed or was lost: clean its machine over a fresh connection
            rec = records.ClusterRecord(**{**self.record.__dict__, "servers": [s.name for s in missing]})
            _, failed = records.clean_remote(rec)
            if failed:
                errors.append(UserError("could not clean " + "; ".join(failed) + " (dcnlab clean retries)"))
            else:
                missing = []
        if self.run is not None:
            step(self.run.remove_sockets, "sockets")
            if self.record is not None:
                step(lambda: records.remove_control_dir(self.run, self.record), "ssh control directory")
            if not missing:
                step(self.run.mark_finished, "run record")
        self.timings.phases["teardown"] = time.perf_counter() - t
        if errors:
            raise errors[0]
