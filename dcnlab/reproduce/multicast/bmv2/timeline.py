"""The experiment's run: the fabric brought up, the timeline below, torn down.

**Timeline** (each step checked, everything through :class:`dcnlab.controller.multicast.dataplane.MulticastDataplane`):

1. bring up the fabric (no unicast routes: only tree traffic crosses the switches), install the jobs' groups
   one by one (incremental: each add writes only what changed) and tell every host agent its groups;
2. window *steady*: every member of every group sends ``count`` messages to it;
3. churn: the second-to-last job leaves (its groups are removed), a job of the same shape arrives, one
   member leaves the first job's world group and a terminal of the last job joins the new job's world
   group; then the switches' ``tree_replicate`` entries and PRE groups are read back over P4Runtime and
   compared with a from-scratch compilation of the planner's trees;
4. window *churned*: the same traffic with the new groups;
5. window *failure*: the same traffic, longer; ``cut_at`` seconds in, one link is cut and the controller is
   told, which switches the groups of the broken tree to their second tree
   (:meth:`~dcnlab.controller.multicast.dataplane.MulticastDataplane.port_down`).  The link is the link above L0 of a
   first-plane tree carried by the most groups (ties: the highest level).  **How the link is cut**
   (:data:`CUTS`): the issue's ``ip -n <netns> link set <intf> down`` on both ends (``cut="down"``, with an
   ``ip monitor link`` watcher in the run's namespace as the failure detector) turned out to freeze BMv2:
   a switch one of whose interfaces goes down stops receiving on *all* its ports (measured on this build:
   nothing forwarded until the interface is up again and a frame arrives on it; libpcap 1.10 keeps polling
   the downed interface inside ``pcap_next_ex``, and BMv2 reads every port from one loop).  That is a double
   switch failure, not a link failure.  So the default cut (``cut="drop"``) drops every frame sent on either
   end (``pfifo limit 0`` as root qdisc; the interfaces stay up, BMv2 keeps running) and the fault injector
   delivers the port-down notification a switch raises on loss of signal; the detection time is then only
   the injector's, and the *controller's* failover time is what is measured.  ``cut="down"`` remains
   available (``--cut down``): the no-loss check holds there too, because both frozen switches are
   first-plane switches, but the failed-over window is not compared with the model (the frozen switches
   also drop first-plane trees that do not use the link);
6. window *failed-over*: the same traffic again, with the link still down.

With ``cfg.algorithms`` (``--algo``), each of those routers first runs step 1 and the *steady* window on its own
trees, through the same data plane module, and is removed again
(:mod:`~dcnlab.reproduce.multicast.bmv2.algorithms`); failover, churn and dual trees stay C-MR4LMS's.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from typing import Any

from dcnlab.reproduce.multicast.bmv2.algorithms import row as algorithm_row
from dcnlab.reproduce.multicast.bmv2.algorithms import run_algorithms
from dcnlab.reproduce.multicast.bmv2.checks import WindowResult, read_back
from dcnlab.reproduce.multicast.bmv2.failure import Failover, choose_cut, failure_window
from dcnlab.reproduce.multicast.bmv2.report import EmuResult
from dcnlab.reproduce.multicast.bmv2.setup import (
    COMPARE_COLORS,
    EmuConfig,
    EmulationError,
    Progress,
    Run,
)
from dcnlab.reproduce.multicast.bmv2.traffic import (
    FLOW_CHURNED,
    FLOW_FAILED_OVER,
    FLOW_STEADY,
    run_window,
    sync_membership,
)
from dcnlab.reproduce.multicast.bmv2.workload import (
    job_groups,
    merges_in_model,
    place_jobs,
)
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)


def run_experiment(cfg: EmuConfig, progress: Progress | None = None, options: Any = None) -> EmuResult:
    """Bring the fabric up, run the timeline of the module docstring, tear down (also on errors)."""
    from dcnlab.controller.multicast.dataplane import MulticastDataplane
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.metrics import compute
    from dcnlab.controller.multicast.planning import mapping_for
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.topos.midplane import Midplane
    from dcnlab.topos.spec import parse_spec
    from dcnlab.traffic.multicast_agent import multicast_frame

    say = progress or (lambda m: log.info("%s", m))
    cfg.validate()
    fabric = parse_spec(cfg.spec)
    if not isinstance(fabric, Midplane):
        raise UserError(f"multicast emulation runs on a midplane fat-tree (midplane:...), got {cfg.spec}")
    h = hierarchy_for(fabric)
    if h.m < 2:
        raise UserError(f"multicast emulation uses dual trees: midplane parameter m={h.m}; valid: m >= 2")
    t_start = time.perf_counter()
    mapping = mapping_for(h, cfg.colors, dual=True)
    alloc, placed, taken = place_jobs(h, cfg.colors, cfg.jobs)
    all_groups = [g for _, _, gs in placed for g in gs]
    merges = merges_in_model(h, cfg.colors, cfg.variant, cfg.jobs)
    merges_more = merges_in_model(h, max(COMPARE_COLORS, cfg.colors), cfg.variant, cfg.jobs)
    frames = {info.name: multicast_frame(info.mac, info.ip, cfg.size) for info in fabric.hosts()}
    net = FabricNetwork(fabric, options or NetOptions(routes=False), progress=say)
    install: list[dict] = []
    churn: list[dict] = []
    windows: list[WindowResult] = []
    failover: Failover | None = None
    readback: dict = {}
    algo_rows: list[dict] = []
    try:
        net.start()
        bringup = net.timings.total()
        joined: dict[str, set[int]] = {}
        if cfg.algorithms:
            algo_rows, joined = run_algorithms(net, fabric, h, cfg, frames, all_groups, say)
        dp = MulticastDataplane(net.controller, h, cfg.colors, cfg.variant, dual=True, feed=cfg.feed)
        run = Run(net, fabric, dp, cfg, frames, say, joined=joined)
        for g in all_groups:
            install.append(asdict(dp.add_group(g.mgid, g.members)))
        sync_membership(run)
        say(f"installed {len(all_groups)} groups: {sum(o['updates'] for o in install)} updates")
        windows.append(run_window(run, "steady", FLOW_STEADY, cfg.count, model=True)[0])
        if cfg.algorithms:
            algo_rows.insert(0, algorithm_row(f"cmr4lms-{cfg.variant}", "built-in", dp, windows[0], len(all_groups),
                                              {}, install, dp.verify(), "dual trees; churn and failover below"))
        if cfg.churn:
            churn = _churn(run, alloc, placed, mapping, taken)
            sync_membership(run)
            windows.append(run_window(run, "churned", FLOW_CHURNED, cfg.count, model=True)[0])
        readback = read_back(run)
        say(f"read back {readback['entries']} entries and {readback['groups']} PRE groups: "
            f"{'equal' if readback['ok'] else 'DIFFERENT'}")
        link = choose_cut(dp)
        result, failover = failure_window(run, link)
        windows.append(result)
        windows.append(run_window(run, "failed-over", FLOW_FAILED_OVER, cfg.count, model=cfg.cut == "drop")[0])
        time.sleep(2 * net.opts.monitor_interval)
        net.check_switches()
        trees = dp.trees()
        m = compute(h, trees, 0, 0.0, cfg.colors)
        groups_json = []
        jobs_of = {g.mgid: (g.job, g.label) for _, _, gs in placed for g in gs}
        for mgid, members in sorted(dp.groups().items()):
            t0, t1 = dp.group_trees(mgid)
            groups_json.append({"mgid": mgid, "job": jobs_of.get(mgid, (None, ""))[0],
                                "label": jobs_of.get(mgid, (None, ""))[1], "color": dp.color(mgid),
                                "members": [run.host_name(x) for x in sorted(members)],
                                "root": t0.root(h), "backup_root": t1.root(h),
                                "merged_with": [g for g in t0.groups if g != mgid],
                                "links": [list(e) for e in t0.directed_links(h)],
                                "backup_links": [list(e) for e in t1.directed_links(h)]})
        jobs_json = [{"job": j.job, "class": j.cls, "terminals": [run.host_name(x) for x in j.terminals]}
                     for j in alloc.jobs()]
    finally:
        net.stop()
    return EmuResult(fabric.spec, sum(1 for _ in fabric.forwarding_nodes()), fabric.num_hosts(), cfg.colors,
                     cfg.variant, cfg.feed, tuple(groups_json), tuple(jobs_json), tuple(install), tuple(churn),
                     readback, tuple(windows), failover, merges, merges_more, m.entries_per_port_max, m.trees,
                     bringup, time.perf_counter() - t_start, tuple(run.link_points), tuple(algo_rows))


def _churn(run: Run, alloc: Any, placed: list, mapping: Any, taken: set[int]) -> list[dict]:
    """A job leaves, one of the same shape arrives, a member leaves a group and a terminal joins one."""
    from dcnlab.controller.multicast.allocation import Refused

    dp, h = run.dp, run.dp.h
    ops: list[dict] = []
    victim_i = len(placed) - 2 if len(placed) >= 2 else 0
    job, spec, groups = placed[victim_i]
    for g in groups:
        ops.append(asdict(dp.remove_group(g.mgid)))
    alloc.release(job.job)
    new = alloc.allocate(spec.size)
    if isinstance(new, Refused):
        raise EmulationError(f"the arriving job of {spec.size} terminals does not fit: {new.reason}")
    new_groups = job_groups(h, mapping, run.cfg.colors, new, spec, taken)
    for g in new_groups:
        ops.append(asdict(dp.add_group(g.mgid, g.members)))
    placed[victim_i] = (new, spec, new_groups)
    first_world = next((g for g in placed[0][2] if g.label == "world"), placed[0][2][-1])
    members = sorted(dp.planner.members(first_world.mgid))
    if len(members) > 2:
        ops.append(asdict(dp.leave(first_world.mgid, members[-1])))
    new_world = next((g for g in new_groups if g.label == "world"), new_groups[-1])
    joiner = sorted(placed[-1][0].terminals)[0] if victim_i != len(placed) - 1 else None
    if joiner is not None and joiner not in dp.planner.members(new_world.mgid):
        ops.append(asdict(dp.join(new_world.mgid, joiner)))
    run.say(f"churn: {len(ops)} operations, {sum(o['updates'] for o in ops)} updates")
    return ops
