"""PTF, p4lang's Packet Test Framework, against a BMv2 switch of dcnlab: alone, or one switch of a running fabric.

**Alone** (:class:`PtfBench`, ``dcnlab ptf``, the ``ptf_switch`` fixture of :mod:`dcnlab.testing`): a run
directory and network namespace of its own (as ``dcnlab run`` makes them, so ``dcnlab clean`` knows them);
in the namespace N veth pairs ``swI``/``ptfI`` (MTU 9500, offloads off, IPv6 off) and one
``simple_switch_grpc`` (device id 0, ``--no-p4``) with ``-i I@swI``. Its P4Runtime server listens on a Unix
socket in the run directory, root's alone; nothing listens on TCP but BMv2's Thrift server, inside the
namespace. PTF runs inside the same namespace with ``-i I@ptfI``: a test that ignores ``grpcaddr`` and
dials ``localhost:9559`` reaches nothing there (no other switch of the machine), and two runs never share
a port or an interface name.

**In a fabric** (:func:`ptf_in_fabric`, ``dcnlab lab DIR --ptf SWITCH``, ``Network.ptf``): the switch's
chosen ports (default: those that face hosts) are detached from their links for the run and replaced by
veth pairs whose other ends PTF drives, over BMv2's own ``port_remove``/``port_add`` (Thrift); dcnlab steps
down on that switch so that the test's client becomes primary with any election id. Afterwards the
original ports are attached again, the pairs deleted, and dcnlab takes the switch back; unless the test kept
the pipeline (``keep_pipeline``), dcnlab pushes its pipeline and every entry it wrote over P4Runtime again
(entries written with ``simple_switch_CLI`` command files are not written again).

PTF itself runs as :mod:`dcnlab.emu.ptf_launch` (the ``p4.*`` modules that p4lang's tests import), with
dcnlab's Python, in its own session (Ctrl-C reaches dcnlab, which stops it by its pid), with the test
parameters ``grpcaddr``, ``device_id``, ``p4info``, ``config`` (and ``keep_pipeline``) before the user's,
``--test-case-timeout`` (PTF's own per-test limit) unless the user gives one, and its log in the run
directory. Its exit status is the command's.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dcnlab.emu import bmv2, links, netns, offloads
from dcnlab.emu.rundir import RunDir
from dcnlab.topos.errors import UserError

if TYPE_CHECKING:
    from dcnlab.emu.network import FabricNetwork
    from dcnlab.topos.model import Fabric

log = logging.getLogger(__name__)

INSTALL = "pip install 'dcnlab[ptf]'"
DEFAULT_PORTS = 8
"""What the p4lang tutorials' PTF tests use (``runptf.sh``: ports 0-7)."""
MAX_PORTS = 511
"""BMv2 binds at most 512 interfaces (``--max-port-count``), and v1model's port 511 is the drop port."""
DEFAULT_TEST_CASE_TIMEOUT = 300.0
"""PTF's ``--test-case-timeout`` when the user gives none: a hang guard per test, far above what a data-plane
test takes (the tutorials' take well under a second each)."""
MTU = 9500
"""As the tutorials' ``veth_setup.sh``: jumbo frames can be tested."""


def ptf_script() -> Path:
    """The ``ptf`` script of dcnlab's environment; one line saying how to get it when PTF is missing."""
    found = importlib.util.find_spec("ptf") is not None
    script = Path(sys.executable).parent / "ptf"
    if not script.is_file():
        script = Path(shutil.which("ptf") or script)
    if not found or not script.is_file():
        raise UserError(f"PTF is not installed for dcnlab's Python ({sys.executable}); install it with: {INSTALL}")
    return script


def _installed_script() -> Path | None:
    try:
        return ptf_script()
    except UserError:
        return None


def check_ports(n: object, what: str = "--ports") -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_PORTS:
        raise UserError(f"{what} {n!r} is out of range; valid: 1 to {MAX_PORTS} (BMv2 binds at most 512 "
                        f"interfaces and port 511 is v1model's drop port)")
    return n


def check_tests(tests: str | os.PathLike) -> Path:
    """A directory of PTF tests: it exists and holds at least one ``*.py`` file."""
    from dcnlab.topos.inputs import file_problem, quote

    p = Path(tests).expanduser().absolute()
    if not p.is_dir():
        why = file_problem(p) if not p.exists() else "is not a directory"
        raise UserError(f"--tests {quote(str(tests), 200)} {why}; valid: a directory of PTF tests (*.py)")
    if not any(x.is_file() for x in p.glob("*.py")):
        raise UserError(f"--tests {quote(str(tests), 200)} holds no PTF tests (no *.py file); valid: a directory "
                        f"of PTF tests, e.g. an exercise's ptf/")
    return p


