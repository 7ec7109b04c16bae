"""Multicast with a limited multicast table: C-MR4LMS on fat-trees (report 001), its baselines and metrics.

Modules, in dependency order:

* :mod:`~controller.multicast.hierarchy` — level model of the midplane tree and the k-ary fat-tree (keys,
  link ids, names, ports by label arithmetic);
* :mod:`~controller.multicast.mapping` — MGID → (color, TN), formulas (1)–(4);
* :mod:`~controller.multicast.spanning` — the C·m conflict-free spanning trees (Theorem 1);
* :mod:`~controller.multicast.tree` — incremental tree state, :class:`TreeRecord`, per-port replication tables;
* :mod:`~controller.multicast.cmr4lms` — Algorithms 1–3, fixed and dynamic, incremental join/leave;
* :mod:`~controller.multicast.dual` — fault-tolerant dual trees;
* :mod:`~controller.multicast.baselines` — OpenSM-like, global tree, MR4LMS-like;
* :mod:`~controller.multicast.layers`, :mod:`~controller.multicast.workload` — MGID layers and workloads;
* :mod:`~controller.multicast.allocation` — non-interfering job allocation (rules 1–7);
* :mod:`~controller.multicast.metrics`, :mod:`~controller.multicast.planning` — EFI/TFI and whole-workload runs.

Data-plane use (issue 9 §7): a controller keeps a :class:`CMR4LMS` (or :class:`DualCMR4LMS`) with
``track_entries=True`` and applies each :class:`Change`'s ``entries`` — ``(switch, ingress port, color) ->
out-ports`` in the fabric's port numbers — to the switches; :func:`port_tables` gives the full state.
"""

from controller.multicast.cmr4lms import CMR4LMS, Change
from controller.multicast.dual import DualChange, DualCMR4LMS
from controller.multicast.hierarchy import Hierarchy, hierarchy_for
from controller.multicast.mapping import SptMapping, dual_mappings
from controller.multicast.metrics import Metrics
from controller.multicast.planning import ALGOS, GroupRoute, PlanResult, make_planner, mapping_for, plan
from controller.multicast.tree import EntryChange, TreeRecord, port_tables
from controller.multicast.workload import GroupSpec, Workload, build_pattern, load_groups_file

__all__ = ["ALGOS", "CMR4LMS", "Change", "DualCMR4LMS", "DualChange", "EntryChange", "GroupRoute", "GroupSpec",
           "Hierarchy", "Metrics", "PlanResult", "SptMapping", "TreeRecord", "Workload", "build_pattern",
           "dual_mappings", "hierarchy_for", "load_groups_file", "make_planner", "mapping_for", "plan",
           "port_tables"]
