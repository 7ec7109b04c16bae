"""Dragonfly CISTs (Bian et al., 004) on the model backend (``dcnlab reproduce cist``; the paper has no experiments,
so this reproduces its claims).

* **Every instance** (Theorems 1-4: ⌊a/2⌋ CISTs of every D(p,a,h), each arrangement): the sweep a = 3..8, h = 1..3
  under the relative, absolute and circulant arrangements (:data:`SWEEP_SPECS`, 42 instances; the circulant
  arrangement exists for even h only, :data:`NOT_DRAGONFLIES`). p is not a size of the claim: the paper's graph
  D(p,a,h) has the switches as vertices (§1), so every p gives the same graph. Each instance is built by the
  paper's construction (corrected, :mod:`dcnlab.controller.cist`), checked by Araki's partition conditions and
  Hasunuma's condition (:func:`~dcnlab.controller.cist.check_cists`), and, up to :data:`PATHS_MAX_SWITCHES`
  switches, by the definition itself, pair by pair (:func:`~dcnlab.controller.cist.check_paths`). A construction
  that fails (``CistError``) is an instance that fails, not one left out.
* **Survival** (the CIST property under failures) on :data:`SURVIVAL_SPECS`, D(4,2) to D(16,8): random failures
  are swept (delivered fraction vs failed elements, CISTs vs a single BFS tree; nothing may be lost with
  f <= k-1) and the adversary's k failures are costed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

SURVIVAL_SPECS = ("dragonfly:p=1,a=4,h=2", "dragonfly:p=1,a=4,h=2,arrangement=absolute",
                  "dragonfly:p=1,a=4,h=2,arrangement=circulant", "dragonfly:p=1,a=6,h=2", "dragonfly:p=1,a=8,h=4",
                  "dragonfly:p=1,a=12,h=6", "dragonfly:p=1,a=16,h=8")
"""The instances whose broadcast survival is swept (``--quick``: the first five)."""
ARRANGEMENTS = ("relative", "absolute", "circulant")
SWEEP_A = tuple(range(3, 9))
SWEEP_H = (1, 2, 3)
SWEEP_SPECS = tuple(f"dragonfly:p=1,a={a},h={h},arrangement={arr}" for arr in ARRANGEMENTS for h in SWEEP_H
                    for a in SWEEP_A if not (arr == "circulant" and h % 2))
"""Every instance of the claim's sweep: a = 3..8, h = 1..3, each arrangement (circulant: even h)."""
NOT_DRAGONFLIES = tuple(f"dragonfly:p=1,a={a},h={h},arrangement=circulant" for h in SWEEP_H if h % 2
                        for a in SWEEP_A)
"""The circulant arrangement with odd h: Lemma 3 links ⌊h/2⌋ groups each way, h - 1 global links per switch, so
no D(p,a,h) has it (a condition the paper omits); not instances of the claim."""
PATHS_MAX_SWITCHES = 200
"""The definition check (every pair's tree paths disjoint, O(N³k)) runs up to this many switches: every instance of
the sweep (the largest, D(8,3), has 200)."""


def _canonical(spec: str) -> str:
    from dcnlab.topos.spec import parse_spec

    return parse_spec(spec).spec


def _with_sweep(first: Sequence[str]) -> tuple[str, ...]:
    seen = {_canonical(s) for s in first}
    return tuple(first) + tuple(s for s in SWEEP_SPECS if _canonical(s) not in seen)


MODEL_SPECS = _with_sweep(SURVIVAL_SPECS)
"""Every instance of the full run: the survival instances first, then the rest of the sweep."""
QUICK_MODEL_SPECS = _with_sweep(SURVIVAL_SPECS[:5])
"""``--quick``: the sweep and the first five survival instances."""


SWEEP_EXTRA = 3
"""The random-failure sweep goes up to k + SWEEP_EXTRA failed elements."""

Built = tuple[Any, "tuple[tuple[str, ...], ...] | None", Sequence[Any]]
"""What a construction gives: (switch graph, its parts as switch names or None, its trees)."""


