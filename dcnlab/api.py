"""The scripting API: ``dcnlab.Network`` and its hosts, switches and links.

.. code-block:: python

    import dcnlab
    with dcnlab.Network("fattree:k=4") as net:        # or a topology file, program=..., entries=...
        h1, h2 = net.hosts["h0_0_0"], net.hosts["h3_1_1"]
        print(h1.cmd("ping -c 3", h2.ip))
        net.switches["e0_0"].write(+dcnlab.TableEntry("ipv4_host", {"hdr.ipv4.dst": h2.ip}, "forward", {"port": 2}))
        print(net.link_bytes())                          # bytes per link and direction

What each part gives (the layers underneath stay reachable: ``net.emu`` is the
:class:`~dcnlab.emu.network.FabricNetwork`, ``net.controller`` its P4Runtime
:class:`~dcnlab.controller.runtime.controller.Controller`):

* :class:`Host`: ``cmd`` (a shell command in the host, output returned), ``popen`` (a process in the
  host), ``send`` (scapy packets or raw frames out of the host's interface), ``sniff`` and ``pcap``
  (tcpdump in the host; packets come back as scapy objects), ``agent`` (dcnlab's traffic agent,
  with ``agents=True``).
* :class:`Switch`: the P4Runtime entity API (``write(+entry, ~entry, -entry)``, ``read_table``,
  ``read_counter``), and over Thrift ``register_read``/``register_write``, ``set_queue`` and raw
  ``cli`` commands. ``write`` works while dcnlab is primary (not with ``controller=False``).
* :class:`Link`: ``cut`` (two ways, see :mod:`dcnlab.emu.faults`), ``restore``, ``shape`` (rate,
  delay, queue length; tc in the run's namespace), ``pcap`` on either end.
* :meth:`Network.link_bytes`: bytes sent per link and direction, read from the interfaces' own
  counters, so it works with any P4 program.

The four mechanisms are importable from here too: ``dcnlab.aggregation``, ``dcnlab.multicast``,
``dcnlab.congestion``, ``dcnlab.cist`` (the planners) and each one's ``dataplane`` module, which turns
a plan into the updates ``Switch.write`` or ``net.controller.write`` takes; ``examples/`` holds one
short script per mechanism.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from dcnlab.controller.runtime.entities import Counter, Entity, TableEntry, Update
from dcnlab.emu import faults, links, netns
from dcnlab.emu.network import Endpoint, FabricNetwork, intf_name
from dcnlab.emu.options import NetOptions
from dcnlab.emu.reachability import Reachability
from dcnlab.topos.errors import UserError
from dcnlab.topos.files import load_topology, looks_like_file
from dcnlab.topos.model import Fabric
from dcnlab.topos.spec import parse_spec
from dcnlab.traffic.hostctl import AgentHandle, agent_path, stop_child

log = logging.getLogger(__name__)

__all__ = ["Capture", "Host", "Link", "Network", "Switch"]

_OPTION_NAMES = tuple(f.name for f in fields(NetOptions))


def _fabric(topology: str | os.PathLike | Fabric) -> Fabric:
    if isinstance(topology, Fabric):
        return topology
    text = os.fspath(topology)
    return load_topology(text) if isinstance(topology, os.PathLike) or looks_like_file(text) else parse_spec(text)


class Capture:
    """tcpdump writing a pcap (in a host or in the run's namespace) until :meth:`stop`; a context manager.

    ``packets()`` stops the capture and returns the frames as scapy packets."""

    def __init__(self, prefix: Sequence[str], iface: str, path: Path, bpf: str | None, popen=subprocess.Popen) -> None:
        self.path = path
        argv = [*prefix, "tcpdump", "-i", iface, "-U", "-n", "-w", str(path), "--immediate-mode"]
        if bpf:
            argv.append(bpf)
        self.proc = popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # tcpdump says "listening on ..." once its socket is open: wait for it so no early frame is missed.
        line = self.proc.stderr.readline() if self.proc.stderr is not None else b""
        if b"listening on" not in line:
            self.proc.wait(timeout=5)
            raise UserError(f"tcpdump on {iface} did not start: {line.decode(errors='replace').strip()}")

    def stop(self) -> None:
        stop_child(self.proc)
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def packets(self) -> list[Any]:
        from scapy.utils import rdpcap
        self.stop()
        return list(rdpcap(str(self.path))) if self.path.stat().st_size > 24 else []

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@dataclass
class Host:
    """One emulated host (a Mininet host: its own network namespace and shell)."""
    name: str
    ip: str
    mac: str
    iface: str
    _net: Network = field(repr=False, compare=False)

    @property
    def node(self) -> Any:
        """The underlying ``mininet.node.Host``."""
        return self._net.emu.hosts[self.name]

    @property
    def pid(self) -> int:
        return self.node.pid

    def cmd(self, *args: object) -> str:
        """Run a shell command in the host (the words are joined with spaces) and return its output."""
        return self.node.cmd(*[str(a) for a in args])

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen:
        """Start a process in the host's namespace (``subprocess.Popen`` arguments)."""
        return self.node.popen(list(argv), **kwargs)

    def send(self, packets: Any, iface: str | None = None) -> int:
        """Send scapy packets (or raw ``bytes`` frames) out of the host's interface; returns how many."""
        items = packets if isinstance(packets, (list, tuple)) else [packets]
        bad = next((i for i, p in enumerate(items) if not (isinstance(p, (bytes, bytearray)) or hasattr(p, "build"))), None)
        if bad is not None:
            raise UserError(f"send: item {bad} is a {type(items[bad]).__name__}; valid: a scapy packet or bytes "
                            f"(note that 'pkt / b\"x\" * 3' is a list of 3 packets: write 'pkt / (b\"x\" * 3)')")
        hexes = "".join(bytes(p).hex() + "\n" for p in items)
        env = dict(os.environ, PYTHONPATH=agent_path())
        proc = self.popen([sys.executable, "-S", "-m", "dcnlab.traffic.rawsend", iface or self.iface],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        out, err = proc.communicate(hexes.encode(), timeout=60)
        if proc.returncode != 0:
            raise UserError(f"sending from {self.name}: {err.decode(errors='replace').strip()[-300:]}")
        return int(out.split()[-1])

    def pcap(self, path: str | os.PathLike | None = None, bpf: str | None = None, iface: str | None = None) -> Capture:
        """Capture on the host's interface into ``path`` (default: the run directory) until stopped."""
        target = Path(path) if path is not None else self._net.run_dir / f"pcap-{self.name}-{os.getpid()}-" \
            f"{next(self._net._seq)}.pcap"
        return Capture((), iface or self.iface, target, bpf, popen=self.node.popen)

    def sniff(self, timeout: float, bpf: str | None = None) -> list[Any]:
        """Capture for ``timeout`` seconds and return the frames (scapy); see :meth:`pcap` for longer use."""
        import time
        with self.pcap(bpf=bpf) as cap:
            time.sleep(timeout)
            return cap.packets()

    @property
    def agent(self) -> AgentHandle:
        """dcnlab's traffic agent in this host (``Network(..., agents=True)``)."""
        if self.name not in self._net.emu.agents:
            raise UserError("host agents are off; start the network with agents=True")
        return self._net.emu.agents[self.name]


@dataclass
class Switch:
    """One BMv2 switch: P4Runtime through dcnlab's controller, registers and queues over Thrift."""
    name: str
    _net: Network = field(repr=False, compare=False)

    @property
    def endpoint(self) -> Endpoint:
        return next(e for e in self._net.emu.endpoints() if e.switch == self.name)

    @property
    def device_id(self) -> int:
        return self._net.emu.switches[self.name].cfg.device_id

    @property
    def grpc_addr(self) -> str:
        return self._net.emu.switches[self.name].cfg.grpc_addr

    @property
    def p4info(self) -> Any:
        return self._net.controller.pipeline_of(self.name).p4info

    # -- P4Runtime ------------------------------------------------------------------------
    def write(self, *updates: Update | Iterable[Update]) -> None:
        """Write updates in one batch, in order: ``+entry`` inserts, ``~entry`` modifies, ``-entry`` deletes."""
        flat: list[Update] = []
        for u in updates:
            if isinstance(u, Update):
                flat.append(u)
            elif isinstance(u, Entity):
                raise UserError(f"write: {u} is an entity, not an update; write +entity (insert), ~entity "
                                f"(modify) or -entity (delete)")
            else:
                flat.extend(u)
        self._net.controller.write({self.name: flat})

    def insert(self, *entities: Entity) -> None:
        self.write([+e for e in entities])

    def read(self, *entities: Entity) -> list[Any]:
        """Read entities (wildcards as in P4Runtime); returns ``p4.v1.Entity`` messages."""
        return list(self._net.controller.client(self.name).read(self.p4info, entities))

    def read_table(self, table: str) -> list[TableEntry]:
        return self._net.controller.read_table(self.name, table)

    def read_counter(self, counter: str, index: int | None = None) -> list[Counter]:
        return self._net.controller.client(self.name).read_counter(self.p4info, counter, index)

    # -- Thrift ---------------------------------------------------------------------------
    def cli(self, *commands: str) -> list[str]:
        """Run ``simple_switch_CLI`` commands on this switch; returns each command's output."""
        return self._net.controller.thrift(self.name).run(list(commands))

    def register_read(self, register: str, index: int | None = None) -> int | list[int]:
        return self._net.controller.thrift(self.name).register_read(register, index)

    def register_write(self, register: str, index: int, value: int) -> None:
        self._net.controller.thrift(self.name).register_write(register, index, value)

    def set_queue(self, depth: int | None = None, rate_pps: int | None = None,
                  ports: Sequence[int] | None = None) -> None:
        """BMv2 egress queue depth (packets) and rate (packets/s) on ``ports`` (default: every port)."""
        ports = sorted(self._net.emu.switches[self.name].cfg.ports) if ports is None else list(ports)
        self._net.controller.thrift(self.name).set_queues(depth, rate_pps, ports)


@dataclass(frozen=True)
class Link:
    """The link between two nodes; ``ends`` are its interfaces on the switch side."""
    a: str
    a_port: int
    b: str
    b_port: int
    _net: Network = field(repr=False, compare=False)

    def _ends(self) -> list[str]:
        f = self._net.fabric
        return [intf_name(n, p) for n, p in ((self.a, self.a_port), (self.b, self.b_port)) if f.node(n).forwards]

    def cut(self, how: faults.CutMode = "drop") -> None:
        """Cut both directions: ``drop`` (every frame dropped, interfaces up) or ``down``."""
        faults.cut(self._net.emu.netns, self._ends(), how)

    def restore(self) -> None:
        faults.restore(self._net.emu.netns, self._ends())

    def shape(self, bw_mbps: float | None = None, delay: str | None = None, max_queue: int | None = None) -> None:
        """Shape both directions' switch-side ends (rate in Mbit/s, netem delay such as ``"2ms"``, tc
        queue limit in packets); no argument removes the shaping."""
        NetOptions(bw_mbps=bw_mbps, delay=delay, max_queue=max_queue).validate()
        sh = links.Shaping(bw_mbps, delay, max_queue)
        sh.check_kernel()
        ns = self._net.emu.netns
        faults.restore(ns, self._ends())
        if sh.active:
            links.shape(ns, [line for dev in self._ends() for line in sh.tc_lines(dev)])

    def pcap(self, node: str | None = None, path: str | os.PathLike | None = None, bpf: str | None = None) -> Capture:
        """Capture on the switch-side end at ``node`` (default: the first switch end of the link)."""
        ends = {n: intf_name(n, p) for n, p in ((self.a, self.a_port), (self.b, self.b_port))
                if self._net.fabric.node(n).forwards}
        if node is not None and node not in ends:
            raise UserError(f"pcap: {node!r} is not a switch end of {self.a}--{self.b}; valid: {', '.join(ends)}")
        dev = ends[node] if node is not None else next(iter(ends.values()))
        target = Path(path) if path is not None else self._net.run_dir / f"pcap-{dev}-{next(self._net._seq)}.pcap"
        return Capture(netns.exec_prefix(self._net.emu.netns), dev, target, bpf)


def _counter() -> Iterator[int]:
    i = 0
    while True:
        i += 1
        yield i


class Network:
    """An emulated fabric for scripts: ``with dcnlab.Network(topology, ...) as net:``.

    ``topology``: a fabric spec (``"fattree:k=4"``), a topology file (dcnlab JSON, the tutorials'
    ``topology.json``, p4-utils' ``p4app.json``) or a :class:`~dcnlab.topos.model.Fabric`.
    ``program``: your v1model P4 source for every switch (then dcnlab installs no routes).
    ``entries``: ``{switch: [file, ...]}`` of runtime JSON or ``simple_switch_CLI`` command files.
    ``controller=False``: dcnlab pushes the pipelines (and the entry files) and steps down, so your own
    controller becomes primary. ``grpc_tcp=50051``: also serve P4Runtime on loopback ports.
    ``view=True`` (or a port): a live view in the browser (:mod:`dcnlab.view`); ``net.view.url`` is its URL.
    Any other keyword is a :class:`~dcnlab.emu.options.NetOptions` field (``bw_mbps``, ``delay``,
    ``queue_rate_pps``, ``agents``, ``log_level``, ``pcap``, ``watch``, ...).
    Needs root and the P4 toolchain; everything it starts, it stops (also on errors and Ctrl-C).
    """

    def __init__(self, topology: str | os.PathLike | Fabric, *, program: str | os.PathLike | None = None,
                 entries: Mapping[str, str | os.PathLike | Sequence[str | os.PathLike]] | None = None,
                 controller: bool = True, grpc_tcp: int | None = None, agents: bool = False,
                 view: bool | int = False, **options: Any) -> None:
        unknown = sorted(set(options) - set(_OPTION_NAMES))
        if unknown:
            raise UserError(f"Network: unknown option(s) {', '.join(unknown)}; valid: program, entries, "
                            f"controller, grpc_tcp, agents, view, {', '.join(n for n in _OPTION_NAMES if n not in ('controller', 'grpc_tcp', 'agents'))}")
        self.fabric = _fabric(topology)
        prog = Path(program).absolute() if program is not None else None
        if prog is not None and (prog.suffix != ".p4" or not prog.is_file()):
            raise UserError(f"Network: program={os.fspath(program)!r} is not a P4 source file; valid: an existing FILE.p4")
        files = {sw: [Path(x) for x in ([v] if isinstance(v, (str, os.PathLike)) else v)]
                 for sw, v in (entries or {}).items()}
        opts = NetOptions(controller=controller, grpc_tcp=grpc_tcp, agents=agents, **options)
        self.emu = FabricNetwork(self.fabric, opts, program=prog, entries=files)
        self._seq = _counter()
        self._started = False
        if not (isinstance(view, bool) or (isinstance(view, int) and 1024 <= view <= 65535)):
            raise UserError(f"Network: view={view!r:.20}; valid: True (a free port), False, or a port 1024..65535")
        self._view_port = None if view is False else 0 if view is True else int(view)
        self.view: Any = None      # a dcnlab.view.ViewServer once started with view

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> Network:
        self.emu.start()
        self._started = True
        if self._view_port is not None:     # dcnlab.view: the URL (127.0.0.1, with its token) is printed once
            from dcnlab.view import for_network
            self.view = for_network(self.emu, self._view_port)
        return self

    def stop(self) -> None:
        if self.view is not None:
            self.view.close()
        self.emu.stop()

    def __enter__(self) -> Network:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- parts ----------------------------------------------------------------------------
    def _up(self) -> FabricNetwork:
        if not self._started:
            raise UserError("the network is not up; use it inside 'with dcnlab.Network(...) as net:' or call start()")
        return self.emu

    @property
    def controller(self) -> Any:
        return self._up().controller

    @property
    def run_dir(self) -> Path:
        assert self._up().run is not None
        return self.emu.run.path

    @property
    def hosts(self) -> dict[str, Host]:
        emu = self._up()
        return {n: Host(n, a.ip, a.mac, a.iface, self) for n, a in emu.addrs.items()}

    @property
    def switches(self) -> dict[str, Switch]:
        return {n: Switch(n, self) for n in self._up().switches}

    @property
    def links(self) -> list[Link]:
        return [Link(l.a, l.a_port, l.b, l.b_port, self) for l in self.fabric.links()]

    def link(self, a: str, b: str) -> Link:
        """The link between nodes ``a`` and ``b`` (the first, if there are parallel links)."""
        for l in self.links:
            if {l.a, l.b} == {a, b}:
                return l if l.a == a else Link(l.b, l.b_port, l.a, l.a_port, self)
        raise UserError(f"no link between {a!r} and {b!r} in {self.fabric.spec}")

    def endpoints(self) -> list[Endpoint]:
        return self._up().endpoints()

    def reachability(self, **kwargs: Any) -> Reachability:
        """All-pairs UDP probes between the hosts (see :meth:`FabricNetwork.reachability`)."""
        return self._up().reachability(**kwargs)

    def link_bytes(self) -> dict[tuple[str, str], int]:
        """Bytes sent so far on every link, per direction: ``{(a, b): bytes from a to b}``.

        Read from the switch-side interfaces' counters in the run's namespace (a switch's TX is what
        it forwarded onto the link; on a host link the switch end's RX is what the host sent)."""
        return self._link_counters("bytes")

    def link_packets(self) -> dict[tuple[str, str], int]:
        """Frames sent so far on every link, per direction (as :meth:`link_bytes`)."""
        return self._link_counters("packets")

    def _link_counters(self, what: str) -> dict[tuple[str, str], int]:
        from dcnlab.emu.counters import interface_stats, link_counters
        return link_counters(self.fabric, interface_stats(self._up().netns), what)

    def ptf(self, switch: str, tests: str | os.PathLike, ports: Sequence[int] | None = None,
            keep_pipeline: bool = False, test_params: str | None = None, ptf_args: Sequence[str] = ()) -> int:
        """Run the PTF tests in ``tests`` against ``switch`` with the fabric's entries; return PTF's exit status.
        Its host-facing ports (or ``ports``) go to PTF for the run; afterwards they are back on their links and
        dcnlab's pipeline and entries are back on the switch (:func:`dcnlab.emu.ptf.ptf_in_fabric`)."""
        from dcnlab.emu.ptf import ptf_in_fabric
        return ptf_in_fabric(self._up(), switch, tests, ports, keep_pipeline, test_params, ptf_args)

    def cli(self) -> None:
        """Mininet's interactive CLI on the hosts."""
        from mininet.cli import CLI
        CLI(self._up().mn)

    def __repr__(self) -> str:
        state = "up" if self._started and not self.emu._stopped else "down"
        return f"<dcnlab.Network {self.fabric.spec} {state}>"

    def _repr_html_(self) -> str:
        """In Jupyter, a network that is up shows its live view inline (:mod:`dcnlab.view.notebook`): the view
        started with ``view=``, else one started now on a free port, both stopped with the network."""
        import html

        if not self._started or self.emu._stopped:
            return f"<pre>{html.escape(repr(self))}</pre>"
        from dcnlab.view import for_network
        from dcnlab.view.notebook import embeddable, iframe
        if self.view is None:
            self.view = for_network(self.emu, None, say=log.info)
        return iframe(embeddable(self.view).url)
