"""Which of 001's headlines a sensitivity reading flips, from the committed table of ``dcnlab reproduce search 001``
(:mod:`dcnlab.reproduce.multicast.search` runs it; :func:`dcnlab.reproduce.multicast.headlines.mark` marks the
headlines ``depends on <setting>``). Below both, so the headlines read a table without importing its run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SKIP = ("not run", "not judged")
"""Verdicts that are no verdict: a figure not run or not judged under a reading flips nothing."""


def flips(data: Mapping[str, Any] | None) -> dict[str, list[dict[str, Any]]]:
    """Statement -> the sensitivity readings under which its verdict differs from the pre-registered setting's,
    each ``{"setting", "value", "verdict", "figure", "spread", "base"}``, from a sensitivity run's table (empty for
    a table that is no sensitivity run). A figure not run or not judged under either is no flip."""
    if not data or not data.get("preregistered"):
        return {}
    chosen = data["chosen"]
    base = next((c for c in data["candidates"] if c["setting"] == chosen), None)
    if base is None:
        return {}
    pre = {s["statement"]: s for s in base["statements"]}
    out: dict[str, list[dict[str, Any]]] = {}
    for c in data["candidates"]:
        changed = [k for k, v in c["setting"].items() if chosen.get(k) != v]
        if len(changed) != 1:
            continue
        for s in c["statements"]:
            b = pre.get(s["statement"])
            if b is None or s["verdict"] in SKIP or b["verdict"] in SKIP or s["verdict"] == b["verdict"]:
                continue
            out.setdefault(s["statement"], []).append(
                {"setting": changed[0], "value": c["setting"][changed[0]], "verdict": s["verdict"],
                 "figure": s["median"], "spread": s.get("spread"), "base": b["verdict"]})
    return out


def phrase(rows: Sequence[Mapping[str, Any]]) -> str:
    """``join-order (zyx: deviates, 2661)``: the settings and the readings that flip a verdict."""
    by: dict[str, list[str]] = {}
    for r in rows:
        fig = r["figure"]
        by.setdefault(str(r["setting"]), []).append(
            f"{r['value']}: {r['verdict']}" + (f", {fig:.4g}" if isinstance(fig, (int, float)) else ""))
    return "; ".join(f"{name} ({', '.join(vals)})" for name, vals in by.items())
