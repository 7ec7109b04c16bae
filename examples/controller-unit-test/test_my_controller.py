"""Unit tests of my_controller.py against dcnlab's fake P4Runtime server: no BMv2, no root, no p4c.

Run with ``pytest examples/controller-unit-test``. The ``p4runtime_server`` fixture comes from
dcnlab's pytest plugin :mod:`dcnlab.testing` (loaded automatically when dcnlab is installed; the
``pytest_plugins`` line below also enables it from a source tree).
"""

from __future__ import annotations

import asyncio
import ipaddress
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from my_controller import Route, configure, options  # noqa: E402

pytest_plugins = ["dcnlab.testing"]

# The program's P4Info as p4c writes it (p4c --p4runtime-files router.p4info.txtpb router.p4):
# here dcnlab's committed copy for examples/programs/router.p4.
P4INFO = HERE.parent.parent / "tests" / "fixtures" / "router.p4info.txtpb"
ROUTES = [Route("10.0.1.1/32", 1, "08:00:00:00:01:11", "00:00:00:00:01:00"),
          Route("10.0.2.0/24", 2, "08:00:00:00:02:22", "00:00:00:00:01:00")]


@pytest.fixture
def blob(tmp_path) -> Path:
    path = tmp_path / "router.json"
    path.write_text('{"program": "router.p4"}')     # the fake server stores the device config unparsed
    return path


def test_pushes_the_pipeline_and_installs_lpm_routes(p4runtime_server, blob):
    asyncio.run(configure(p4runtime_server.addr, options(P4INFO, blob), ROUTES))

    assert p4runtime_server.arbitrations == [(0, 10)]             # finsy's default election id
    assert p4runtime_server.pipeline_pushes == 1
    assert p4runtime_server.state.device_config == blob.read_bytes()
    assert [t.preamble.name for t in p4runtime_server.state.p4info.tables][0] == "RIngress.routes"

    entries = p4runtime_server.table_entries("RIngress.routes")
    got = {(str(ipaddress.ip_address(e.match[0].lpm.value)), e.match[0].lpm.prefix_len) for e in entries}
    assert got == {("10.0.1.1", 32), ("10.0.2.0", 24)}
    (one,) = [e for e in entries if e.match[0].lpm.prefix_len == 24]
    params = {p.param_id: int.from_bytes(p.value, "big") for p in one.action.action.params}
    assert params == {1: 0x080000000222, 2: 0x000000000100, 3: 2}    # dst_mac, src_mac, port
    assert len(p4runtime_server.write_requests) == 1                # one batch


def test_the_pipeline_is_not_pushed_twice(p4runtime_server, blob):
    opts = options(P4INFO, blob)
    asyncio.run(configure(p4runtime_server.addr, opts, ROUTES[:1]))
    asyncio.run(configure(p4runtime_server.addr, opts, ROUTES[1:]))   # same cookie: finsy keeps the pipeline
    assert p4runtime_server.pipeline_pushes == 1
    assert len(p4runtime_server.table_entries("RIngress.routes")) == 2


def test_a_route_twice_is_an_error(p4runtime_server, blob):
    with pytest.raises(Exception, match="ALREADY_EXISTS"):
        asyncio.run(configure(p4runtime_server.addr, options(P4INFO, blob), [ROUTES[0], ROUTES[0]]))


def test_each_switch_gets_its_own_device_id(p4runtime_servers, blob):
    s0, s1 = p4runtime_servers(2, first_device_id=0)        # device ids 0 and 1, others refused
    asyncio.run(configure(s1.addr, options(P4INFO, blob, device_id=1), ROUTES))
    assert len(s1.table_entries("RIngress.routes")) == 2
    with pytest.raises(Exception, match="Unknown device id 1: this switch is device 0"):
        asyncio.run(configure(s0.addr, options(P4INFO, blob, device_id=1), ROUTES))
    assert s0.pipeline_pushes == 0


def test_a_backup_controller_does_not_write(p4runtime_servers, blob):
    (switch,) = p4runtime_servers(1)
    from dcnlab.controller.runtime.client import SwitchClient   # another controller, primary with id 20
    other = SwitchClient("other", 0, switch.addr, election_id=(0, 20))
    try:
        with pytest.raises(RuntimeError, match="another controller is primary"):
            asyncio.run(configure(switch.addr, options(P4INFO, blob), ROUTES))
    finally:
        other.close()
    assert switch.table_entries() == [] and switch.pipeline_pushes == 0
