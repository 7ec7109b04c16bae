"""Which of 001's headlines a sensitivity reading flips, from the committed table of ``dcnlab reproduce search 001``
(:mod:`dcnlab.reproduce.multicast.search` runs it; :func:`dcnlab.reproduce.multicast.headlines.mark` marks the
headlines ``depends on <setting>``). Below both, so the headlines read a table without importing its run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dcnlab.results import sensitivity

SKIP = ("not run", "not judged")
"""Verdicts that are no verdict: a figure not run or not judged under a reading flips nothing."""


def flips(data: Mapping[str, Any] | None) -> dict[str, list[dict[str, Any]]]:
    """statement -> the readings that flip its verdict (:func:`dcnlab.results.sensitivity.flips`)."""
    return sensitivity.flips(data, spread=True)


def phrase(rows: Sequence[Mapping[str, Any]]) -> str:
    """``join-order (zyx: deviates, 2661)``: the settings and the readings that flip a verdict."""
    by: dict[str, list[str]] = {}
    for r in rows:
        fig = r["figure"]
        by.setdefault(str(r["setting"]), []).append(
            f"{r['value']}: {r['verdict']}" + (f", {fig:.4g}" if isinstance(fig, (int, float)) else ""))
    return "; ".join(f"{name} ({', '.join(vals)})" for name, vals in by.items())
