"""Which of 000's and 003's headlines depend on a reading: the committed sensitivity tables, read back.

``dcnlab reproduce search 000 003`` runs the pre-registered setting of each paper and every other admissible
reading, one setting at a time (:mod:`~.search_000`, :mod:`~.search_003`); the tables are committed in
``dcnlab/results/search_tables/``. A headline whose verdict under some reading differs from its verdict under the
pre-registered setting **depends on** that setting: :func:`mark` writes the setting into its ``depends_on`` (with
the readings that flip it and their figures in its ``reading``), and the report's rule
(:func:`dcnlab.results.summary.verdict`) then asks the verdict to hold at 3 seeds. The figure and the counts stay
the pre-registered setting's: no reading's figure replaces it. A figure ``not judged`` or ``not run`` under either
is no flip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dcnlab.results import sensitivity
from dcnlab.results.summary import Headline

PAPERS = ("000", "003")
SKIP = ("not run", "not judged")


def flips(data: Mapping[str, Any] | None) -> dict[str, list[dict[str, Any]]]:
    """statement -> the readings that flip its verdict (:func:`dcnlab.results.sensitivity.flips`)."""
    return sensitivity.flips(data)


def phrase(rows: Sequence[Mapping[str, Any]]) -> str:
    """``depends on irs-baseline (intra: unstable, 5.17)``: the settings and the readings that flip a verdict."""
    by: dict[str, list[str]] = {}
    for r in rows:
        fig = r["figure"]
        by.setdefault(r["setting"], []).append(
            f"{r['value']}: {r['verdict']}" + (f", {fig:.4g}" if isinstance(fig, (int, float)) else ""))
    return "; ".join(f"{name} ({', '.join(vals)})" for name, vals in by.items())


def mark(heads: Sequence[Headline], tables: Mapping[str, Mapping[str, Any] | None] | None = None) -> list[Headline]:
    """``heads`` with every headline of 000 and 003 that a reading flips marked ``depends_on`` and judged again by
    the report's rule (the committed tables, or ``tables``: paper -> a sensitivity run's JSON)."""
    from dcnlab.results.open_settings import stored_search

    found = {p: flips((tables or {}).get(p) if tables is not None else stored_search(p)) for p in PAPERS}
    out = []
    for h in heads:
        rows = found.get(h.seed, {}).get(h.statement)
        if not rows or h.model is None or h.model_verdict in SKIP:
            out.append(h)
            continue
        names = ", ".join(dict.fromkeys(r["setting"] for r in rows))
        text = f"depends on {phrase(rows)}; the figure and verdict are the pre-registered setting's"
        out.append(replace(h, depends_on=names, reading=(h.reading + "; " if h.reading else "") + text,
                           model_verdict=None, verdict="", stability=""))
    return out
