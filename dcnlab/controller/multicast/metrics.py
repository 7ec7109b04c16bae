"""Metrics of a multicast routing (C-MR4LMS (Chen et al.), Definitions 5-6): EFI, TFI, groups after merging, table
entries, time.

* **EFI(link)** (Def. 5) = the number of multicast groups whose packets cross the link.  **Decision** on
  the paper's ambiguity (it does not say whether merged groups count per group or per tree): a tree shared by n
  merged groups carries the packets of
  all n, so it adds n to each of its links (this is why merging raises EFI, as the paper says).  EFI is
  taken over switch-to-switch links; the paper's analysis ignores terminal links, and a terminal link's
  EFI is just how many groups the terminal hears (reported separately as ``terminal_efi_max``).
  ``efi_avg`` averages over the switch-to-switch links that carry at least one group: averaging over
  every link of the fabric would mostly measure the fabric's size (the paper instance has 49,152 L2–L3
  links, most of them unused by any pattern).  ``efi_avg_all`` gives that other average too.
* **TFI(tree)** (Def. 6) = the number of groups using the tree; ``trees`` is the number of groups left
  after merging (distinct trees).  In dual mode both are taken over the first tree plane (the second
  plane merges the same way), while EFI and table entries count the trees of both planes.
* **Table entries per port**: the number of colors (distinct replication entries) a switch port holds;
  a switch-to-switch link gives one entry on each of its two ports, a terminal link one on the L0 port.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.tree import TreeRecord


@dataclass(frozen=True)
class Metrics:
    groups: int
    refused: int
    trees: int
    efi_max: int
    efi_avg: float
    efi_avg_all: float
    terminal_efi_max: int
    tfi_max: int
    tfi_avg: float
    entries_per_port_max: int
    entries_per_port_avg: float
    seconds: float
    """Wall-clock route computation."""
    cpu_seconds: float = 0.0
    """CPU time of the same (the machine may be busy with other work)."""

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


DENSE_ENTRIES = 1 << 26
"""Up to this many (link, color) cells the table entries are counted in a presence table (one byte a cell)."""


def compute(h: Hierarchy, trees: Sequence[TreeRecord], refused: int, seconds: float,
            colors: int, cpu_seconds: float = 0.0) -> Metrics:
    """Metrics of ``trees`` on ``h`` (``colors`` bounds the color values, e.g. C or the OpenSM table size)."""
    primary = [t for t in trees if t.plane == 0]
    groups = len({g for t in primary for g in t.groups})
    if not trees:
        return Metrics(groups, refused, 0, 0, 0.0, 0.0, 0, 0, 0.0, 0, 0.0, seconds, cpu_seconds)
    sizes = np.fromiter((len(t.links) for t in trees), dtype=np.int64, count=len(trees))
    links = np.fromiter((lk for t in trees for lk in t.links), dtype=np.int64, count=int(sizes.sum()))
    weights = np.repeat(np.fromiter((t.tfi for t in trees), dtype=np.int64, count=len(trees)), sizes)
    tcolors = np.repeat(np.fromiter((t.color for t in trees), dtype=np.int64, count=len(trees)), sizes)
    efi = np.bincount(links, weights=weights, minlength=h.num_links)
    sw = efi[h.num_hosts:]
    used = sw[sw > 0]
    if h.num_links * colors <= DENSE_ENTRIES:     # distinct (link, color) pairs: a presence table, no sort
        seen = np.zeros(h.num_links * colors, bool)
        seen[links * colors + tcolors] = True
        entries = seen.reshape(h.num_links, colors).sum(axis=1)
    else:
        entries = np.bincount(np.unique(links * colors + tcolors) // colors, minlength=h.num_links)
    term_e, sw_e = entries[:h.num_hosts], entries[h.num_hosts:]
    n_ports = int((term_e > 0).sum()) + 2 * int((sw_e > 0).sum())
    tfi = np.fromiter((t.tfi for t in primary), dtype=np.int64, count=len(primary))
    return Metrics(
        groups=groups, refused=refused, trees=len(primary),
        efi_max=int(sw.max()) if sw.size else 0,
        efi_avg=float(used.mean()) if used.size else 0.0,
        efi_avg_all=float(sw.mean()) if sw.size else 0.0,
        terminal_efi_max=int(efi[:h.num_hosts].max()),
        tfi_max=int(tfi.max()) if tfi.size else 0,
        tfi_avg=float(tfi.mean()) if tfi.size else 0.0,
        entries_per_port_max=int(entries.max()),
        entries_per_port_avg=(int(term_e.sum()) + 2 * int(sw_e.sum())) / n_ports if n_ports else 0.0,
        seconds=seconds, cpu_seconds=cpu_seconds)
