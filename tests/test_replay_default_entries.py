"""Writing a switch's state again after its pipeline was set (a reconnect, and ``lab --ptf`` when a test pushed its
own pipeline) writes what every pipeline already has with MODIFY: a table's default entry, a counter's or meter's
cell. P4Runtime refuses an INSERT of those ('Cannot use INSERT for default entry'), and the replay inserted
everything: ``dcnlab lab examples/basic-lab --ptf s1 --tests examples/ptf-router/ptf`` failed its clean-up step
on s1's default entry (``LabIngress.ipv4_lpm[] -> LabIngress.drop()``), as every ``lab --ptf`` without
``--keep-pipeline`` on a lab whose runtime JSON sets a default action did.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dcnlab.controller.rules import HOST_TABLE
from dcnlab.controller.runtime import Controller, Counter, SwitchTarget, TableEntry
from dcnlab.controller.runtime.entities import MeterConfig, MulticastGroup, SwitchState, UpdateType
from dcnlab.controller.runtime.fake_server import FakeP4RuntimeServer
from dcnlab.controller.runtime.proto import p4runtime_pb2
from p4fixtures import pipeline

ROOT = Path(__file__).resolve().parent.parent
GUARD = 900
"""Seconds the lab may take (a three-switch lab up, PTF's four tests and the teardown: about 15 s on an idle
machine)."""


def test_a_replay_modifies_what_every_pipeline_has_and_inserts_the_rest():
    state = SwitchState()
    default = TableEntry("t", action="drop", is_default=True)
    things = [TableEntry("t", {"f": 1}, "fwd", {"port": 1}), default, Counter("c", 3, 1, 64),
              MeterConfig("m", 0, 1, 2, 3, 4), MulticastGroup(5, ((1, 0),))]
    for e in things:
        state.apply(~e if e.always_there() else +e)
    assert [(u.type, u.entity) for u in state.replay()] == [
        (UpdateType.INSERT, things[0]), (UpdateType.MODIFY, default), (UpdateType.MODIFY, things[2]),
        (UpdateType.MODIFY, things[3]), (UpdateType.INSERT, things[4])]


def test_reconnect_writes_the_default_entry_and_counter_cell_again(tmp_path):
    with FakeP4RuntimeServer() as server:
        ctl = Controller(pipeline(), [SwitchTarget("s0", 0, server.addr)], election_id=(0, 7), log_dir=tmp_path)
        ctl.start()
        try:
            ctl.write({"s0": [+TableEntry(HOST_TABLE, {"hdr.ipv4.dstAddr": "10.0.0.1"}, "DcnIngress.fwd.set_port",
                                          {"port": 1}),
                              ~TableEntry(HOST_TABLE, action="DcnIngress.fwd.drop", is_default=True),
                              ~Counter("DcnIngress.port_in", 2, 5, 500)]})
            server.restart()
            ctl.reconnect("s0")             # was: WriteError ... Cannot use INSERT for default entry
            U = p4runtime_pb2.Update
            assert [u.type for u in server.updates[-3:]] == [U.INSERT, U.MODIFY, U.MODIFY]
            assert len(server.table_entries("ipv4_host")) == 1
            (default,) = server.state.defaults.values()
            assert default.action.action.action_id == ctl.pipeline.p4info.action("DcnIngress.fwd.drop").id
            cid = ctl.pipeline.p4info.counter("DcnIngress.port_in").id
            assert server.state.counters[(cid, 2)] == (5, 500)
        finally:
            ctl.close()


@pytest.mark.bmv2
@pytest.mark.p4c
@pytest.mark.netns
def test_lab_ptf_whose_tests_push_a_pipeline_restores_the_labs_default_entry(tmp_path):
    """The case as a user met it: router tests against basic-lab's s1 (another program: every test errs), and
    the lab's entries, its default action among them, written back before the teardown."""
    from dcnlab.emu.cleanup import leftovers

    lab = tmp_path / "basic-lab"
    shutil.copytree(ROOT / "examples" / "basic-lab", lab, ignore=shutil.ignore_patterns("build", "logs"))
    r = subprocess.run([sys.executable, "-m", "dcnlab", "lab", str(lab), "--ptf", "s1", "--tests",
                        str(ROOT / "examples" / "ptf-router" / "ptf")], capture_output=True, text=True,
                       timeout=GUARD, check=False)
    assert "Cannot use INSERT" not in r.stderr and "teardown step failed" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 1, r.stderr[-3000:]                      # PTF's status: its four tests erred
    assert "unknown table 'RIngress.routes'" in r.stderr and "FAILED (errors=4)" in r.stderr
    assert "PTF exited with status 1; s1's ports are back on their links" in r.stderr
    assert "dcnlab: error" not in r.stderr and "torn down in" in r.stderr
    assert leftovers() == []
