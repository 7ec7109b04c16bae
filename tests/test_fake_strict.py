"""The fake P4Runtime server refuses what BMv2's (PI) refuses, as PI reports it, and reads back as
PI does. tests/test_fake_vs_bmv2.py runs the full table of writes; here are the
shapes clients see: the gRPC status and its details, dcnlab's, finsy's and p4runtime-shell's
messages, and what a Read returns."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from dcnlab.controller.runtime import TableEntry, WriteError
from dcnlab.controller.runtime.client import SwitchClient
from dcnlab.controller.runtime.fake_server import FakeP4RuntimeServer
from dcnlab.controller.runtime.p4info import P4Info
from dcnlab.controller.runtime.proto import code_pb2, p4runtime_pb2, p4runtime_pb2_grpc, status_pb2
from pi_write_cases import (MAC1, MAC2, PROGRAMS, Names, act, acl, counter, entry, forward, ins, load_p4info, mod,
                            push, route)

P = p4runtime_pb2
HERE = Path(__file__).resolve().parent
ROUTER = load_p4info(PROGRAMS["router"][1])
CHECKS = load_p4info(PROGRAMS["pi_checks"][1])


@pytest.fixture
def switch():
    """A fake switch with router.p4 pushed, and a plain gRPC stub to it."""
    with FakeP4RuntimeServer() as s, grpc.insecure_channel(s.addr) as ch:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
        push(stub, 0, ROUTER, b"{}")
        yield s, stub


def write(stub, *updates: P.Update) -> grpc.RpcError | None:
    try:
        stub.Write(P.WriteRequest(device_id=0, updates=list(updates)))
    except grpc.RpcError as e:
        return e
    return None


def read(stub, ent: P.Entity) -> list[P.Entity]:
    return [e for r in stub.Read(P.ReadRequest(device_id=0, entities=[ent])) for e in r.entities]


def test_the_issues_write_is_refused_as_pi_does_and_nothing_is_installed(switch):
    """RIngress.forward with one of its three parameters: the fake used to install it."""
    s, stub = switch
    n = Names(ROUTER)
    e = write(stub, ins(route(n, action=forward(n, (3, b"\x02")))))
    assert e is not None and e.code() == grpc.StatusCode.UNKNOWN and e.details() == ""
    assert s.table_entries("RIngress.routes") == []
    assert write(stub, ins(route(n))) is None                      # all three: accepted
    assert len(s.table_entries("RIngress.routes")) == 1


def test_a_failed_batch_carries_one_p4_error_per_update_as_pi_sends_it(switch):
    _, stub = switch
    n = Names(ROUTER)
    e = write(stub, ins(route(n)), ins(route(n)), ins(acl(n, priority=0)), ins(route(n, bytes([10, 0, 4, 0]))))
    (status_bin,) = [v for k, v in e.trailing_metadata() if k == "grpc-status-details-bin"]
    status = status_pb2.Status.FromString(status_bin)
    assert (status.code, status.message) == (code_pb2.UNKNOWN, "")
    errors = []
    for d in status.details:
        err = P.Error()
        assert d.Unpack(err)
        errors.append(err)
    assert errors[0] == errors[3] == P.Error()        # PI's OK detail: an empty p4.v1.Error
    assert [(x.canonical_code, x.message, x.space) for x in errors[1:3]] == [
        (code_pb2.ALREADY_EXISTS, "Match entry exists, use MODIFY if you wish to change action", "ALL-sswitch-p4org"),
        (code_pb2.INVALID_ARGUMENT, "Zero priority for ternary match", "ALL-sswitch-p4org")]


def test_a_negative_priority_is_refused_though_pi_would_hand_it_to_bmv2(switch):
    """Not in the differential table: BMv2 aborts on it (an assertion in its priority conversion)."""
    s, stub = switch
    e = write(stub, ins(acl(Names(ROUTER), priority=-5)))
    status = status_pb2.Status.FromString(dict(e.trailing_metadata())["grpc-status-details-bin"])
    err = P.Error()
    status.details[0].Unpack(err)
    assert err.canonical_code == code_pb2.INVALID_ARGUMENT and "Negative priority" in err.message
    assert s.table_entries() == []


def test_dcnlabs_client_names_pis_code_and_message(switch):
    s, _ = switch
    info = P4Info(ROUTER)
    c = SwitchClient("s1", 0, s.addr)
    try:
        with pytest.raises(WriteError) as e:
            c.write(info, [+TableEntry("RIngress.udp_ports", {"hdr.udp.dport": (2000, 1000)}, "RIngress.count_port",
                                       {"slot": 1}, priority=1)])
    finally:
        c.close()
    assert e.value.code == "INVALID_ARGUMENT" and "Invalid range value, make sure low <= high" in str(e.value)


def test_finsy_sees_pis_error(switch):
    """finsy checks parameters itself, not priorities: a ternary entry without one is refused by PI."""
    fy = pytest.importorskip("finsy")
    s, _ = switch
    blob = HERE / "fixtures" / "router.p4info.txtpb"      # any bytes: the fake does not parse the device config

    async def go():
        opts = fy.SwitchOptions(p4info=PROGRAMS["router"][1], p4blob=blob, device_id=0)
        async with fy.Switch("sw", s.addr, opts) as sw:
            await sw.write([+fy.P4TableEntry("RIngress.acl", match=fy.P4TableMatch(
                {"hdr.ipv4.src": ("10.0.0.0", "255.0.0.0")}), action=fy.P4TableAction("RIngress.permit"))])

    with pytest.raises(Exception, match="(?s)INVALID_ARGUMENT.*Zero priority for ternary match") as e:
        asyncio.run(go())
    assert type(e.value).__name__ == "P4ClientError"


def test_reads_come_back_in_pis_form(switch):
    """Leading zero bytes dropped, parameters in P4Info order, "don't care" fields left out; a Read
    naming a match returns that entry; an unknown table id is refused."""
    _, stub = switch
    n = Names(ROUTER)
    padded = forward(n, (3, b"\x00\x02"), (2, b"\x00" + MAC2), (1, MAC1))
    assert write(stub, ins(route(n, bytes([0, 10, 0, 2, 0]), 24, padded)), ins(route(n, bytes([10, 0, 3, 0]))),
                 ins(route(n, plen=None))) is None
    got = read(stub, entry(n.t("RIngress.routes")))
    assert len(got) == 3
    first = got[0].table_entry
    assert first.match[0].lpm.value == bytes([10, 0, 2, 0])
    assert [(p.param_id, p.value) for p in first.action.action.params] == [(1, MAC1), (2, b"\x01\x00"), (3, b"\x02")]
    assert list(got[2].table_entry.match) == []
    one = read(stub, route(n, bytes([10, 0, 3, 0])))
    assert [e.table_entry.match[0].lpm.value for e in one] == [bytes([10, 0, 3, 0])]
    with pytest.raises(grpc.RpcError) as e:
        read(stub, entry(0x02ABCDEF))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and e.value.details() == "Invalid P4 id"


def test_default_entries_are_set_read_and_not_listed_with_the_entries(switch):
    s, stub = switch
    n = Names(ROUTER)
    assert read(stub, entry(n.t("RIngress.routes"), default=True))[0].table_entry.action.action.action_id == \
        n.a("RIngress.drop")                                # the program's default before any change
    assert write(stub, mod(entry(n.t("RIngress.routes"), (), act(n.a("RIngress.flood"), (1, b"\x00\x05")),
                                 default=True))) is None
    (d,) = read(stub, entry(n.t("RIngress.routes"), default=True))
    assert d.table_entry.is_default_action and d.table_entry.action.action.params[0].value == b"\x05"
    assert read(stub, entry(n.t("RIngress.routes"))) == [] and s.table_entries() == []


def test_counter_writes_show_in_reads():
    with FakeP4RuntimeServer() as s, grpc.insecure_channel(s.addr) as ch:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
        push(stub, 0, CHECKS, b"{}")
        n = Names(CHECKS)
        assert write(stub, mod(counter(n.c("PIngress.hits"), 2, 7, 700)),
                     mod(counter(n.c("PIngress.frames"), 1, 3, 300))) is None
        got = {(e.counter_entry.counter_id, e.counter_entry.index.index):
               (e.counter_entry.data.packet_count, e.counter_entry.data.byte_count)
               for e in read(stub, counter(0, None))}
        # frames counts packets only: PI writes no bytes to it
        assert got == {(n.c("PIngress.hits"), 2): (7, 700), (n.c("PIngress.frames"), 1): (3, 0)}


def _p4runtime_shell_python() -> str | None:
    """An interpreter with p4runtime-shell: this one, or $DCNLAB_P4RUNTIME_SHELL_PYTHON (it pins an old
    protobuf, so it usually lives in a venv of its own: python -m venv v && v/bin/pip install p4runtime-shell)."""
    try:
        import p4runtime_sh  # noqa: F401
        return sys.executable
    except ImportError:
        pass
    other = os.environ.get("DCNLAB_P4RUNTIME_SHELL_PYTHON")
    return other if other and shutil.which(other) else None


def test_p4runtime_shell_works_against_the_fake_and_prints_pis_error(tmp_path):
    """The issue's client: push, insert, read, modify, delete; the one-parameter insert refused."""
    python = _p4runtime_shell_python()
    if python is None:
        pytest.skip("p4runtime-shell not installed here and $DCNLAB_P4RUNTIME_SHELL_PYTHON not set")
    blob = tmp_path / "router.json"
    blob.write_text("{}")
    with FakeP4RuntimeServer() as s:
        proc = subprocess.run([python, str(HERE / "p4runtime_shell_client.py"), s.addr, str(PROGRAMS["router"][1]),
                               str(blob)], capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert s.pipeline_pushes == 1 and s.table_entries() == []
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    route = {"dst": ["0a000200", 24], "action": "RIngress.forward",
             "params": {"dst_mac": "080000000222", "src_mac": "0100", "port": "02"}}
    assert out["inserted"] == [route]
    assert out["modified"] == [{**route, "params": {**route["params"], "port": "03"}}]
    assert out["deleted"] == [] and out["after"] == []
    assert out["one_param"] == ("Error(s) during Write:\n"
                                "\t* At index 0: INVALID_ARGUMENT, 'Unexpected number of action parameters'\n")
