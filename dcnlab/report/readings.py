"""Every paper's readings of its headlines that deviate (:mod:`dcnlab.results.readings`), by paper id: what
``dcnlab reproduce all`` runs after the reproductions."""

from __future__ import annotations

from collections.abc import Callable

from dcnlab.results.readings import Reading


def modules() -> dict[str, Callable[[bool, int], list[Reading]]]:
    """The per-paper ``readings`` functions, by paper id."""
    from dcnlab.reproduce.aggregation import readings_000, readings_003
    from dcnlab.reproduce.congestion import readings as readings_002
    from dcnlab.reproduce.multicast import readings as readings_001

    return {"000": readings_000.readings, "001": readings_001.readings, "002": readings_002.readings,
            "003": readings_003.readings}


def all_readings(quick: bool, workers: int) -> list[Reading]:
    """Every paper's readings, one paper after the other (each uses up to ``workers`` processes)."""
    out: list[Reading] = []
    for fn in modules().values():
        out.extend(fn(quick, workers))
    return out
