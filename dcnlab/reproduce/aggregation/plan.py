"""What ``dcnlab plan aggregation`` computes beside the planners of :mod:`dcnlab.controller.aggregation`: the
members drawn for ``random:COUNT``, a tree's parameters and the solver's status in the words of IRS/SRS (Guo et al.), and
the hop paths drawn on BCube."""

from __future__ import annotations

from collections.abc import Mapping

from dcnlab.topos.errors import UserError
from dcnlab.topos.numbers import parse_uint

MAX_MEMBERS = 100_000
"""Senders (and receivers) of one plan at most: a named tree costs about 0.2 ms per member (18 s at the
limit on BCube(2,20))."""


def member_list(fabric, text: str, what: str, rng, exclude: set[str]) -> list[str]:
    from dcnlab.controller.aggregation import member_role
    from dcnlab.topos.model import Role

    text = text.strip()
    if not text.startswith("random:"):
        names = [x.strip() for x in text.split(",") if x.strip()]
        if not names:
            raise UserError(f"--{what}: give names separated by commas, or random:COUNT")
        return names
    try:
        count = parse_uint(text.split(":", 1)[1])
    except ValueError:
        raise UserError(f"--{what} {text!r}: random:COUNT needs an integer count (ASCII digits), e.g. random:8") from None
    role = member_role(fabric)
    total = fabric.counts()[role]
    free = min(total - len(exclude), MAX_MEMBERS)
    if not 1 <= count <= free:
        raise UserError(f"--{what} random:{count}: valid: 1 <= COUNT <= {free:,} "
                        f"({total:,} {role.value}s, {len(exclude):,} taken, at most {MAX_MEMBERS:,} members)")
    picked: list[str] = []
    seen: set[str] = set()      # membership in a set: linear in COUNT (a list made the draw quadratic)
    name = fabric.host_name if role is Role.HOST else (lambda i: f"v{i}")
    while len(picked) < count:
        need = count - len(picked)
        for i in rng.choice(total, size=min(total, 2 * need + 8), replace=False).tolist():
            v = name(int(i))
            if v not in exclude and v not in seen:
                picked.append(v)
                seen.add(v)
                if len(picked) == count:
                    break
    return picked


def describe_info(info: Mapping[str, object]) -> list[str]:
    """The tree's parameters in the words of IRS/SRS (Guo et al.), §3.2: the routing symbol e_j is the label digit
    that stage j corrects on the way to stage j-1."""
    lines = []
    symbols = info.get("routing_symbols")
    if isinstance(symbols, dict) and symbols:
        stages = sorted(symbols, key=lambda e: -int(e[1:]))
        lines.append("routing symbols (label digit each stage corrects):")
        lines += [f"  stage {int(e[1:])} -> {int(e[1:]) - 1}: digit {symbols[e]} (e{e[1:]} = {symbols[e]})"
                  for e in stages]
    if "intra_stage" in info:
        lines.append(f"intra-stage step {'on' if info['intra_stage'] else 'off (003 Fig. 2(b))'}")
    if "seed" in info:
        lines.append(f"path draw seed {info['seed']}")
    if "status" in info:
        lines.append(solver_line(info))
    lines += [f"{k:<9} {v}" for k, v in info.items() if k not in ("routing_symbols", "intra_stage", "seed", *SOLVER_KEYS)]
    return lines


SOLVER_KEYS = ("status", "solve_seconds", "gap", "bound", "fallback", "why", "time_limit", "milp_cost")


def solver_line(info: Mapping[str, object]) -> str:
    """One line for the ``optimal`` tree: proven, the best found in the time limit with its gap, or the
    heuristic tree it fell back to and why."""
    def num(key: str) -> float:
        v = info.get(key)
        return float(v) if isinstance(v, (int, float)) else float("nan")

    if info["status"] == "optimal":
        return f"status    optimal (proven by HiGHS in {num('solve_seconds'):g} s)"
    gap = ("gap unknown (no lower bound by then)" if info.get("gap") is None
           else f"gap {100 * num('gap'):.1f}% (lower bound {num('bound'):g})")
    limit = f"time limit ({num('time_limit'):g} s)"
    if "fallback" not in info:
        return f"status    {limit}: the best tree HiGHS found, {gap}"
    why = info.get("why") or f"HiGHS's best tree cost {num('milp_cost'):g}"
    return (f"status    {limit}: no better tree from the MILP ({why}); this is {info['fallback']}, "
            f"the cheapest heuristic tree; {gap}")


def hop_path(fabric):
    from dcnlab.controller.aggregation import _bcube_hop
    from dcnlab.topos.bcube import BCube
    return _bcube_hop(fabric) if isinstance(fabric, BCube) else (lambda a, b: (a, b))
