"""Which headlines a sensitivity reading flips, read from a committed sensitivity table
(``dcnlab reproduce search``: the pre-registered setting, then each other reading one setting at a time).
Shared by every reproduction that marks its headlines ``depends on <setting>``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SKIP = ("not run", "not judged")
"""Verdicts that are no verdict: a figure not run or not judged under a reading flips nothing."""


def flips(data: Mapping[str, Any] | None, spread: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Statement -> the readings under which its verdict differs from the pre-registered setting's, each
    ``{"setting", "value", "verdict", "figure", "base"}`` (and ``"spread"`` when ``spread``), from a table whose
    candidates differ from the pre-registered one in one setting (empty for a table that is no sensitivity run)."""
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
            row = {"setting": changed[0], "value": c["setting"][changed[0]], "verdict": s["verdict"],
                   "figure": s["median"]}
            if spread:
                row["spread"] = s.get("spread")
            row["base"] = b["verdict"]
            out.setdefault(s["statement"], []).append(row)
    return out