def check_passthrough(args: Sequence[str], what: str = "the words for PTF",
                      instead: str = "--ports, --tests, --test-params") -> list[str]:
    """PTF options and test names given after ``--`` (``what``: where they were given), read as PTF's own
    parser reads them (:mod:`dcnlab.emu.ptf_options`): an option dcnlab sets itself, however abbreviated or
    attached, is refused (``instead``: dcnlab's options for the same), and so are words PTF would refuse."""
    from dcnlab.emu.ptf_options import PtfOptionError, given

    try:
        given(args, _installed_script())
    except PtfOptionError as e:
        if e.own is not None:
            raise UserError(f"{e} (ports, test directory, platform, test parameters); use {instead} "
                            f"instead") from None
        why = str(e) if len(str(e)) <= 300 else str(e)[:300] + "..."
        raise UserError(f"{what}: PTF would refuse them: {why}; valid: PTF's own options (ptf --help) and "
                        f"test names") from None
    return list(args)


def check_test_params(text: str | None, what: str = "--test-params") -> str | None:
    """The user's PTF test parameters: PTF reads ``k=v;k=v`` as a class body (``class _TestParams:`` followed by
    the text), so the text must compile as one; it is compiled here, not run."""
    if text is None:
        return None
    try:
        compile("class _TestParams:\n    " + text, what, "exec")
    except (SyntaxError, ValueError):
        raise UserError(f"argument {what}: {text[:200]!r} is not PTF's test parameters; valid: k=v pairs joined "
                        f"by ';' with Python values, e.g. \"mode='x';count=3\"") from None
    return text


def test_params(own: dict[str, object], user: str | None) -> str:
    """PTF's ``--test-params`` (``k=v;k=v``, read as a class body): dcnlab's first, the user's after them
    (a later assignment wins, so the user may override one)."""
    s = ";".join(f"{k}={(str(v) if isinstance(v, Path) else v)!r}" for k, v in own.items())
    return f"{s};{user}" if user else s


def ptf_argv(script: Path, tests: Path, ports: dict[int, str], params: str, extra: Sequence[str],
             log_dir: Path) -> list[str]:
    """The PTF command (without the namespace prefix)."""
    from dcnlab.emu.ptf_options import given

    argv = [sys.executable, "-m", "dcnlab.emu.ptf_launch", str(script), "--test-dir", str(tests)]
    for p, ifname in sorted(ports.items()):
        argv += ["-i", f"{p}@{ifname}"]
    argv += ["--test-params", params]
    names = given(extra, _installed_script())       # as PTF reads them: --log-f is --log-file
    if not names & {"--log-file", "--log-dir"}:
        argv += ["--log-file", str(log_dir / "ptf.log")]
    if "--test-case-timeout" not in names:
        argv += ["--test-case-timeout", f"{DEFAULT_TEST_CASE_TIMEOUT:g}"]
    return [*argv, *extra]


def run_ptf(argv: Sequence[str], run: RunDir, ns: str, cwd: Path, grace: float = 3.0) -> int:
    """Run PTF inside namespace ``ns`` with ``cwd`` as working directory, its output on ours; return its exit
    status (128 + signal if a signal ended it). On KeyboardInterrupt (Ctrl-C, or SIGTERM turned into one)
    PTF is stopped by its pid, SIGTERM then SIGKILL, and the interrupt goes on."""
    proc = subprocess.Popen([*netns.exec_prefix(ns), *argv], cwd=cwd, env={**os.environ, **run.tag},
                            stdin=subprocess.DEVNULL, start_new_session=True)
    run.record_process("ptf", proc.pid, os.path.basename(sys.executable))
    try:
        rc = proc.wait()
    except BaseException:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(proc.pid, sig)
                proc.wait(timeout=grace)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        raise
    return 128 - rc if rc < 0 else rc


def _steps(*fns: Callable[[], object]) -> None:
    """Run every step even when one fails; raise the first failure at the end (a teardown)."""
    first: BaseException | None = None
    for fn in fns:
        try:
            fn()
        except Exception as e:   # noqa: BLE001 - logged, the teardown goes on, re-raised below
            log.error("teardown step failed: %s", e)
            first = first or e
    if first is not None:
        raise first


