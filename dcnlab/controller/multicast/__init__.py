"""Multicast with a limited multicast table: C-MR4LMS on fat-trees (Chen et al., paper 001; full reference in
:mod:`dcnlab.results.papers`), its baselines and metrics.

Modules, in dependency order:

* :mod:`~dcnlab.controller.multicast.hierarchy` — level model of the midplane tree and the k-ary fat-tree (keys,
  link ids, names, ports by label arithmetic);
* :mod:`~dcnlab.controller.multicast.mapping` — MGID → (color, TN), formulas (1)–(4);
* :mod:`~dcnlab.controller.multicast.spanning` — the C·m conflict-free spanning trees (Theorem 1);
* :mod:`~dcnlab.controller.multicast.tree` — incremental tree state, :class:`TreeRecord`, per-port replication tables;
* :mod:`~dcnlab.controller.multicast.cmr4lms` — Algorithms 1–3, fixed and dynamic, incremental join/leave;
* :mod:`~dcnlab.controller.multicast.dual` — fault-tolerant dual trees;
* :mod:`~dcnlab.controller.multicast.baselines` — OpenSM-like, global tree, MR4LMS-like;
* :mod:`~dcnlab.controller.multicast.layers`, :mod:`~dcnlab.controller.multicast.workload` — MGID layers and workloads;
* :mod:`~dcnlab.controller.multicast.allocation` — non-interfering job allocation (rules 1–7);
* :mod:`~dcnlab.controller.multicast.router`, :mod:`~dcnlab.controller.multicast.registry`,
  :mod:`~dcnlab.controller.multicast.validate` — the router interface, every algorithm by name (dcnlab's own,
  installed plug-ins, references) and the checks every routing passes;
* :mod:`~dcnlab.controller.multicast.metrics`, :mod:`~dcnlab.controller.multicast.planning` — EFI/TFI and whole-workload runs.

Data-plane use (:mod:`~dcnlab.controller.multicast.dataplane`): a controller keeps a :class:`CMR4LMS` (or :class:`DualCMR4LMS`) with
``track_entries=True`` and applies each :class:`Change`'s ``entries`` — ``(switch, ingress port, color) ->
out-ports`` in the fabric's port numbers — to the switches; :func:`port_tables` gives the full state.
"""

from dcnlab.controller.multicast.cmr4lms import CMR4LMS, Change
from dcnlab.controller.multicast.dual import DualChange, DualCMR4LMS
from dcnlab.controller.multicast.hierarchy import Hierarchy, hierarchy_for
from dcnlab.controller.multicast.mapping import SptMapping, dual_mappings
from dcnlab.controller.multicast.metrics import Metrics
from dcnlab.controller.multicast.planning import ALGOS, GroupRoute, PlanResult, make_planner, mapping_for, plan
from dcnlab.controller.multicast.router import Placement, Router, TreeRouter
from dcnlab.controller.multicast.tree import EntryChange, TreeRecord, port_tables
from dcnlab.controller.multicast.workload import GroupSpec, Workload, build_pattern, load_groups_file

__all__ = ["ALGOS", "CMR4LMS", "Placement", "Router", "TreeRouter", "Change", "DualCMR4LMS", "DualChange", "EntryChange", "GroupRoute", "GroupSpec",
           "Hierarchy", "Metrics", "PlanResult", "SptMapping", "TreeRecord", "Workload", "build_pattern",
           "dual_mappings", "hierarchy_for", "load_groups_file", "make_planner", "mapping_for", "plan",
           "port_tables"]
