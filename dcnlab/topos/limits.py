"""Size limits: what a command builds, bounded from a fabric's closed-form counts before it is built.

A fabric object is lazy (:mod:`dcnlab.topos.model`): its counts are formulas, so ``fattree:k=406`` or
``dragonfly:p=0,a=1000000000,h=1000000000`` cost nothing until someone enumerates them. Every
command that enumerates a fabric (emulation, export, planning) checks a :class:`SizeLimit` first
and refuses a larger fabric in one line that names the counts and the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from dcnlab.topos.errors import UserError
from dcnlab.topos.model import Fabric, Role


class TooLarge(UserError):
    """A request is larger than the command handles; the message names the size and the limit."""


@dataclass(frozen=True)
class SizeLimit:
    """At most ``switches`` forwarding nodes (switches and BCube servers), ``hosts`` hosts and
    ``elements`` nodes plus links; None leaves a count unbounded."""

    what: str
    """Who refuses and why, e.g. ``dcnlab run emulates``."""
    switches: int | None = None
    hosts: int | None = None
    elements: int | None = None

    def check(self, fabric: Fabric) -> None:
        """Raise :class:`TooLarge` when ``fabric`` exceeds the limit (arithmetic only; nothing is built)."""
        counts = fabric.counts()
        hosts = counts.get(Role.HOST, 0)
        switches = sum(counts.values()) - hosts
        size = f"{switches:,} switches and {hosts:,} hosts"
        if self.switches is not None and switches > self.switches:
            raise TooLarge(f"{fabric.spec} gives {size}; {self.what} at most {self.switches:,} switches "
                           f"(forwarding nodes)")
        if self.hosts is not None and hosts > self.hosts:
            raise TooLarge(f"{fabric.spec} gives {size}; {self.what} at most {self.hosts:,} hosts")
        if self.elements is not None:
            elements = switches + hosts + fabric.num_links()
            if elements > self.elements:
                raise TooLarge(f"{fabric.spec} gives {switches:,} switches, {hosts:,} hosts and "
                               f"{fabric.num_links():,} links; {self.what} at most {self.elements:,} nodes "
                               f"and links in all")
