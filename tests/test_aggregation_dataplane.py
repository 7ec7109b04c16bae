"""Aggregation trees compiled into agg_route entries, checked on a software model of the P4 program.

No BMv2 needed: :mod:`aggregation_sim` takes exactly the program's decisions. Every compiled job must
deliver the exact (saturating) sums, cross each link as often as the model says, and keep doing so when
frames are lost and chunks resent.
"""

from __future__ import annotations

import random

import pytest

from aggregation_sim import SimFabric
from dcnlab.controller.aggregation import AggregationError, incast_tree, shuffle_plan
from dcnlab.controller.aggregation.dataplane import (AggregationDataplane, SlotPool, compile_incast, compile_shuffle)
from p4fixtures import p4info
from dcnlab.topos import parse_spec
from dcnlab.traffic.aggregation_agent import (FRAME_SIZE, HEADER, HEADER_OFFSET, MAX_VALUE, VALUES, TreeReceiver,
                                       TreeSender, chunk_frame, chunks_for, pack_chunk, unpack_chunk)

BCUBE41 = parse_spec("bcube:n=4,k=1")
PAPER_SENDERS = ["v2", "v5", "v9", "v10", "v11", "v14"]
TEMPLATE = bytes(FRAME_SIZE)


def word_counts(senders, length, seed, big=False):
    """Per sender host, per tree: a partition of word counts (zipf-like, some zero)."""
    rng = random.Random(seed)
    hi = MAX_VALUE // 3 if big else 1000
    return {s: [0 if rng.random() < 0.2 else int(hi * rng.random() ** 3) for _ in range(length)] for s in senders}


