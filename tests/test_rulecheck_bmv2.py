"""The rules check on real BMv2 switches (marker ``bmv2``; root and the toolchain)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dcnlab.controller.coverage import RuleModel, RuleRef
from dcnlab.controller.rules import DST_FIELD, HOST_TABLE, SET_PORT
from dcnlab.emu.cleanup import leftovers
from dcnlab.emu.network import FabricNetwork, NetOptions
from dcnlab.emu.reachability import ProbeHost, probe_list
from dcnlab.emu.rulecheck import check_rules
from dcnlab.topos import parse_spec
from dcnlab.traffic import measure

pytestmark = pytest.mark.bmv2


@pytest.fixture
def fattree():
    """A fat-tree k=4, routed, without agents."""
    with FabricNetwork(parse_spec("fattree:k=4"), NetOptions(agents=False)) as net:
        yield net


def test_rules_check_confirms_every_entry_of_fattree_k4(fattree):
    rc = check_rules(fattree)
    assert rc.ok, rc.summary()
    assert rc.entries == rc.entries_read == rc.confirmed == 384
    assert rc.probes_planned == 112 < rc.all_pairs == 240
    assert rc.probes_received >= 112 and rc.mismatches == [] and rc.unconfirmed == [] and rc.uncoverable == []
    assert set(rc.phases) >= {"read", "plan", "probe"}


def test_bmv2_takes_the_paths_the_model_predicts(fattree):
    """The hash prediction, checked on the switches: every egress port counter moves by exactly the
    probes whose predicted path leaves through it."""
    net = fattree
    model = RuleModel.from_routes(net.fabric, hosts=list(net.host_info.values()))
    hosts = list(net.host_info.values())
    probes = [(hosts[i].name, hosts[j].name, 20000 + 37 * n)
              for n, (i, j) in enumerate([(0, 15), (0, 15), (1, 12), (2, 9), (5, 14), (7, 0), (8, 3), (13, 6),
                                          (0, 4), (3, 2), (10, 11), (15, 0), (6, 9), (4, 13), (9, 1), (12, 7)])]
    probes += [(hosts[0].name, hosts[15].name, 20000 + s) for s in range(1, 9)]      # one pair, many ports
    want: dict[tuple[str, int], int] = {}
    for src, dst, sport in probes:
        w = model.walk(src, dst, sport)
        assert w.delivered
        for eid in w.entries:
            r = model.rules[eid]
            if r.entry.action == SET_PORT:
                key = (r.switch, dict(r.entry.params)["port"])
                want[key] = want.get(key, 0) + 1
    before = measure.snapshot(net.controller)
    res = probe_list([ProbeHost(n, net.host_info[n].ip, h.pid) for n, h in net.hosts.items()], probes, deadline=5)
    after = measure.snapshot(net.controller)
    assert all(res.heard) and res.probes_sent == len(probes)
    got = {k: v.packets for k, v in (after - before).egress.items() if v.packets}
    assert got == want


def test_a_deleted_entry_is_named_by_read_back_and_by_probes(fattree):
    net = fattree
    ctl = net.controller
    dst = net.fabric.host(13)
    victim = next(u.entity for u in ctl.state["a0_1"].replay()
                  if getattr(u.entity, "table", None) == HOST_TABLE and dict(u.entity.match)[DST_FIELD] == dst.ip)
    ctl.write({"a0_1": [-victim]})
    try:
        rc = check_rules(net)
    finally:
        ctl.write({"a0_1": [+victim]})
    assert not rc.ok
    assert [(m.switch, m.kind) for m in rc.mismatches] == [("a0_1", "missing")]
    assert "a0_1: missing DcnIngress.fwd.ipv4_host[hdr.ipv4.dstAddr=167772174]" in str(rc.mismatches[0])
    named = [str(r) for r in rc.unconfirmed]
    assert str(RuleRef("a0_1", victim)) in named, rc.summary()
    assert len(named) == 1, rc.summary()          # localisation cleared every other entry of the lost probe
    assert rc.localisation_probes > 0 and "unconfirmed: a0_1: " in rc.summary()
    assert check_rules(net).ok                     # restored


def test_cli_run_with_both_checks():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "dcnlab", "run", "fattree:k=4", "--check", "both"],
                       capture_output=True, text=True, env=env, timeout=300, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "reachability: 240/240 host pairs" in r.stdout
    assert "rules check: 384 entries read back from 20 switches, 0 mismatch(es); 112 probes planned" in r.stdout
    assert "384/384 entries confirmed, 0 unconfirmed" in r.stdout
    assert leftovers(Path(env["DCNLAB_RUN_ROOT"])) == []
