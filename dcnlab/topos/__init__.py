"""Pure-data fabric models: BCube, k-ary fat-tree, the C-MR4LMS midplane tree and Dragonfly.

No Mininet and no I/O here; everything is derived from fabric parameters and labels.
"""

from dcnlab.topos.bcube import BCube
from dcnlab.topos.dragonfly import Dragonfly
from dcnlab.topos.errors import SpecError
from dcnlab.topos.fattree import FatTree
from dcnlab.topos.midplane import Midplane
from dcnlab.topos.model import Fabric, HostInfo, Link, MaterializedFabric, Node, Role
from dcnlab.topos.spec import KINDS, parse_spec

__all__ = ["BCube", "Dragonfly", "Fabric", "FatTree", "HostInfo", "KINDS", "Link", "MaterializedFabric",
           "Midplane", "Node", "Role", "SpecError", "parse_spec"]
