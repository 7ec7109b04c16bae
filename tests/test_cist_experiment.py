"""The BMv2 experiment's bookkeeping, driven by a simulated data plane (no toolchain): failure sets, the
emulation-vs-model comparison, summary, JSON and plot."""

from __future__ import annotations

import json
from collections import Counter, deque

import pytest

from dcnlab.controller.cist import plan_cists, single_tree
from dcnlab.controller.cist.dataplane import BASELINE_TREE, compile_broadcast
from dcnlab.reproduce.cist import bmv2 as exp
from test_cist_dataplane import Switches, as_state
from dcnlab.topos.dragonfly import Dragonfly
from dcnlab.topos.errors import UserError
from dcnlab.traffic.cist_agent import KIND_BROADCAST


@pytest.fixture(scope="module")
def setup():
    fabric = Dragonfly(p=1, a=4, h=2)
    plan = plan_cists(fabric)
    baseline = single_tree(plan.graph)
    trees = {t.tree_id: t for t in plan.trees} | {BASELINE_TREE: baseline}
    switches = Switches(as_state(compile_broadcast(fabric, plan.graph, trees)))
    return fabric, plan, baseline, switches


def simulate(fabric, plan, switches, failures, counts, lose_one=None, lose_flows=(3, 4)) -> dict[str, dict]:
    """Receiver reports (agent format) for every host broadcasting ``counts`` on every scheme, through the
    compiled switch state with ``failures`` in place from the start. ``lose_one`` = (src, dst) drops one
    broadcast of ``lose_flows`` (default: the *after* window) on that pair (congestion)."""
    dead = failures.switches
    cut = {frozenset(link) for link in failures.links}
    ip = {h.name: h.ip for h in fabric.hosts()}
    reports: dict[str, dict] = {h.name: {"sources": {}} for h in fabric.hosts()}
    schemes = {(1, 3): [t.tree_id for t in plan.trees], (2, 4): [BASELINE_TREE]}
    for src in range(fabric.num_hosts()):
        s_name = fabric.host_name(src)
        start, port = fabric.host_attachment(src)
        if start in dead:
            continue
        for flows, tids in schemes.items():
            got: dict[str, Counter] = {}
            for tid in tids:
                queue = deque([(start, port)])
                while queue:
                    sw, in_port = queue.popleft()
                    for out, _ in switches.forward(sw, in_port, KIND_BROADCAST, tid):
                        peer, peer_port = fabric.peer(sw, out)
                        if not fabric.node(peer).forwards:
                            got.setdefault(peer, Counter())[tid] += 1
                        elif peer not in dead and frozenset((sw, peer)) not in cut:
                            queue.append((peer, peer_port))
            for dst, per_tree in got.items():
                for flow, n in zip(flows, counts):
                    delivered = n - (1 if lose_one == (s_name, dst) and flow in lose_flows else 0)
                    reports[dst]["sources"].setdefault(ip[s_name], {})[str(flow)] = {
                        "delivered": delivered, "dups": sum(per_tree.values()) * n - delivered,
                        "per_tree": {str(t): c * n for t, c in per_tree.items()}}
    return reports


def outcomes(setup, case, lose_one=None, lose_flows=(3, 4)):
    fabric, plan, baseline, switches = setup
    cfg = exp.EmuConfig(fabric.spec, during=4, after=2)
    run = exp._Run(None, fabric, plan.graph, plan, baseline, cfg, [h.name for h in fabric.hosts()], {},
                   exp._ExpectedDeaths())
    reports = simulate(fabric, plan, switches, case.failures, (cfg.during, cfg.after), lose_one, lose_flows)
    alive = {h.name for h in fabric.hosts() if h.node not in case.failures.switches}
    cist = exp._outcome(run, reports, alive, case.failures, list(plan.trees), (1, 3), (4, 2), [0, 1])
    single = exp._outcome(run, reports, alive, case.failures, [baseline], (2, 4), (4, 2), [BASELINE_TREE])
    return cist, single


def test_failure_cases(setup):
    _, plan, _, _ = setup
    cases = exp.failure_cases(plan.graph, plan.trees, ("switch", "link"), 2)
    assert [c.name for c in cases] == ["none", "switch f=1", "switch f=2", "link f=1", "link f=2", "restored"]
    assert [c.f for c in cases] == [0, 1, 2, 1, 2, 0]
    sw2, ln2 = cases[2].failures, cases[4].failures
    assert cases[1].failures.switches < sw2.switches and not sw2.links and len(ln2.links) == 2
    # one failed element per tree: each of the adversary's switches is internal in a different tree
    internal = [t.internal() for t in plan.trees]
    assert sorted(sum(s in i for s in sw2.switches) for i in internal) == [1, 1]


