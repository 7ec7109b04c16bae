"""Differential test: the same writes, valid and invalid, give the same status codes
and messages from the fake P4Runtime server as from BMv2's (PI).

The cases are in tests/pi_write_cases.py; what BMv2 answers is recorded in
tests/fixtures/pi_write_statuses.txt. The fake half runs everywhere against that table; the
``bmv2`` half starts one ``simple_switch_grpc`` (no interfaces, no namespace), pushes p4c's build
of each program, runs every case against it and asserts the recorded answer, and compares what the
fake reads back with what BMv2 reads back. ``DCNLAB_RECORD_PI_STATUSES=1`` rewrites the table from
BMv2's answers instead of asserting them (then the fake half says where the fake differs).

A third half runs where PI is installed without BMv2: PI's own gRPC server over PI's dummy target
(``pi_server_dummy``, see :func:`test_pi_frontend_answers_as_recorded`) gives every answer of the
table that PI's frontend decides; the cases BMv2 decides below PI (``target=True``) it accepts.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import shutil
import socket
import subprocess

import grpc
import pytest

from dcnlab.controller.runtime.fake_server import FakeP4RuntimeServer
from dcnlab.controller.runtime.proto import p4info_pb2, p4runtime_pb2_grpc
from pi_write_cases import CASES, PROGRAMS, Outcome, load_p4info, recorded, run, write_recorded

RECORD = os.environ.get("DCNLAB_RECORD_PI_STATUSES") == "1"
TABLE, SOURCE = recorded()


def same(a: Outcome, b: Outcome) -> tuple[str, str]:
    return (a.codes, " ".join(a.messages.split())), (b.codes, " ".join(b.messages.split()))


@pytest.fixture(scope="module")
def fake():
    with FakeP4RuntimeServer() as s, grpc.insecure_channel(s.addr) as ch:
        yield p4runtime_pb2_grpc.P4RuntimeStub(ch)


def test_the_table_records_every_case_once():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert set(TABLE) == set(names), set(TABLE) ^ set(names)
    assert SOURCE, "the table says where its answers come from"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fake_answers_as_recorded(fake, case):
    got = run(fake, 0, load_p4info(PROGRAMS[case.program][1]), b'{"fake": "bmv2 json"}', case)
    mine, want = same(got, TABLE[case.name])
    assert mine == want


# -- against BMv2 ------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def bmv2(tmp_path_factory):
    """One simple_switch_grpc, and p4c's build of both programs: (stub, {program: (P4Info, JSON)})."""
    from dcnlab.emu import bmv2 as emu
    from dcnlab.p4src.compiler import compile_program, device_json
    programs = {}
    for name, (src, _) in PROGRAMS.items():
        prog = compile_program(name, src_dir=src)
        programs[name] = (load_p4info(prog.p4info), device_json(prog.json).read_bytes())
    run_dir = tmp_path_factory.mktemp("pi-diff")
    sw = emu.BMv2Process(emu.BMv2Config("pi-diff", 0, {}, _free_port(), run_dir))
    sw.start()
    try:
        emu.wait_ready([sw], timeout=60)
        with grpc.insecure_channel(sw.cfg.grpc_addr) as ch:
            yield p4runtime_pb2_grpc.P4RuntimeStub(ch), programs
    finally:
        emu.stop_all([sw])


@pytest.fixture(scope="module")
def recording():
    results: dict[str, Outcome] = {}
    yield results
    if RECORD and {c.name for c in CASES} <= set(results):
        from dcnlab.controller.runtime.toolchain import require_tool
        version = subprocess.run([str(require_tool("simple_switch_grpc")), "--version"], capture_output=True,
                                 text=True, check=False).stdout.strip()
        write_recorded(results, f"recorded from simple_switch_grpc {version} on {datetime.date.today()}")


