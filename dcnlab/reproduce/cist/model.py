"""Dragonfly CISTs (Bian et al., 004) on the model backend (``dcnlab reproduce cist``; the paper has no experiments,
so this reproduces its
claims): for Dragonfly instances from D(4,2) to D(16,8), the k = ⌊a/2⌋ CISTs are built and validated, random
failures are swept (delivered fraction vs failed elements, CISTs vs a single BFS tree; nothing may be lost with
f <= k-1) and the adversary's k failures are costed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

MODEL_SPECS = ("dragonfly:p=1,a=4,h=2", "dragonfly:p=1,a=4,h=2,arrangement=absolute",
               "dragonfly:p=1,a=4,h=2,arrangement=circulant", "dragonfly:p=1,a=6,h=2", "dragonfly:p=1,a=8,h=4",
               "dragonfly:p=1,a=12,h=6", "dragonfly:p=1,a=16,h=8")


QUICK_MODEL_SPECS = MODEL_SPECS[:5]


SWEEP_EXTRA = 3
"""The random-failure sweep goes up to k + SWEEP_EXTRA failed elements."""


def model_cases(specs: Sequence[str], rounds: int, workers: int, seed: int, bar: Any,
                cluster: Any = None, algos: Sequence[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    """:func:`model_case` of every spec, in spec order. Locally one instance after another, each sweep on
    ``workers`` processes; on a Dask ``cluster`` (``--cluster``) one task per instance, as ``reproduce all``
    runs them (the rounds of one instance on one worker; the draws are seeded per round, so the results
    are the same either way). ``algos``: ``(name, reference)`` of user constructions run beside the paper's
    (a worker resolves the reference: :func:`dcnlab.controller.registry.portable`)."""
    more: tuple[Any, ...] = (None, tuple(algos)) if algos else ()
    if cluster is None:
        cases = []
        for spec in specs:
            def rounds_done(done: int, total: int, spec: str = spec) -> None:
                bar.set_postfix(f"{spec}: round {done}/{total}")

            cases.append(model_case(spec, rounds, workers, seed, rounds_done, *more[1:]))
            bar.update()
        return cases
    from dcnlab.sweep.pool import run_all

    def done(j: int, _: object) -> None:
        bar.update()
        bar.set_postfix(specs[-1 - j])

    # the largest instances are listed last: submit them first, and give the results back in spec order
    return run_all(model_case, [(s, rounds, 1, seed, *more) for s in reversed(specs)], cluster=cluster,
                   done=done)[::-1]


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
               algos: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """CISTs of one instance: construction, validation, random-failure sweep and the adversary's k failures;
    with ``algos`` the same for each user construction (its trees checked by ``check_trees`` first), under
    ``"algorithms"``."""
    import time

    from dcnlab.controller.cist import plan_cists, single_tree
    from dcnlab.topos.spec import parse_spec

    t0 = time.perf_counter()
    fabric = parse_spec(spec)
    plan = plan_cists(fabric)  # type: ignore[arg-type]
    built = time.perf_counter() - t0
    baseline = single_tree(plan.graph)
    scored = survival(plan.graph, plan.trees, plan.k, baseline, rounds, workers, seed, progress)
    case = {"spec": fabric.spec, "switches": len(plan.graph), "links": plan.graph.num_edges(), "k": plan.k,
            "diameters": plan.diameters, "valid": plan.validation.ok, "build_seconds": built,
            "baseline_diameter": baseline.diameter, "no_loss_below_k": scored["no_loss_below_k"],
            "sweep": scored["sweep"], "adversary": scored["adversary"]}
    if algos:
        from dcnlab.controller.cist.registry import get, plugin_trees
        case["algorithms"] = {}
        for name, ref in algos:
            t0 = time.perf_counter()
            trees = plugin_trees(get(ref), fabric, plan.graph)      # type: ignore[arg-type]
            seconds = time.perf_counter() - t0
            case["algorithms"][name] = {"k": len(trees), "diameters": [t.diameter for t in trees], "valid": True,
                                        "build_seconds": seconds,
                                        **survival(plan.graph, trees, len(trees), baseline, rounds, workers, seed)}
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


def model_lines(cases: list[dict[str, Any]]) -> list[str]:
    """:func:`model_table` as lines."""
    return model_table(cases).splitlines()


def model_table(cases: list[dict[str, Any]]) -> str:
    """The model table: one row per instance, the checks of Theorem 4 (valid CISTs, nothing lost with up to
    k - 1 random failures: both exact) and the adversary's k failures."""
    from dcnlab.controller.registry import short_name
    from dcnlab.results.tables import DEVIATES, REPRODUCED, Column
    from dcnlab.results.tables import table as format_table

    rows = []
    for c in cases:
        for name, r in (("", c), *c.get("algorithms", {}).items()):     # the paper's CISTs, then plug-ins'
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
