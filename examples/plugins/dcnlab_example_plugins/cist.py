"""A CIST construction: two of the paper's trees only, a cheaper broadcast that still survives one failure."""

from __future__ import annotations


def two_trees(fabric, graph):
    """The first two of the paper's k CISTs (Bian et al.'s partition, generic leaves): fewer trees to install in
    every switch, at the price of Theorem 4's guarantee beyond one failed switch or link (any two of k
    completely independent spanning trees are completely independent)."""
    from dcnlab.controller.cist import plan_cists

    return [list(t.edges) for t in plan_cists(fabric).trees[:2]]
