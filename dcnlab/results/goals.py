"""How every benchmark line that judges says against what: ``ok (goal ...)`` or ``MISS (goal ...)``."""

from __future__ import annotations


def verdict(ok: bool, goal: str) -> str:
    """``ok (goal <= 10 s)`` or ``MISS (goal <= 10 s)``: a benchmark line that judges names what it judged
    against (``goal``: e.g. ``<= 10 s, <= 3 GiB``), so that a ``MISS`` needs no ``--help`` to be read."""
    return f"{'ok' if ok else 'MISS'} (goal {goal})"