def expected(parts):
    total = [sum(col) for col in zip(*parts)]
    result = [min(v, MAX_VALUE) for v in total]
    over = sorted({i // VALUES for i, v in enumerate(total) if v >= MAX_VALUE})   # at the ceiling
    return result, over


def run_job(sim, program, length, window=8, seed=0, big=False, ctrl_loss=0.0, max_rounds=20000):
    """Run every tree of ``program`` on ``sim`` with the agent's sender/receiver classes; a fake clock."""
    rng = random.Random(seed)
    clock = [0.0]
    senders, receivers, ctrl, want = [], {}, [], {}
    ip_of = {}
    for t in program.trees:
        data = word_counts(sorted(t.contributors), length, seed * 1000 + t.tree, big)
        want[t.tree] = expected(list(data.values()))
        ips = [f"ip-{h}" for h, _ in sorted(t.contributors.items(), key=lambda kv: kv[1])]
        r = TreeReceiver(program.job, t.tree, length, t.host_inputs, window, 1.0, ips,
                         lambda ip, msg: ctrl.append((ip, msg)), start_at=0.0)
        receivers[t.tree] = r
        sim.hosts.setdefault(t.receiver_host, lambda payload, rs=receivers: _deliver(rs, payload, clock[0]))
        for h, cid in sorted(t.contributors.items()):
            s = TreeSender(program.job, t.tree, cid, data[h], window, 0, TEMPLATE,
                           lambda f, h=h: sim.inject(h, f))
            senders.append(s)
            ip_of.setdefault(f"ip-{h}", []).append(s)
    for _ in range(max_rounds):
        moved = False
        for s in senders:
            item = s.poll()
            if item is not None:
                s.send_chunk(*item)
                moved = True
        while ctrl:
            ip, msg = ctrl.pop(0)
            if rng.random() < ctrl_loss:
                continue
            from dcnlab.traffic.aggregation_agent import unpack_ctrl
            job, tree, cum, missing = unpack_ctrl(msg)
            for s in ip_of[ip]:
                if s.tree == tree:
                    s.on_ack(cum, missing)
                    moved = True
        if all(r.complete for r in receivers.values()):
            break
        if not moved:
            clock[0] += 2.0
            for r in receivers.values():
                r.tick(clock[0])
    return receivers, want


def _deliver(receivers, payload, now):
    ch = unpack_chunk(payload)
    assert ch is not None
    receivers[ch.tree].on_chunk(ch, now)


def check_exact(receivers, want):
    for tree, r in receivers.items():
        assert r.complete, f"tree {tree}: {r.stats(False)}"
        result, over = want[tree]
        assert r.result == result, f"tree {tree} differs"
        assert sorted(r.overflow) == over


def check_links(sim, program, length):
    """Loss-free: every directed link carried exactly the predicted streams of chunks."""
    chunks = chunks_for(length)
    units = program.link_units()
    assert dict(sim.links) == {k: v * chunks for k, v in units.items() if v}


# -- the paper's example -------------------------------------------------------------------------------------
def test_paper_incast_compiles_to_the_tree_and_delivers_exact_sums():
    tree = incast_tree(BCUBE41, "v0", PAPER_SENDERS, "irs")
    assert tree.cost == 14
    prog = compile_incast(BCUBE41, tree, job=7)
    (t,) = prog.trees
    assert prog.model_units() == tree.cost == 14
    assert t.receiver_host == "h0" and t.host_inputs == 0
    assert set(t.contributors) == {"h2", "h5", "h9", "h10", "h11", "h14"}
    # every aggregating node of the tree aggregates; the receiver v0 is the final node
    assert set(t.aggregators) == set(tree.aggregators) | {"v0"}
    finals = {r.node for r in t.rules if r.final}
    assert finals == {"v0"}
    # switches only forward
    assert all(r.slots is None for r in t.rules if r.node.startswith("w"))
    sim = SimFabric(BCUBE41)
    sim.install(prog)
    receivers, want = run_job(sim, prog, length=100)
    check_exact(receivers, want)
    check_links(sim, prog, 100)
    assert sim.first == sim.links
    assert sim.outcomes["duplicate"] == 0 and sim.outcomes["emitted"] == chunks_for(100) * len(t.aggregators)


def test_entries_encode_against_the_program():
    info = p4info()
    prog = compile_shuffle(BCUBE41, shuffle_plan(BCUBE41, ["v0", "v3", "v8"], PAPER_SENDERS, "srs"), job=3)
    for updates in prog.inserts().values():
        for u in updates:
            u.to_proto(info)
    kinds = {r.entry().action for r in prog.rules()}
    assert kinds == {"DcnIngress.agg.agg_aggregate", "DcnIngress.agg.agg_forward"}


# -- every algorithm, incasts and shuffles ----------------------------------------------------------------------
@pytest.mark.parametrize("spec,algos", [
    ("bcube:n=4,k=1", ["irs", "m2", "mib", "mc", "unicast", "kmb"]),
    ("bcube:n=3,k=2", ["irs", "m2", "unicast"]),
    ("fattree:k=4", ["updown", "unicast", "kmb"]),
])
def test_random_incasts_are_exact_and_cross_links_as_the_model_says(spec, algos):
    fabric = parse_spec(spec)
    members = [h.name for h in fabric.hosts()] if fabric.kind == "fattree" else \
        [f"v{i}" for i in range(fabric.num_hosts())]
    rng = random.Random(11)
    for round_ in range(6):
        picked = rng.sample(members, rng.randint(2, min(10, len(members))))
        receiver, senders = picked[0], picked[1:]
        for algo in algos + ["none"]:
            tree = incast_tree(fabric, receiver, senders, "unicast" if algo == "none" else algo)
            prog = compile_incast(fabric, tree, job=1 + round_, aggregate=algo != "none")
            if algo != "none":
                assert prog.model_units() == tree.cost, (algo, receiver, senders)
            else:   # every flow on its own path: the sum of the path lengths
                assert prog.model_units() == incast_tree(fabric, receiver, senders, "unicast", delta=1).cost
            sim = SimFabric(fabric)
            sim.install(prog)
            receivers, want = run_job(sim, prog, length=40, seed=round_)
            check_exact(receivers, want)
            check_links(sim, prog, 40)


@pytest.mark.parametrize("algo", ["srs", "incast", "m2", "unicast", "none"])
def test_paper_shuffle_every_receiver_exact(algo):
    plan = shuffle_plan(BCUBE41, ["v0", "v3", "v8"], PAPER_SENDERS, algo)
    prog = compile_shuffle(BCUBE41, plan, job=5)
    assert prog.model_units() == plan.cost
    assert [t.receiver for t in prog.trees] == ["v0", "v3", "v8"]
    sim = SimFabric(BCUBE41)
    sim.install(prog)
    receivers, want = run_job(sim, prog, length=48)
    check_exact(receivers, want)
    check_links(sim, prog, 48)
    if algo == "srs":   # all flows enter at v8: v0 and v3 get theirs forwarded as results
        assert {t.receiver: t.rules[0].node for t in prog.trees}
        results = [r for t in prog.trees for r in t.rules if r.result == 1]
        assert results and all(r.slots is None for r in results)


def test_random_shuffles_on_bcube32():
    fabric = parse_spec("bcube:n=3,k=2")
    rng = random.Random(5)
    for round_ in range(4):
        picked = [f"v{i}" for i in rng.sample(range(27), 9)]
        receivers_, senders = picked[:3], picked[3:]
        for algo in ("srs", "incast", "m2", "none"):
            plan = shuffle_plan(fabric, receivers_, senders, algo)
            prog = compile_shuffle(fabric, plan, job=9)
            assert prog.model_units() == plan.cost
            sim = SimFabric(fabric)
            sim.install(prog)
            receivers, want = run_job(sim, prog, length=32, seed=round_)
            check_exact(receivers, want)


# -- loss, duplicates, overflow --------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", [0.02, 0.1])
def test_lost_chunks_are_resent_and_never_added_twice(loss):
    plan = shuffle_plan(BCUBE41, ["v0", "v3", "v8"], PAPER_SENDERS, "srs")
    prog = compile_shuffle(BCUBE41, plan, job=2, slots=8)
    sim = SimFabric(BCUBE41, loss=loss, seed=3)
    sim.install(prog)
    receivers, want = run_job(sim, prog, length=160, window=8, seed=4, ctrl_loss=loss)
    check_exact(receivers, want)
    assert sim.outcomes["lost"] > 0
    assert sim.outcomes["duplicate"] > 0       # retransmissions met bitmaps that already had them
    assert sum(r.requests for r in receivers.values()) > 0
    # frames not marked as retransmissions never exceed the model's streams on any link
    predicted = prog.link_units()
    chunks = chunks_for(160)
    assert all(n <= predicted[k] * chunks for k, n in sim.first.items())
    assert sum(sim.links.values()) > sum(sim.first.values()) >= (1 - 3 * loss) * sum(predicted.values()) * chunks


def test_sums_saturate_and_flag_overflow():
    tree = incast_tree(BCUBE41, "v0", PAPER_SENDERS, "m2")
    prog = compile_incast(BCUBE41, tree, job=4)
    sim = SimFabric(BCUBE41)
    sim.install(prog)
    receivers, want = run_job(sim, prog, length=64, big=True)
    assert want[0][1], "the test data must overflow somewhere"
    check_exact(receivers, want)
    assert any(v == MAX_VALUE for v in receivers[0].result)


def test_unaggregated_receiver_merges_every_stream_itself():
    tree = incast_tree(BCUBE41, "v0", PAPER_SENDERS, "unicast")
    prog = compile_incast(BCUBE41, tree, job=6, aggregate=False)
    (t,) = prog.trees
    assert t.host_inputs == 6 and t.slots == 0 and all(r.slots is None for r in t.rules)
    assert sorted(t.contributors.values()) == list(range(6))
    assert t.link_units[("v0", "h0")] == 6
    sim = SimFabric(BCUBE41, loss=0.05, seed=1)
    sim.install(prog)
    receivers, want = run_job(sim, prog, length=64, big=True)
    check_exact(receivers, want)


# -- slots, ids, installation ----------------------------------------------------------------------------------
def test_slot_pool_first_fit_and_exhaustion():
    pool = SlotPool(16)
    a, b = pool.allocate("v0", 8), pool.allocate("v0", 4)
    assert (a.base, b.base, b.mask) == (0, 8, 3)
    pool.release("v0", a)
    assert pool.allocate("v0", 4).base == 0
    with pytest.raises(AggregationError, match="no 16 free aggregation slots left"):
        pool.allocate("v0", 16)
    with pytest.raises(AggregationError, match="power of two"):
        pool.allocate("v1", 6)


def test_a_job_that_does_not_fit_takes_no_slots():
    pool = SlotPool(64)
    plan = shuffle_plan(BCUBE41, ["v0", "v3", "v8"], PAPER_SENDERS, "incast")
    with pytest.raises(AggregationError, match="free aggregation slots"):
        compile_shuffle(BCUBE41, plan, job=1, pool=pool, slots=64)
    assert all(pool.free(f"v{i}") == 64 for i in range(16))


class FakeWriter:
    def __init__(self):
        self.writes = []

    def write(self, updates):
        self.writes.append(updates)


def test_installer_inserts_then_deletes_the_same_entries_and_frees_slots():
    w = FakeWriter()
    dp = AggregationDataplane(BCUBE41, w, capacity=128)
    tree = incast_tree(BCUBE41, "v0", PAPER_SENDERS, "irs")
    p1 = dp.incast(tree, slots=64)
    p2 = dp.incast(tree, slots=64)
    assert (p1.job, p2.job) == (1, 2)
    with pytest.raises(AggregationError, match="v0: no 64 free"):
        dp.incast(tree, slots=64)
    dp.remove(p1.job)
    ins, dels = w.writes[0], w.writes[-1]
    assert {n: [u.entity for u in us] for n, us in ins.items()} == {n: [u.entity for u in us] for n, us in dels.items()}
    assert all(u.type.name == "DELETE" for us in dels.values() for u in us)
    assert dp.incast(tree, slots=64).job == 4   # ids are not reused at once (3 went to the job that did not fit)


def test_bad_ids_are_refused():
    tree = incast_tree(BCUBE41, "v0", PAPER_SENDERS, "irs")
    with pytest.raises(AggregationError, match="valid: job 1..65535"):
        compile_incast(BCUBE41, tree, job=0)


# -- the wire format ---------------------------------------------------------------------------------------------
def test_frame_template_and_header_round_trip():
    frame = chunk_frame("02:00:00:00:00:01", "02:00:00:00:00:02", "10.0.0.1", "10.0.0.2")
    assert len(frame) == FRAME_SIZE == 118
    assert frame[36:38] == (7702).to_bytes(2, "big") and frame[38:40] == (84).to_bytes(2, "big")
    body = pack_chunk(3, 4, 99, 5, [1, 2, 3], flags=0x80)
    ch = unpack_chunk(body)
    assert (ch.job, ch.tree, ch.chunk, ch.contributor, ch.count, ch.flags, ch.values) == (3, 4, 99, 5, 3, 0x80,
                                                                                           (1, 2, 3))
    assert HEADER.size == 12 and HEADER_OFFSET == 42
    assert unpack_chunk(body[:40]) is None


def test_job_ids_rise_and_are_never_reused():
    dp = AggregationDataplane(BCUBE41, FakeWriter(), first_job=65534)
    assert (dp.new_job(), dp.new_job()) == (65534, 65535)
    with pytest.raises(AggregationError, match="never reused"):
        dp.new_job()
    with pytest.raises(AggregationError, match="first_job=0"):
        AggregationDataplane(BCUBE41, FakeWriter(), first_job=0)
