"""Pure-data fabric models: BCube, k-ary fat-tree, the C-MR4LMS midplane tree and Dragonfly.

No Mininet and no I/O here; everything is derived from fabric parameters and labels.
"""

from topos.bcube import BCube
from topos.dragonfly import Dragonfly
from topos.errors import SpecError
from topos.fattree import FatTree
from topos.midplane import Midplane
from topos.model import Fabric, HostInfo, Link, MaterializedFabric, Node, Role
from topos.spec import KINDS, parse_spec

__all__ = ["BCube", "Dragonfly", "Fabric", "FatTree", "HostInfo", "KINDS", "Link", "MaterializedFabric",
           "Midplane", "Node", "Role", "SpecError", "parse_spec"]
