"""Every paper's readings of its headlines that deviate (:mod:`dcnlab.results.readings`), by paper id: what
``dcnlab reproduce all`` runs after the reproductions (each reproduction's
:meth:`~dcnlab.reproduce.protocol.Reproduction.readings`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dcnlab.reproduce import registry
from dcnlab.results.readings import Reading


def modules(names: Sequence[str] | None = None) -> dict[str, Callable[[bool, int], list[Reading]]]:
    """The per-paper ``readings`` functions of the reproductions ``names`` (default every one), by paper id, in the
    order of the ids."""
    found: dict[str, Callable[[bool, int], list[Reading]]] = {}
    for name in names if names is not None else registry.names():
        found.update(registry.get(name).readings())
    return dict(sorted(found.items()))


def all_readings(quick: bool, workers: int) -> list[Reading]:
    """Every paper's readings, one paper after the other (each uses up to ``workers`` processes)."""
    out: list[Reading] = []
    for fn in modules().values():
        out.extend(fn(quick, workers))
    return out
