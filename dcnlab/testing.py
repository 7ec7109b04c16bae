"""pytest fixtures for unit-testing a P4Runtime controller without BMv2.

dcnlab's in-process fake P4Runtime server (:class:`~dcnlab.controller.runtime.fake_server.FakeP4RuntimeServer`)
speaks real gRPC on ``127.0.0.1`` and behaves like one BMv2 switch where a controller can tell:
arbitration as BMv2's P4Runtime server does it (the highest election id is primary, the others
are told they are backups; Write and SetForwardingPipelineConfig only from the primary), the
pipeline (P4Info, device config, cookie), table, multicast, clone-session, counter and meter
entries, and Reads. It checks every write as BMv2's P4Runtime server (PI) does, against the pushed
P4Info and what is installed: unknown ids, missing or extra action parameters, values wider than
their field, LPM prefixes, ternary masks, ranges, priorities, actions a table does not allow,
default entries, full tables, duplicate or missing entries and groups; a refused update gets PI's
code and message in per-update ``p4.v1.Error`` details (the call ends with UNKNOWN), so a controller
whose writes pass here does not fail on BMv2 for a reason PI reports. Reads come back in PI's form
(values without leading zero bytes, "don't care" fields left out). A test can also set counter cells. Any client works against it: finsy, p4runtime-shell, the tutorials' ``p4runtime_lib``,
dcnlab's own :class:`~dcnlab.controller.runtime.client.SwitchClient`. It does not parse the
device config, so a test needs only the program's P4Info (``p4c --p4runtime-files``) and any
bytes for the BMv2 JSON.

Fixtures
--------
``p4runtime_server``
    A started server, stopped after the test. Point the controller at ``p4runtime_server.addr``
    (``"127.0.0.1:PORT"``), with any device id. Then assert on what it received and holds:
    ``arbitrations`` (election ids as ``(high, low)``, in order), ``primary_election_id``,
    ``pipeline_pushes`` and ``pipeline_requests``, ``state.p4info`` / ``state.device_config`` /
    ``state.cookie``, ``write_requests`` and ``updates`` (``p4.v1`` messages as sent),
    ``table_entries("RIngress.routes")`` and ``entities("packet_replication_engine_entry")`` (what
    is installed now). ``set_counter(counter_id, index, packets, bytes)`` sets a cell the
    controller then reads; ``restart()`` simulates a switch restart (state and streams dropped).
``p4runtime_servers``
    A factory for several switches: ``s1, s2, s3 = p4runtime_servers(3)``; all are stopped after
    the test. ``p4runtime_servers(3, first_device_id=0)`` gives them device ids 0, 1, 2 (as dcnlab
    numbers BMv2 switches) and refuses requests for any other device id with NOT_FOUND, which
    catches a controller that addresses the wrong device (finsy's default device id is 1).

``ptf_switch``
    Data-plane tests in pytest, on a real BMv2 (needs root, BMv2, p4c and PTF: ``pip install
    'dcnlab[ptf]'``). A factory: ``sw = ptf_switch("router.p4", ports=4)`` compiles the program (dcnlab's
    cache), starts one BMv2 with ports 0..3 wired to veth pairs in a network namespace of its own and
    opens PTF's dataplane on their other ends; ``sw.write(+TableEntry(...), +MulticastGroup(...))`` goes
    through a P4Runtime session that has pushed the pipeline (``sw.p4rt``); ``sw.send(port, pkt)``,
    ``sw.expect(pkt, ports)`` (there and nowhere else), ``sw.expect_any(pkt, ports)`` and
    ``sw.expect_nothing()`` are PTF's ``send_packet``, ``verify_packets``, ``verify_packets_any`` and
    ``verify_no_other_packets``. Everything is torn down after the test
    (:class:`~dcnlab.emu.ptf_switch.PtfSwitch`; ``tests/test_ptf_fixture.py`` uses it).

Enabling it
-----------
Installing dcnlab registers this module as a pytest plugin (entry point ``pytest11``, named
``dcnlab.testing``), so the fixtures are there in every test of that environment with nothing to
write. Where plugin autoloading is off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``) or dcnlab is used
from a source tree that is not installed, enable it in one of these ways (each is harmless when
the plugin is already loaded):

* ``pytest_plugins = ["dcnlab.testing"]`` in the test module or in the rootdir's ``conftest.py``;
* ``pytest -p dcnlab.testing``;
* ``-p no:dcnlab.testing`` turns it off.

pytest is needed only here: it is in dcnlab's ``test`` extra (``pip install 'dcnlab[test]'``);
importing this module without pytest raises an ImportError that says so. Importing it is cheap
(the server's gRPC modules load when a fixture is first used), so the plugin costs a pytest run
that does not use it nothing.

Example (``examples/controller-unit-test/test_my_controller.py`` has a complete one)::

    import asyncio
    from my_controller import Route, configure, options

    def test_routes_are_installed(p4runtime_server, tmp_path):
        blob = tmp_path / "router.json"
        blob.write_text("{}")                          # the fake server does not parse it
        asyncio.run(configure(p4runtime_server.addr, options("router.p4info.txtpb", blob),
                              [Route("10.0.2.0/24", 2, "08:00:00:00:02:22", "00:00:00:00:01:00")]))
        assert p4runtime_server.pipeline_pushes == 1
        (e,) = p4runtime_server.table_entries("RIngress.routes")
        assert e.match[0].lpm.prefix_len == 24
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    import pytest
except ImportError as e:   # pragma: no cover - depends on the environment
    raise ImportError("dcnlab.testing is a pytest plugin and needs pytest: pip install 'dcnlab[test]' "
                      "(or pytest)") from e

if TYPE_CHECKING:
    from dcnlab.controller.runtime.fake_server import FakeP4RuntimeServer
    from dcnlab.emu.ptf_switch import PtfSwitch

__all__ = ["p4runtime_server", "p4runtime_servers", "ptf_switch"]


def _start(device_id: int | None) -> FakeP4RuntimeServer:
    from dcnlab.controller.runtime.fake_server import FakeP4RuntimeServer
    return FakeP4RuntimeServer(device_id).start()


@pytest.fixture
def p4runtime_servers() -> Iterator[Callable[..., list[FakeP4RuntimeServer]]]:
    """A factory: ``p4runtime_servers(n, first_device_id=None)`` starts ``n`` fake P4Runtime servers
    (one switch each; with ``first_device_id``, device ids ``first_device_id + i``, others refused)
    and returns them; every server it started is stopped after the test."""
    started: list[FakeP4RuntimeServer] = []

    def make(n: int = 1, first_device_id: int | None = None) -> list[FakeP4RuntimeServer]:
        if n < 1:
            raise ValueError(f"p4runtime_servers({n}): at least one server")
        new = []
        for i in range(n):
            new.append(_start(None if first_device_id is None else first_device_id + i))
            started.append(new[-1])
        return new

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def p4runtime_server(p4runtime_servers) -> FakeP4RuntimeServer:
    """A started fake P4Runtime server (one switch) at ``.addr`` (``"127.0.0.1:PORT"``); stopped
    after the test."""
    (server,) = p4runtime_servers(1)
    return server


@pytest.fixture
def ptf_switch() -> Iterator[Callable[..., PtfSwitch]]:
    """A factory: ``ptf_switch(program, ports=8, timeout=2.0, negative_timeout=0.1)`` starts one BMv2 running
    ``program`` (a ``.p4`` file) with PTF's dataplane on its ports and a P4Runtime session (module docstring);
    every switch it started is torn down after the test."""
    from dcnlab.emu.ptf_switch import PtfSwitch

    started: list[PtfSwitch] = []

    def make(program: str | os.PathLike, ports: int = 8, **kwargs: Any) -> PtfSwitch:
        sw = PtfSwitch(Path(program), ports, **kwargs)
        started.append(sw)
        return sw.start()

    yield make
    for sw in reversed(started):
        sw.stop()