def paper_trees(fabric: Any) -> Built:
    """The paper's construction (corrected): the CIST-partition of the arrangement, then Algorithm 3's trees.
    Raises :class:`~dcnlab.controller.cist.CistError` where the partition construction does not apply."""
    from dcnlab.controller.cist import SwitchGraph, build_trees, cist_partition

    graph = SwitchGraph.from_fabric(fabric)
    partition = cist_partition(fabric, graph)
    return graph, partition.names(), build_trees(partition, graph)


def survives(spec: str) -> bool:
    """Whether ``spec``'s broadcast survival is swept (one of :data:`SURVIVAL_SPECS`)."""
    return _canonical(spec) in {_canonical(s) for s in SURVIVAL_SPECS}


def survival(graph: Any, trees: Sequence[Any], k: int, baseline: Any, rounds: int, workers: int, seed: int,
             progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The broadcast survival of one construction's ``k`` trees against ``baseline`` (one BFS tree): the random
    failure sweep up to k + :data:`SWEEP_EXTRA` and the adversary's k switch (link) failures. The one scorer of
    the paper's CISTs and a plug-in's."""
    from dcnlab.controller.cist import adversarial_failures, delivery, failure_sweep

    sweep = failure_sweep(graph, trees, baseline, k + SWEEP_EXTRA, rounds=rounds, kind="mixed",
                          seed=seed, workers=workers, progress=progress)
    adversary = {}
    for kind in ("switch", "link"):
        attack = adversarial_failures(graph, trees, kind, seed=seed)  # type: ignore[arg-type]
        one = delivery(graph, [baseline], attack.failures)
        adversary[kind] = {"failed": sorted(str(attack.failures).split(",")), "cut_pair": list(attack.pair),
                           "pairs": attack.delivery.pairs, "cists_lost": attack.delivery.lost,
                           "single_lost": one.lost}
    return {"no_loss_below_k": all(p.cist_min == 1.0 for p in sweep if p.failures <= k - 1),
            "sweep": [{"failures": p.failures, "rounds": p.rounds, "cists_mean": p.cist_mean, "cists_min": p.cist_min,
                       "single_mean": p.single_mean, "single_min": p.single_min} for p in sweep],
            "adversary": adversary}


def model_case(spec: str, rounds: int, workers: int, seed: int = 0,
               progress: Callable[[int, int], None] | None = None,
               algos: Sequence[tuple[str, str]] = (), build: Callable[[Any], Built] | None = None) -> dict[str, Any]:
    """One instance: its construction (``build``, the paper's by default: :func:`paper_trees`; a falsifier passes
    a wrong one), the checks (k = ⌊a/2⌋, Araki and Hasunuma, the definition pair by pair up to
    :data:`PATHS_MAX_SWITCHES` switches), and for :data:`SURVIVAL_SPECS` the random-failure sweep and the
    adversary's k failures; with ``algos`` the same for each user construction (its trees checked by
    ``check_trees`` first), under ``"algorithms"``. A construction that raises ``CistError`` gives a record with
    ``valid`` false and the ``error``."""
    import time

    from dcnlab.controller.cist import CistError, check_cists, check_paths, single_tree
    from dcnlab.topos.spec import parse_spec

    fabric = parse_spec(spec)
    a, h = int(getattr(fabric, "a", 0)), int(getattr(fabric, "h", 0))
    case: dict[str, Any] = {"spec": fabric.spec, "a": a, "h": h, "arrangement": getattr(fabric, "arrangement", ""),
                            "expected_k": a // 2, "survival": survives(spec) and rounds > 0}
    t0 = time.perf_counter()
    try:
        graph, parts, trees = (build or paper_trees)(fabric)
    except CistError as e:
        from dcnlab.controller.cist import SwitchGraph

        graph = SwitchGraph.from_fabric(fabric)
        return case | {"switches": len(graph), "links": graph.num_edges(), "k": 0, "diameters": [], "valid": False,
                       "error": str(e), "build_seconds": time.perf_counter() - t0, "paths": None,
                       "no_loss_below_k": False if case["survival"] else None, "sweep": [], "adversary": {}}
    built = time.perf_counter() - t0
    edges = [t.edges for t in trees]
    nx_graph = graph.to_networkx()
    validation = check_cists(nx_graph, parts, edges)
    paths = check_paths(nx_graph, edges) if len(graph) <= PATHS_MAX_SWITCHES else None
    case |= {"switches": len(graph), "links": graph.num_edges(), "k": len(trees),
             "diameters": [t.diameter for t in trees],
             "valid": validation.ok and (paths is None or paths.ok), "error": "",
             "problems": list(validation.problems[:3]) + (list(paths.problems[:3]) if paths else []),
             "paths": None if paths is None else {"pairs": len(graph) * (len(graph) - 1) // 2, "ok": paths.ok},
             "build_seconds": built, "no_loss_below_k": None, "sweep": [], "adversary": {}}
    if not case["survival"]:
        return case
    baseline = single_tree(graph)
    scored = survival(graph, trees, len(trees), baseline, rounds, workers, seed, progress)
    case |= {"baseline_diameter": baseline.diameter, "no_loss_below_k": scored["no_loss_below_k"],
             "sweep": scored["sweep"], "adversary": scored["adversary"]}
    if algos:
        from dcnlab.controller.cist.registry import get, plugin_trees
        case["algorithms"] = {}
        for name, ref in algos:
            t0 = time.perf_counter()
            mine = plugin_trees(get(ref), fabric, graph)      # type: ignore[arg-type]
            seconds = time.perf_counter() - t0
            case["algorithms"][name] = {"k": len(mine), "diameters": [t.diameter for t in mine], "valid": True,
                                        "build_seconds": seconds,
                                        **survival(graph, mine, len(mine), baseline, rounds, workers, seed)}
    return case


def short_spec(spec: str) -> str:
    """``dragonfly:p=1,a=4,h=2,arrangement=absolute`` as ``D(1,4,2) absolute`` (the paper's D(p,a,h))."""
    params = dict(kv.split("=", 1) for kv in spec.removeprefix("dragonfly:").split(",") if "=" in kv)
    return f"D({params.get('p', '?')},{params.get('a', '?')},{params.get('h', '?')}) " \
           f"{params.get('arrangement', 'relative')}"


def _lost_share(attack: dict[str, Any]) -> str:
    """``CISTs/single`` percent of the pairs an adversary's failures cut."""
    pairs = max(int(attack["pairs"]), 1)
    return f"{100 * attack['cists_lost'] / pairs:.1f}/{100 * attack['single_lost'] / pairs:.1f}"


REASONS = {("relative", 1): "part t contracts to the circulant graph on Z_(a+1) with jumps ±(t+1): disconnected "
                            "when gcd(a+1, t+1) > 1 for some t < ⌊a/2⌋ (a+1 not prime, a >= 4)",
           ("absolute", 1): "the absolute partition (our label construction: the paper's Algorithm 2 cannot be "
                            "recovered from its text) leaves a part disconnected"}
"""Why a construction fails where it does (:mod:`dcnlab.controller.cist.partition`)."""


def omitted_conditions(cases: Sequence[Mapping[str, Any]]) -> list[str]:
    """The conditions the paper omits, as the sweep found them: the failing instances grouped by arrangement
    and h (with the reason where it is known), and the circulant arrangement's even h."""
    failed: dict[tuple[str, int], list[int]] = {}
    for c in cases:
        if not (c["valid"] and c["k"] == c["expected_k"]):
            failed.setdefault((c["arrangement"], c["h"]), []).append(c["a"])
    out = [f"{arr}, h = {h}: a = {', '.join(map(str, sorted(a_s)))} fail" + (f" ({REASONS[(arr, h)]})"
                                                                             if (arr, h) in REASONS else "")
           for (arr, h), a_s in sorted(failed.items())]
    return out + ["circulant: needs an even h (Lemma 3 links ⌊h/2⌋ groups each way: with odd h a switch has h - 1 "
                  "global links, and no D(p,a,h) has that arrangement)"]


def instances_table(cases: Sequence[Mapping[str, Any]]) -> str:
    """Every instance of the sweep as a grid: per arrangement and h, the trees built and checked at each a
    (``k✓``), or ``FAIL``; ``–`` where the arrangement does not exist."""
    from dcnlab.results.tables import Column
    from dcnlab.results.tables import table as format_table

    by = {(c["arrangement"], c["h"], c["a"]): c for c in cases}
    rows = []
    for arr in ARRANGEMENTS:
        for h in SWEEP_H:
            cells = []
            for a in SWEEP_A:
                c = by.get((arr, h, a))
                cells.append("–" if c is None else f"{c['k']}✓" + ("p" if c.get("paths") else "")
                             if c["valid"] and c["k"] == c["expected_k"] else "FAIL" if c else "–")
            rows.append((f"{arr}, h = {h}", *cells))
    held = [c for c in cases if c["valid"] and c["k"] == c["expected_k"]]
    return format_table(
        [Column("arrangement, h", "global links")] + [Column(f"a={a}", "k", ">") for a in SWEEP_A], rows,
        title=f"Bian et al., Theorems 1-4 on every instance: ⌊a/2⌋ CISTs built and checked on {len(held)} of "
              f"{len(cases)} instances",
        notes=["k✓: ⌊a/2⌋ trees built, spanning, completely independent (Araki's partition and Hasunuma's "
               "condition checked); p: also the definition, every pair's tree paths disjoint (up to "
               f"{PATHS_MAX_SWITCHES} switches); FAIL: the construction fails or a check does; –: no such "
               "Dragonfly (circulant needs an even h).", *omitted_conditions(cases)])


def model_lines(cases: list[dict[str, Any]]) -> list[str]:
    """:func:`instances_table` and :func:`model_table` as lines."""
    return instances_table(cases).splitlines() + [""] + model_table(cases).splitlines()


def model_table(cases: list[dict[str, Any]]) -> str:
    """The survival table: one row per survival instance (:data:`SURVIVAL_SPECS`), the checks of Theorem 4
    (valid CISTs, nothing lost with up to k - 1 random failures: both exact) and the adversary's k failures."""
    from dcnlab.controller.registry import short_name
    from dcnlab.results.tables import DEVIATES, REPRODUCED, Column
    from dcnlab.results.tables import table as format_table

    rows = []
    for c in (c for c in cases if c.get("survival")):
        for name, r in (("", c), *c.get("algorithms", {}).items()):     # the paper's CISTs, then plug-ins'
            if not r.get("adversary"):
                rows.append((short_spec(c["spec"]), f"{c['switches']:,}", r["k"], "", "", "", "",
                             f"{DEVIATES} (construction fails)"))
                continue
            sw, ln = r["adversary"]["switch"], r["adversary"]["link"]
            lost = "0" if r["no_loss_below_k"] else "SOME"
            why = ", ".join(w for w, bad in (("invalid", not r["valid"]), ("lost", not r["no_loss_below_k"])) if bad)
            rows.append((short_spec(c["spec"]) + (f" [plug-in {short_name(name)}]" if name else ""),
                         f"{c['switches']:,}",
                         r["k"], ", ".join(map(str, r["diameters"])), lost, _lost_share(sw), _lost_share(ln),
                         (f"{DEVIATES} ({why})" if why else REPRODUCED) if not name else
                         ("holds" if not why else f"fails ({why})")))
    table = format_table(
        [Column("Dragonfly"), Column("switches", "count", ">"), Column("k", "trees", ">"),
         Column("diameters", "hops", wrap=True, min_width=9), Column("f<k lost", "pairs", ">"),
         Column("adv. switch", "% lost", ">"), Column("adv. link", "% lost", ">"),
         Column("verdict", "exact")], rows,
        title="Bian et al. (CISTs on Dragonfly), Theorem 4 (the paper has no experiments): k = floor(a/2) CISTs; "
              "nothing lost with up to k - 1 failed switches or links",
        notes=["f<k lost: switch pairs lost in the random sweep with at most k - 1 failures (Theorem 4: 0); "
               "adv.: an adversary fails k switches (links); the share of pairs lost by the k CISTs / by one BFS "
               "tree; verdict (exact): reproduced when the trees are valid CISTs (checked) and 0 pairs are lost.",
               *(["[plug-in A]: a user's construction (--algo A) on the same instance, draws and baseline; its "
                  "trees passed check_trees; k = its tree count; 'holds': Theorem 4's guarantee holds for them"]
                 if any(c.get("algorithms") for c in cases) else [])])
    return table
