"""The BMv2 multicast experiment's toolchain-free parts: workload, link choice, watcher parsing, config, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from dcnlab.controller.multicast.dataplane import MulticastDataplane
from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.reproduce.multicast import bmv2 as exp
from dcnlab.reproduce.multicast.bmv2 import failure
from dcnlab.topos.errors import UserError
from dcnlab.topos.spec import parse_spec


@pytest.fixture(scope="module")
def h():
    return hierarchy_for(parse_spec(exp.DEFAULT_SPEC))


def test_instance_is_small_and_has_every_level(h):
    fabric = h.fabric
    assert sum(1 for _ in fabric.forwarding_nodes()) == 32 and fabric.num_hosts() == 16
    assert {n.layer for n in fabric.forwarding_nodes()} == {"L0", "L1", "L2", "L3"}


def test_jobs_get_layered_unique_mgids(h):
    alloc, placed, taken = exp.place_jobs(h, exp.DEFAULT_COLORS, exp.EmuConfig().jobs)
    groups = [g for _, _, gs in placed for g in gs]
    assert len(groups) == 14 and len({g.mgid for g in groups}) == 14 == len(taken)
    assert [j.cls for j in alloc.jobs()] == ["T2", "T1", "T0", "T0"]
    from dcnlab.controller.multicast.planning import mapping_for
    mapping = mapping_for(h, exp.DEFAULT_COLORS, dual=True)
    for job, _, gs in placed:
        assert all(set(g.members) <= set(job.terminals) and len(g.members) >= 2 for g in gs)
        seen: set[tuple[int, int]] = set()
        for g in gs:               # MGID layers: a terminal is never in two groups of one color
            color = mapping.color_tnid(g.mgid)[0]
            for x in g.members:
                assert (x, color) not in seen
                seen.add((x, color))
    labels = [g.label for g in placed[0][2]]
    assert labels == ["x-line 0", "x-line 1", "y-line 0", "y-line 1", "y-line 2", "y-line 3", "world"]
    assert [g.label for g in placed[2][2]] == ["world"]


def test_three_colors_force_merges_that_eight_do_not(h):
    jobs = exp.EmuConfig().jobs
    assert exp.merges_in_model(h, 3, "fixed", jobs) == 6
    assert exp.merges_in_model(h, 8, "fixed", jobs) == 0


class _NoWrites:
    def write(self, updates):
        pass


def test_the_cut_is_above_l0_on_the_busiest_first_plane_link(h):
    _, placed, _ = exp.place_jobs(h, 3, exp.EmuConfig().jobs)
    dp = MulticastDataplane(_NoWrites(), h, 3)
    for _, _, gs in placed:
        for g in gs:
            dp.add_group(g.mgid, g.members)
    link = exp.choose_cut(dp)
    assert h.link_level(link) >= 1
    load = {lk: sum(t.tfi for t in dp.trees() if t.plane == 0 and lk in t.links)
            for t in dp.trees() for lk in t.links if h.link_level(lk) >= 1}
    assert load[link] == max(load.values())
    assert all(t.plane == 0 for t in dp.trees() if link in t.links)


def test_watcher_reads_carrier_loss_from_ip_monitor_lines():
    lines = {
        "3: a-eth1@b-eth2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP": ("a-eth1", True),
        "2: b-eth2@a-eth1: <NO-CARRIER,BROADCAST,MULTICAST,UP,M-DOWN> mtu 1500 state LOWERLAYERDOWN": ("b-eth2",
                                                                                                        False),
        "3: l1_0_0-eth2@l2_0_0-eth0: <BROADCAST,MULTICAST> mtu 1500 qdisc noqueue state DOWN": ("l1_0_0-eth2", False),
    }
    for line, (name, up) in lines.items():
        m = failure._MONITOR_LINE.match(line)
        assert m and m.group(1) == name and ("LOWER_UP" in m.group(2).split(",")) == up


def test_config_errors_name_the_parameter():
    cfg = exp.EmuConfig()
    cfg.validate()
    with pytest.raises(UserError, match=r"rate_pps=0 is out of range"):
        replace(cfg, rate_pps=0).validate()
    with pytest.raises(UserError, match=r"cut_at=9 s must fall inside the failure window"):
        replace(cfg, cut_at=9).validate()
    with pytest.raises(UserError, match=r"grid 3x3 has 9 processes"):
        replace(cfg, jobs=(exp.JobSpec(8, (3, 3)),)).validate()
    with pytest.raises(UserError, match=r"cut 'x' is unknown; valid: drop, down"):
        replace(cfg, cut="x").validate()
    with pytest.raises(UserError, match=r"does not fit"):
        exp.place_jobs(hierarchy_for(parse_spec(exp.DEFAULT_SPEC)), 3, [exp.JobSpec(16), exp.JobSpec(2)])


def _window(name: str, **kw) -> exp.WindowResult:
    base = dict(name=name, flow=1, count=2, streams=2, messages=4, frames=4, receptions=4, delivered=4, lost=0,
                dups=0, outsider_delivered=0, filtered=0, model_checked=True)
    base.update(kw)
    return exp.WindowResult(**base)


def test_result_checks_summary_and_json():
    fo = exp.Failover("drop", ("l2_0_0", "l1_0_0"), ("l2_0_0-eth0", "l1_0_0-eth2"), 1.0, True, 0.001, 0.01, 0.004,
                      0.006, 0.011, (1, 4), ((0, 3),), 8, 2, 5, 0, ((0.1, 0.5, 1.0),))
    windows = (_window("steady"), _window("failure", model_checked=False, delivered=3, lost=1),
               _window("failed-over", link_packets=7, link_model=7, links_compared=10))
    res = exp.EmuResult(exp.DEFAULT_SPEC, 32, 16, 3, "fixed", "both", (), (), (), (), {"ok": True}, windows, fo,
                        6, 0, 3, 9, 4.0, 12.0, ((1, 1),))
    assert res.checks() == {"exactly_once": True, "outsiders": True, "counters": True, "readback": True,
                            "failover_detected": True, "failover_no_loss": False}
    text = "\n".join(res.summary_lines())
    assert "failover_no_loss=FAIL" in text and "controller failover 10.0 ms" in text
    data = json.loads(json.dumps(res.to_json()))
    assert data["ok"] is False and data["failover"]["groups"] == [1, 4] and data["windows"][1]["exact"] is False
    bad = replace(res, windows=(_window("steady", link_packets=5, link_model=6),) + windows[1:])
    assert bad.checks()["counters"] is False


def test_cli_rejects_emulation_options_without_emulate():
    r = subprocess.run([sys.executable, "-m", "dcnlab", "reproduce", "multicast", "--emulate", "off", "--feed",
                        "primary"], capture_output=True, text=True)
    assert r.returncode == 2 and "--feed applies only when the BMv2 experiment runs" in r.stderr
    r = subprocess.run([sys.executable, "-m", "dcnlab", "reproduce", "multicast", "--help"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "--emulate" in r.stdout and "--cut" in r.stdout
