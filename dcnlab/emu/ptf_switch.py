"""A P4Runtime session for PTF tests, and a BMv2 switch driven from pytest through PTF's own dataplane.

:class:`SwitchSession`: a primary P4Runtime session on one switch with its pipeline (dcnlab's
:class:`~dcnlab.controller.runtime.client.SwitchClient`), entities written as in ``dcnlab.Network``
(``write(+TableEntry(...), +MulticastGroup(...))``). In a PTF test, :meth:`SwitchSession.from_test_params`
opens it from the test parameters dcnlab passes (``grpcaddr``, ``device_id``, ``p4info``, ``config``) and
pushes the pipeline unless ``keep_pipeline`` is set (a switch of a running fabric keeps its program and
entries); ``examples/ptf-router/ptf`` has tests written that way.

:class:`PtfSwitch`: what the ``ptf_switch`` fixture of :mod:`dcnlab.testing` yields. A
:class:`~dcnlab.emu.ptf.PtfBench` (one BMv2 in a namespace of its own, N veth pairs), PTF's
:class:`ptf.dataplane.DataPlane` on the PTF ends (its packet sockets are opened inside the namespace by a
thread that enters it, so the test process itself stays in the machine's namespace), and a connected
:class:`SwitchSession` (the P4Runtime socket is a Unix socket: reachable from any namespace). ``send``,
``expect``, ``expect_any`` and ``expect_nothing`` are PTF's ``send_packet``, ``verify_packets``,
``verify_packets_any`` and ``verify_no_other_packets``, with this object as PTF's test.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dcnlab.controller.runtime.client import SwitchClient
from dcnlab.controller.runtime.entities import TableEntry, Update
from dcnlab.controller.runtime.pipeline import Pipeline
from dcnlab.emu.ptf import PtfBench


class SwitchSession:
    """A primary P4Runtime session on ``grpc_addr`` (device ``device_id``) with the pipeline of ``p4info`` and
    ``config`` (files), pushed unless ``push`` is false."""

    def __init__(self, grpc_addr: str, device_id: int, p4info: str | Path, config: str | Path, push: bool = True,
                 name: str = "s1", election_id: tuple[int, int] = (0, 1)) -> None:
        self.pipeline = Pipeline.from_files(p4info, config, name)
        self.client = SwitchClient(name, device_id, grpc_addr, election_id)
        if push:
            self.client.set_pipeline(self.pipeline.p4info, self.pipeline.device_config)

    @classmethod
    def from_test_params(cls) -> SwitchSession:
        """From PTF's test parameters (inside a PTF test)."""
        import ptf.testutils as tu

        addr = tu.test_param_get("grpcaddr")
        if addr is None:
            raise RuntimeError("no grpcaddr test parameter: run the tests with dcnlab ptf (or give -t grpcaddr=...)")
        return cls(addr, int(tu.test_param_get("device_id", 0)), tu.test_param_get("p4info"),
                   tu.test_param_get("config"), push=not tu.test_param_get("keep_pipeline", False))

    def write(self, *updates: Update | Iterable[Update]) -> None:
        """``write(+entry, ~entry, -entry, ...)``, in one batch (lists of updates are flattened)."""
        flat: list[Update] = []
        for u in updates:
            flat.extend([u] if isinstance(u, Update) else u)
        self.client.write(self.pipeline.p4info, flat)

    def read_table(self, table: str) -> list[TableEntry]:
        return self.client.read_table(self.pipeline.p4info, table)

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> SwitchSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _in_namespace(ns: str, fn: Any) -> None:
    """Run ``fn`` in a thread that has entered network namespace ``ns`` (sockets it opens stay bound there)."""
    from dcnlab.controller.runtime.netns import enter

    errors: list[BaseException] = []

    def body() -> None:
        try:
            enter(ns)()
            fn()
        except BaseException as e:   # noqa: BLE001 - handed to the caller's thread
            errors.append(e)

    t = threading.Thread(target=body, name=f"ptf-ports-{ns}")
    t.start()
    t.join()
    if errors:
        raise errors[0]