def test_simulated_data_plane_agrees_with_the_model_in_every_phase(setup):
    _, plan, _, _ = setup
    for case in exp.failure_cases(plan.graph, plan.trees, ("switch", "link"), 2):
        cist, single = outcomes(setup, case)
        assert cist.agree and single.agree, (case.name, cist.mismatches[:3], single.mismatches[:3])
        assert cist.extra == 0 and single.extra == 0 and cist.after_partial == 0
        if case.f <= 1:
            assert cist.after_delivered == cist.pairs and cist.during_lost == 0
        if case.f == 0:
            assert cist.exact and single.exact and cist.pairs == 36 * 35
            assert cist.dups == cist.pairs * 6 * 1 and single.dups == 0
        if case.f == 2:
            assert cist.after_delivered == cist.model_delivered < cist.pairs


def test_congestion_loss_is_a_mismatch_not_agreement(setup):
    _, plan, _, _ = setup
    none = exp.failure_cases(plan.graph, plan.trees, ("switch",), 1)[0]
    cist, _ = outcomes(setup, none, lose_one=("h0_0_0", "h3_1_0"))
    assert (cist.after_partial, cist.mismatch_count, cist.agree) == (1, 1, False)
    assert cist.mismatches[0][:2] == ("h0_0_0", "h3_1_0") and "1/2" in cist.mismatches[0][2]
    # a copy lost in the failure window on a pair with intact tree paths is counted as unexplained
    cist, _ = outcomes(setup, none, lose_one=("h0_0_0", "h3_1_0"), lose_flows=(1,))
    assert (cist.during_lost, cist.during_pairs_hit, cist.during_unexplained, cist.agree) == (1, 1, 1, True)
    assert cist.lost_examples[0][:2] == ("h0_0_0", "h3_1_0") and "intact trees under the failures 2" in \
        cist.lost_examples[0][2]


def test_result_summary_json_and_plot(setup, tmp_path):
    fabric, plan, baseline, _ = setup
    cfg = exp.EmuConfig(fabric.spec, during=4, after=2)
    phases = []
    for case in exp.failure_cases(plan.graph, plan.trees, ("switch", "link"), 2, restored_check=False):
        cist, single = outcomes(setup, case)
        phases.append(exp.PhaseResult(case.name, case.kind, tuple(str(case.failures).split(",")) if case.f else (),
                                      case.cut_pair, 0.5 if case.f else None, 36, cist, single, 1.0))
    result = exp.EmuResult(fabric.spec, 36, 36, 36, 2, (11, 9), baseline.root, baseline.diameter, cfg,
                           tuple(phases), 3.0, 0.2, 20.0, 1000)
    assert result.ok
    text = "\n".join(result.summary_lines())
    assert "exactly once after dedup (no failures): yes" in text and "delivered pairs = model: yes" in text
    assert "with k=2 switch failures" in text
    png, js = exp.write_outputs(result, tmp_path)
    assert png.name == "emulation-dragonfly-p1-a4-h2-arrangementrelative.png" and png.stat().st_size > 10_000
    data = json.loads(js.read_text())
    assert data["checks"] == {"exactly_once": True, "survives_k_minus_1": True, "agrees_with_model": True}
    assert data["phases"][2]["cists"]["after_delivered"] == phases[2].cist.after_delivered


def test_config_is_validated():
    with pytest.raises(UserError, match="inject_at=5"):
        exp.EmuConfig("dragonfly:p=1,a=4,h=2", rate_pps=4, during=8, inject_at=5).validate()
    with pytest.raises(UserError, match="valid: switch, link"):
        exp.EmuConfig("x", kinds=("mixed",)).validate()
    with pytest.raises(UserError, match="needs a Dragonfly"):
        exp.run_experiment(exp.EmuConfig("fattree:k=4"))
    with pytest.raises(UserError, match="p=0"):
        exp.run_experiment(exp.EmuConfig("dragonfly:p=0,a=4,h=2"))
    q = exp.quick(exp.SMALL)
    q.validate()
    assert q.during < exp.SMALL.during and not q.restored_check