@pytest.mark.bmv2
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bmv2_answers_as_recorded(bmv2, fake, recording, case):
    stub, programs = bmv2
    info, blob = programs[case.program]
    real = run(stub, 0, info, blob, case)
    recording[case.name] = real
    mirrored = run(fake, 0, info, blob, case)          # the fake with p4c's P4Info: same reads
    assert mirrored.read == real.read
    if RECORD:
        mine, theirs = same(mirrored, real)
        assert mine == theirs
    else:
        got, want = same(real, TABLE[case.name])
        assert got == want


# -- against PI's frontend alone -------------------------------------------------------------------
@pytest.fixture(scope="module")
def pi_frontend(tmp_path_factory):
    path = os.environ.get("DCNLAB_PI_DUMMY_SERVER") or shutil.which("pi_server_dummy")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("no pi_server_dummy (PI's gRPC server over its dummy target): set $DCNLAB_PI_DUMMY_SERVER")
    log = (tmp_path_factory.mktemp("pi-dummy") / "server.log").open("wb")
    addr = f"127.0.0.1:{_free_port()}"
    proc = subprocess.Popen([path, addr], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        with grpc.insecure_channel(addr) as ch:
            grpc.channel_ready_future(ch).result(timeout=60)
            yield p4runtime_pb2_grpc.P4RuntimeStub(ch)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_pi_frontend_answers_as_recorded(pi_frontend, case):
    """PI's frontend code itself, without BMv2. Build its server once where PI is installed (as PI's
    ``proto/demo_grpc/Makefile.am`` builds ``pi_server_dummy``)::

        g++ -std=c++17 -I/usr/local/include PI/proto/demo_grpc/pi_server_main.cpp -o pi_server_dummy \\
            -L/usr/local/lib -lpigrpcserver -lpifeproto -lpiprotogrpc -lpiprotobuf -lpiall -lpi_dummy \\
            $(pkg-config --libs grpc++ protobuf)

    and point ``$DCNLAB_PI_DUMMY_SERVER`` at it. Nothing is read back: the dummy target keeps no entries
    (and may crash when asked for them)."""
    got = run(pi_frontend, 0, load_p4info(PROGRAMS[case.program][1]), b"{}", dataclasses.replace(case, read=None))
    if case.target:
        assert got.codes == "OK"          # the dummy target takes it; BMv2 refuses it below PI
    else:
        mine, want = same(got, TABLE[case.name])
        assert mine == want


@pytest.mark.p4c
def test_committed_pi_checks_p4info_describes_p4cs():
    """The hand-written P4Info of pi_checks.p4 has p4c's tables, fields, actions, scopes and resources
    (its ids are made up; the cases look everything up by name)."""
    from dcnlab.p4src.compiler import compile_program
    src, committed = PROGRAMS["pi_checks"]
    fresh = load_p4info(compile_program("pi_checks", src_dir=src).p4info)
    assert shape(fresh) == shape(load_p4info(committed))


def shape(info: p4info_pb2.P4Info) -> dict:
    names = {o.preamble.id: o.preamble.name for kind in ("tables", "actions", "counters", "direct_counters", "meters")
             for o in getattr(info, kind)}
    return {
        "tables": {t.preamble.name: (
            [(f.id, f.name, f.bitwidth, f.match_type) for f in t.match_fields],
            sorted((names[r.id], r.scope) for r in t.action_refs), t.size, names.get(t.const_default_action_id),
            names.get(t.initial_default_action.action_id), sorted(names[r] for r in t.direct_resource_ids),
            t.is_const_table) for t in info.tables},
        "actions": {a.preamble.name: [(p.id, p.name, p.bitwidth) for p in a.params] for a in info.actions},
        "counters": {c.preamble.name: (c.spec.unit, c.size) for c in info.counters},
        "direct_counters": {c.preamble.name: (c.spec.unit, names[c.direct_table_id]) for c in info.direct_counters},
        "meters": {m.preamble.name: (m.spec.unit, m.size) for m in info.meters},
    }