class PtfSwitch:
    """One BMv2 running ``program`` with ``ports`` ports, PTF's dataplane on them, a P4Runtime session
    (:attr:`p4rt`). ``timeout`` and ``negative_timeout``: PTF's ``--default-timeout`` and
    ``--default-negative-timeout`` (how long to wait for an expected packet; for no packet)."""

    def __init__(self, program: str | Path, ports: int = 8, timeout: float = 2.0, negative_timeout: float = 0.1,
                 log_level: str = "off") -> None:
        self.program = Path(program)
        self.ports = ports
        self.timeout, self.negative_timeout = timeout, negative_timeout
        self.log_level = log_level
        self.bench: PtfBench | None = None
        self.dataplane: Any = None
        self.p4rt: SwitchSession | None = None
        self._saved: tuple[dict, Any, Any] | None = None

    def start(self) -> PtfSwitch:
        from dcnlab.emu.ptf import check_ports, ptf_script
        from dcnlab.p4src.compiler import compile_program

        ptf_script()
        check_ports(self.ports, "ports")
        built = compile_program(self.program.stem, src_dir=self.program.parent)
        self.bench = PtfBench(built.p4info, built.json, self.ports, name=f"ptf-{self.program.stem}",
                              log_level=self.log_level)
        try:
            self.bench.start()
            self._open_dataplane()
            self.p4rt = SwitchSession(self.bench.grpc_addr, 0, built.p4info, built.json)
        except BaseException:
            self.stop()
            raise
        return self

    def _open_dataplane(self) -> None:
        import ptf
        import ptf.dataplane
        import ptf.ptfutils

        assert self.bench is not None and self.bench.netns is not None
        pm = {(0, p): ifname for p, ifname in self.bench.port_map.items()}
        self._saved = (dict(ptf.config), ptf.ptfutils.default_timeout, ptf.ptfutils.default_negative_timeout)
        ptf.config.update({"platform": "eth", "qlen": 100, "relax": False, "port_map": pm})
        ptf.ptfutils.default_timeout, ptf.ptfutils.default_negative_timeout = self.timeout, self.negative_timeout
        dp = ptf.dataplane.DataPlane(ptf.config)
        self.dataplane = dp
        _in_namespace(self.bench.netns, lambda: [dp.port_add(ifname, d, p) for (d, p), ifname in pm.items()])

    # -- what PTF's testutils need of a test ---------------------------------------------------------------------
    def fail(self, msg: str) -> None:
        raise AssertionError(msg)

    def assertTrue(self, cond: object, msg: str = "") -> None:    # unittest's name: testutils calls it
        if not cond:
            raise AssertionError(msg)

    def before_send(self, pkt: bytes, device_number: int = 0, port_number: int = -1) -> None:
        pass

    def at_receive(self, pkt: bytes, device_number: int = 0, port_number: int = -1) -> None:
        pass

    # -- the test's side ------------------------------------------------------------------------------------------
    def send(self, port: int, pkt: Any, count: int = 1) -> int:
        """Send ``pkt`` (scapy packet or bytes) into the switch's ``port``."""
        import ptf.testutils as tu
        return tu.send_packet(self, port, pkt, count)

    def expect(self, pkt: Any, ports: Sequence[int], timeout: float | None = None) -> None:
        """``pkt`` (scapy packet or ``ptf.mask.Mask``) comes out of each of ``ports``, nowhere else, and
        nothing else comes out (PTF's ``verify_packets``)."""
        import ptf.testutils as tu
        tu.verify_packets(self, pkt, list(ports), timeout=timeout)

    def expect_any(self, pkt: Any, ports: Sequence[int], timeout: float | None = None) -> None:
        """``pkt`` comes out of one of ``ports`` (an ECMP group), and nothing else (``verify_packets_any``)."""
        import ptf.testutils as tu
        tu.verify_packets_any(self, pkt, list(ports), timeout=timeout)

    def expect_nothing(self, timeout: float | None = None) -> None:
        """No packet comes out of any port (``verify_no_other_packets``)."""
        import ptf.testutils as tu
        tu.verify_no_other_packets(self, timeout=timeout)

    def write(self, *updates: Update | Iterable[Update]) -> None:
        assert self.p4rt is not None
        self.p4rt.write(*updates)

    def stop(self) -> None:
        """Close the session and the dataplane, restore PTF's globals, tear the switch down."""
        try:
            if self.p4rt is not None:
                self.p4rt.close()
            if self.dataplane is not None:
                self.dataplane.kill()
            if self._saved is not None:
                import ptf
                import ptf.ptfutils
                ptf.config.clear()
                ptf.config.update(self._saved[0])
                ptf.ptfutils.default_timeout, ptf.ptfutils.default_negative_timeout = self._saved[1:]
        finally:
            self.p4rt, self.dataplane, self._saved = None, None, None
            if self.bench is not None:
                self.bench.stop()

    def __enter__(self) -> PtfSwitch:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