def _ip_batch(ns: str) -> list[str]:
    """``ip -batch -`` inside namespace ``ns`` (entered with nsenter, as every dcnlab child)."""
    return [*netns.exec_prefix(ns), netns.system_tool("ip"), "-batch", "-"]


def _set_mtu(ns: str, devs: Sequence[str]) -> None:
    r = subprocess.run(_ip_batch(ns), input="".join(f"link set dev {d} mtu {MTU}\n"
                                                                          for d in devs),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise links.LinkSetupError(f"ip link set mtu in {ns} failed: {r.stderr.strip()[-400:]}")


@dataclass
class PtfBench:
    """One BMv2 with ``ports`` ports wired to veth pairs in a namespace of its own, for PTF (module docstring).
    ``program``: the compiled program's BMv2 JSON and P4Info (files), given to the tests as ``config`` and
    ``p4info``; the switch starts without one (``--no-p4``), as the tests push it."""

    p4info: Path
    config: Path
    ports: int = DEFAULT_PORTS
    name: str = "ptf"
    log_level: str = "off"
    start_timeout: float = 30.0
    run: RunDir | None = None
    netns: str | None = None
    switch: bmv2.BMv2Process | None = None
    _stopped: bool = field(default=False, repr=False)

    @property
    def port_map(self) -> dict[int, str]:
        """PTF's side: port number -> interface (in :attr:`netns`)."""
        return {i: f"ptf{i}" for i in range(self.ports)}

    @property
    def grpc_addr(self) -> str:
        assert self.switch is not None
        return self.switch.cfg.grpc_addr

    def params(self) -> dict[str, object]:
        return {"grpcaddr": self.grpc_addr, "device_id": 0, "p4info": self.p4info, "config": self.config}

    def start(self) -> PtfBench:
        check_ports(self.ports)
        if os.geteuid() != 0:
            raise UserError("PTF runs need root (a network namespace, veths, BMv2 on raw interfaces); run dcnlab "
                            "as root, e.g. with sudo")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.run = RunDir.create(self.name)
        self.netns = f"dcnlab-{self.run.id}"
        self.run.record_netns(self.netns)          # recorded before it exists: dcnlab clean finds it
        netns.create(self.netns)
        pairs = [links.VethPair(f"sw{i}", f"ptf{i}") for i in range(self.ports)]
        devs = [d for p in pairs for d in (p.a, p.b)]
        links.create(self.netns, pairs)
        _set_mtu(self.netns, devs)
        offloads.disable(self.netns, devs)
        cfg = bmv2.BMv2Config("s1", 0, {i: f"sw{i}" for i in range(self.ports)}, 9090, self.run.path, self.netns,
                              self.run.sockets, self.log_level, env=self.run.tag)
        self.switch = bmv2.BMv2Process(cfg)
        self.switch.start()
        assert self.switch.pid is not None
        self.run.record_process("switch:s1", self.switch.pid, "simple_switch_grpc")
        bmv2.wait_ready([self.switch], self.start_timeout)

    def run_tests(self, tests: Path, user_params: str | None = None, extra: Sequence[str] = (),
                  cwd: Path | None = None) -> int:
        assert self.run is not None and self.netns is not None
        argv = ptf_argv(ptf_script(), tests, self.port_map, test_params(self.params(), user_params), extra,
                        self.run.path)
        return run_ptf(argv, self.run, self.netns, cwd or tests.parent)

    def stop(self) -> None:
        """Stop the switch and any process left in the namespace, delete the namespace (and with it every veth),
        the socket, and mark the run finished. Only what this bench created."""
        if self._stopped:
            return
        self._stopped = True
        run, ns, sw = self.run, self.netns, self.switch

        def leftovers() -> None:         # e.g. a PTF process that survived its SIGKILL'd parent
            from dcnlab.emu.cleanup import stop_processes
            if ns is not None:
                stop_processes(set(netns.pids(ns)) - {os.getpid()})

        _steps(lambda: bmv2.stop_all([sw]) if sw is not None else None, leftovers,
               lambda: netns.delete(ns) if ns is not None else None,
               lambda: run.remove_sockets() if run is not None else None,
               lambda: run.mark_finished() if run is not None else None)

    def __enter__(self) -> PtfBench:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# -- one switch of a running fabric ------------------------------------------------------------------------------
def fabric_ports(net: FabricNetwork, switch: str, ports: Sequence[int] | None) -> list[int]:
    """The ports PTF takes over: ``ports``, else every port of ``switch`` that faces a host."""
    if switch not in net.switches:
        names = list(net.switches)
        raise UserError(f"--ptf {switch!r}: no such switch; valid: {', '.join(names[:20])}"
                        + (f" and {len(names) - 20} more" if len(names) > 20 else ""))
    return choose_ports(net.fabric, switch, ports)


def choose_ports(fabric: Fabric, switch: str, ports: Sequence[int] | None) -> list[int]:
    """:func:`fabric_ports` from the topology alone (a switch's wired ports are those with a peer, as the
    emulation wires them): checked before the lab comes up."""
    f = fabric
    wired = [p for p in range(f.node(switch).ports) if f.peer(switch, p) is not None]
    if ports is None:
        chosen = [p for p in wired if (peer := f.peer(switch, p)) is not None and not f.node(peer[0]).forwards]
        if not chosen:
            raise UserError(f"--ptf {switch}: no port of {switch} faces a host; choose ports with --ptf-ports "
                            f"(wired: {', '.join(map(str, wired))})")
        return chosen
    bad = [p for p in ports if p not in wired]
    if bad or not ports:
        raise UserError(f"--ptf-ports {','.join(map(str, ports))}: {switch} has no port {bad[0] if bad else '(none)'}"
                        f"; valid: {', '.join(map(str, wired))}")
    return sorted(set(ports))


def _pipeline_files(net: FabricNetwork, switch: str, out: Path) -> tuple[Path, Path]:
    """The pipeline ``switch`` runs, as files for the tests' ``p4info`` and ``config``."""
    from google.protobuf import text_format

    assert net.controller is not None
    pipe = net.controller.pipeline_of(switch)
    p4info, config = out / f"ptf-{switch}.p4info.txtpb", out / f"ptf-{switch}.json"
    p4info.write_text(text_format.MessageToString(pipe.p4info.msg))
    config.write_bytes(pipe.device_config)
    return p4info, config


def ptf_in_fabric(net: FabricNetwork, switch: str, tests: str | os.PathLike, ports: Sequence[int] | None = None,
                  keep_pipeline: bool = False, user_params: str | None = None, extra: Sequence[str] = (),
                  cwd: Path | None = None, say: Callable[[str], None] | None = None) -> int:
    """Run the PTF tests in ``tests`` against ``switch`` of the running ``net`` (module docstring); return PTF's
    exit status. ``keep_pipeline``: the test parameter ``keep_pipeline=True``, which tells a test not to push
    a pipeline (the switch keeps the fabric's program and entries)."""
    script = ptf_script()
    tests = check_tests(tests)
    extra = check_passthrough(extra)
    chosen = fabric_ports(net, switch, ports)
    assert net.run is not None and net.netns is not None and net.controller is not None
    sw = net.switches[switch]
    dev = sw.cfg.device_id
    ours = {p: (f"pts{dev}-{p}", f"ptp{dev}-{p}") for p in chosen}
    p4info, config = _pipeline_files(net, switch, net.run.path)
    params: dict[str, object] = {"grpcaddr": sw.cfg.grpc_addr, "device_id": dev, "p4info": p4info, "config": config}
    if keep_pipeline:
        params["keep_pipeline"] = True
    argv = ptf_argv(script, tests, {p: b for p, (_, b) in ours.items()}, test_params(params, user_params), extra,
                    net.run.path)
    ctl, ns = net.controller, net.netns
    was_ours = switch not in ctl.handed_over()
    thrift = ctl.thrift(switch)
    links.create(ns, [links.VethPair(a, b) for a, b in ours.values()])
    try:
        _set_mtu(ns, [d for pair in ours.values() for d in pair])
        offloads.disable(ns, [d for pair in ours.values() for d in pair])
        thrift.run([c for p, (a, _) in ours.items() for c in (f"port_remove {p}", f"port_add {a} {p}")])
        if was_ours:
            ctl.step_down([switch])
        if say:
            say(f"PTF on {switch} (device {dev}), ports {', '.join(map(str, chosen))}")
        return run_ptf(argv, net.run, ns, cwd or tests.parent)
    finally:
        def restore() -> None:
            if was_ours:                 # take the switch back as primary
                ctl.connect([switch])
                if not keep_pipeline:    # the test pushed a pipeline: dcnlab's pipeline and entries again
                    ctl.reconnect(switch)
        _steps(lambda: thrift.run([c for p in ours for c in (f"port_remove {p}", f"port_add {sw.cfg.ports[p]} {p}")]),
               lambda: subprocess.run(_ip_batch(ns), check=True, capture_output=True,
                                      input="".join(f"link del dev {a}\n" for a, _ in ours.values()), text=True),
               restore)
