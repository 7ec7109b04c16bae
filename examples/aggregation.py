"""In-network aggregation on BCube(4,1): an incast over an IRS tree, with and without aggregation.

Six senders each hold word counts over the same 256 keys; the receiver must end with their sum. The
script plans the IRS aggregation tree (the example of IRS/SRS (Guo et al.), Fig. 2: senders v2 v5 v9 v10 v11 v14 into v0)
with ``dcnlab.aggregation``, installs it with the aggregation data plane, and runs the job with the
host agents: once aggregating in the servers along the tree, once without aggregation (every sender's
stream goes to the receiver over unicast paths, which merges them itself). It prints whether the
receiver got exactly the expected sums, and the bytes on the links (``net.link_bytes()``) for both.

Run as root: ``.venv/bin/python examples/aggregation.py``
"""

import time

import dcnlab
from dcnlab.controller.aggregation.dataplane import AggregationDataplane
from dcnlab.reproduce.aggregation.bmv2 import saturating_sum, word_counts
from dcnlab.traffic.aggregation_agent import chunk_frame

SPEC, RECEIVER, SENDERS = "bcube:n=4,k=1", "v0", ["v2", "v5", "v9", "v10", "v11", "v14"]
KEYS, WINDOW = 256, 16                       # 16 chunks of 16 counts; chunks in flight per sender
RTO = 3.0       # seconds the receiver waits for a chunk before it asks again (BMv2 on a busy machine is slow)


def run_incast(net: dcnlab.Network, program, data: dict[str, list[int]]) -> dict:
    """Run the installed job with the host agents; return the receiver's report (its sums included).

    Every agent gets its request at once (``submit``, then ``result``), all with one start 0.5 s ahead: with
    calls one after the other a busy machine starts the last sender late, the receiver, having waited
    ``RTO`` for a chunk, asks every sender to send the window again, and the bytes on the links are no
    longer the tree's (the report's ``requests`` and ``retransmitted`` say when that happened)."""
    (tree,) = program.trees
    rx, job, start = tree.receiver_host, program.job, time.time() + 0.5
    order = sorted(tree.contributors, key=tree.contributors.get)
    calls = [(rx, {"cmd": "aggregation.recv", "job": job, "tree": tree.tree, "length": KEYS, "window": WINDOW,
                   "host_inputs": tree.host_inputs, "rto": RTO, "start_at": start,
                   "senders": [net.hosts[h].ip for h in order]})]
    for h in order:
        tx = net.hosts[h]
        calls.append((h, {"cmd": "aggregation.send", "job": job, "tree": tree.tree, "contributor": tree.contributors[h],
                          "values": data[h], "window": WINDOW, "iface": tx.iface, "start_at": start,
                          "frame": chunk_frame(tx.mac, net.hosts[rx].mac, tx.ip, net.hosts[rx].ip).hex()}))
    for host, request in calls:
        net.hosts[host].agent.submit(request)
    for host, _ in calls:
        net.hosts[host].agent.result()
    net.hosts[rx].agent.call({"cmd": "aggregation.wait", "job": job, "timeout": 30})
    resent = sum(r.get("retransmitted", 0) for h in order
                 for r in net.hosts[h].agent.call({"cmd": "aggregation.stop", "job": job})["reports"])
    return {**net.hosts[rx].agent.call({"cmd": "aggregation.stop", "job": job})["reports"][0], "retransmitted": resent}


def main() -> None:
    fabric = dcnlab.parse_spec(SPEC)
    irs = dcnlab.aggregation.incast_tree(fabric, RECEIVER, SENDERS, "irs")
    unicast = dcnlab.aggregation.incast_tree(fabric, RECEIVER, SENDERS, "unicast")
    plain = dcnlab.aggregation.incast_tree(fabric, RECEIVER, SENDERS, "unicast", delta=1.0)   # no merging
    print(f"{SPEC}, {', '.join(SENDERS)} -> {RECEIVER}: IRS tree cost {irs.cost:g} (aggregating at "
          f"{', '.join(sorted(irs.aggregators))}), without aggregation {plain.cost:g} (units: one sender's data "
          f"over one link)")
    total, again = {}, 0
    with dcnlab.Network(fabric, agents=True) as net:
        dp = AggregationDataplane(fabric, net.controller)
        for name, tree, aggregate in (("with aggregation (IRS)", irs, True), ("without aggregation", unicast, False)):
            program = dp.incast(tree, WINDOW, aggregate=aggregate)
            (t,) = program.trees
            data = word_counts(sorted(t.contributors), 1, KEYS, 5000, seed=1)
            expected, _ = saturating_sum(list(data.values()))
            before = net.link_bytes()
            report = run_incast(net, program, data)
            moved = {k: v - before[k] for k, v in net.link_bytes().items() if v > before[k]}
            dp.remove(program.job)
            exact = report["complete"] and report["result"] == expected
            into = moved.get((RECEIVER, t.receiver_host), 0)
            total[aggregate] = sum(moved.values())
            again += report["requests"] + report["retransmitted"]
            print(f"{name}: receiver got {report['result'][:5]}..., expected {expected[:5]}... -> "
                  f"{'exact' if exact else 'WRONG'}; {sum(moved.values())} bytes on {len(moved)} directed links, "
                  f"{into} into the receiver's host; {report['requests']} retransmission requests, "
                  f"{report['retransmitted']} chunks sent again")
    print(f"bytes with / without aggregation: {total[True] / total[False]:.2f} (model {irs.cost / plain.cost:.2f}"
          + (")" if not again else "; not comparable: chunks were sent again, the machine was too busy)"))


if __name__ == "__main__":
    main()
