"""Completely independent spanning trees (CISTs) on Dragonfly, and broadcast that survives failures.

Paper: Bian, Cheng, Fan, Pan, "蜻蜓网络上完全独立生成树的构造算法" (Construction Algorithm of Completely Independent
Spanning Tree in Dragonfly Network), 计算机科学 (Computer Science), 2022, 49(11): 284-292
(:mod:`dcnlab.results.papers`, paper 004).

* :mod:`~dcnlab.controller.cist.graph` — the switch graph of a fabric (hosts excluded), with port numbers.
* :mod:`~dcnlab.controller.cist.partition` — CIST-partitions (Algorithms 1 and 2, corrected; label construction).
* :mod:`~dcnlab.controller.cist.trees` — trees from a partition (Algorithm 3 corrected, or the generic leaf rule).
* :mod:`~dcnlab.controller.cist.validate` — independent checks (Araki's partition conditions, Hasunuma's condition).
* :mod:`~dcnlab.controller.cist.plan` — fabric -> validated CISTs in one call.
* :mod:`~dcnlab.controller.cist.forwarding` — per-switch ``{in_port: out_ports}`` broadcast state per tree.
* :mod:`~dcnlab.controller.cist.failures` — which pairs a broadcast still reaches under failures; adversary; sweeps.
"""

from dcnlab.controller.cist.errors import CistError
from dcnlab.controller.cist.failures import (Attack, Delivery, Failures, SweepPoint, adversarial_failures, delivery,
                                      failure_sweep, intact_matrix, parse_failures, random_failures, single_tree)
from dcnlab.controller.cist.forwarding import all_broadcast_ports, broadcast_ports, tree_ports
from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.controller.cist.partition import (DragonflyPartition, absolute_partition, cist_partition, pair_partition,
                                       partition_from_names)
from dcnlab.controller.cist.plan import CistPlan, plan_cists, plan_from_partition
from dcnlab.controller.cist.trees import CistTree, build_trees
from dcnlab.controller.cist.validate import Validation, check_cists, check_partition, check_paths, check_trees

__all__ = ["Attack", "CistError", "CistPlan", "CistTree", "Delivery", "DragonflyPartition", "Failures",
           "SweepPoint", "SwitchGraph", "Validation", "absolute_partition", "adversarial_failures",
           "all_broadcast_ports", "broadcast_ports", "build_trees", "check_cists", "check_partition",
           "check_paths", "check_trees", "cist_partition", "delivery", "failure_sweep", "intact_matrix",
           "pair_partition", "parse_failures", "partition_from_names", "plan_cists", "plan_from_partition",
           "random_failures", "single_tree", "tree_ports"]
