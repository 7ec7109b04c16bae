"""IRS/SRS shuffles (Guo et al., 003) and M2 incasts (Fang et al., 000) against ``reproduce aggregation``: their
headline figures, each against ours, judged by the verdict rule of :mod:`dcnlab.results.summary`.

The figures and statements are the papers' own (abstracts and §5 of each). The builder reads what the
reproduction already computed (the JSON-able results it writes) and returns
:class:`dcnlab.results.summary.Headline` records, one per headline of the paper; a headline that the run
did not compute (a part left out by ``--only``, a quick run, a figure no command measures yet) is still
there, with no figure of ours and the reason in its ``reading``. ``emulation`` arguments are the BMv2
experiment's JSON (its ``to_json()`` / ``summary()``), or None when BMv2 did not run; a headline gets a BMv2
figure only where the emulated experiment measures the same quantity.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from dcnlab.results.summary import Headline, missing
from dcnlab.results.summary import mean_of as _mean

PAPERS_SCHEMES = frozenset({"m2", "irs", "mib", "mc", "unicast", "none", "kmb", "irs-nointra", "optimal",
                            "srs", "incast"})
"""The schemes a headline compares: the papers' (and the baselines they name). A user's ``--algo`` builder runs
beside them with rows of its own and never enters a headline's figure."""

# -- 003 and 000: reproduce aggregation ------------------------------------------------------------------------

SENDERS_41 = ("v2", "v5", "v9", "v10", "v11", "v14")
"""003 Fig. 2 and 3: the senders of the worked example on BCube(4,1)."""
WORKED_TREES = (("v0", False, 16, 12, "receiver v0, no intra-stage step (Fig. 2(b))"),
                ("v0", True, 14, 11, "receiver v0, intra-stage step (Fig. 2(c))"),
                ("v3", True, 14, 11, "receiver v3 (Fig. 3(a))"),
                ("v8", True, 12, 9, "receiver v8 (Fig. 3(b))"))
WORKED_ENTRY = (("v0", "v3", "v8"), (46, 48, 42))


@lru_cache(maxsize=1)
def bcube41_examples() -> dict[str, Any]:
    """The worked trees of Guo et al., §3.2-3.3 (Figs. 2 and 3) on BCube(4,1): cost and links of each IRS tree and the
    SRS entry costs of the shuffle to {v0, v3, v8}. About a second (imports included)."""
    from dcnlab.controller import aggregation as agg
    from dcnlab.topos.spec import parse_spec

    fabric = parse_spec("bcube:n=4,k=1")
    trees = []
    for receiver, intra, _, _, _ in WORKED_TREES:
        t = agg.incast_tree(fabric, receiver, list(SENDERS_41), "irs", 0.0, 0, intra_stage=intra)
        trees.append({"receiver": receiver, "intra_stage": intra, "cost": float(t.cost), "links": int(t.links)})
    plan = agg.shuffle_plan(fabric, list(WORKED_ENTRY[0]), list(SENDERS_41), "srs", 0.0, 0, 300.0)
    entries = [list(map(float, g.entry_costs)) for g in plan.groups if len(g.entry_costs) == 3]
    return {"trees": trees, "entry_costs": entries[0] if entries else None}


def _saving_points(res: Mapping[str, Any]) -> str:
    pts = list(res["points"])
    return f"{pts[0]}..{pts[-1]} ({len(pts)} points)" if len(pts) > 1 else f"{pts[0]} (1 point)"


def aggregation(results: Mapping[str, Any] | None, emulation: Mapping[str, Any] | None = None,
                worked: Mapping[str, Any] | None = None, why: str = "") -> list[Headline]:
    """The headlines of Guo et al. (003) and Fang et al. (000) from ``reproduce aggregation``'s results (``aggregation.json``'s ``results``)."""
    res = results or {}
    out: list[Headline] = []

    def part(name: str) -> Mapping[str, Any] | None:
        return res.get(name)

    not_run = why or "the model was not run"

    def absent(name: str) -> str:
        return f"part {name} not run" + (f" ({why})" if why else "")

    # 003 Table 1 / Fig. 4(a): 60x60 shuffles on BCube(6,k)
    names = {"srs": "SRS", "incast": "incast-based", "kmb": "Steiner-based (KMB)", "unicast": "unicast-based"}
    for key, paper_part, where, plot in (
            ("003-k", "003-k", "60×60 shuffles, BCube(6,k), k = 2..8 (Fig. 4(a), Table 1)", "003-k-saving.png"),
            ("003-size", "003-size", "m = n = 50..1500, BCube(8,5) (Fig. 5)", "003-size-saving.png")):
        p = part(key)
        for m, label in names.items():
            h = Headline("003", f"{label} saves {PAPER_003[paper_part][m]:g}% vs no aggregation: {where}",
                         PAPER_003[paper_part][m],
                         p["overall"][m] if p else None, unit="%", kind="percent", plot=plot if p else None)
            if p:
                how = (p.get("setting") or {}).get("size-average", "plain") if key == "003-size" else "plain"
                h.reading = (f"saving = 1 - traffic / traffic without aggregation per round, averaged over "
                             f"{p.get('rounds', '?')} round(s) per point, then "
                             + {"plain": "plainly", "by-members": "weighted by m + n",
                                "by-traffic": "pooled (1 - sum of traffic / sum without aggregation)"}[how]
                             + f" over {'k' if key == '003-k' else 'm = n'} = {_saving_points(p)}"
                             + (f"; Steiner-based trees: {p['setting']['steiner-baseline']}"
                                if m == "kmb" and p.get("setting") else ""))
            out.append(missing(h, absent(key)))
    p = part("003-delta")
    for size, paper in ((250, 28.78), (1000, 45.05)):
        pts = (p or {}).get("points", {})
        value = p["overall"].get(f"srs@{size}") if p else None
        h = Headline("003", f"SRS saves {paper:g}% with δ uniform on [0,1]: m = n = {size}, BCube(8,5) "
                            f"(Fig. 6({'a' if size == 250 else 'b'}))", paper, value, unit="%", kind="percent",
                     plot=f"003-delta-{size}.png" if str(size) in pts else None)
        if value is not None:
            vs_srs = (p.get("setting") or {}).get("delta-reading") == "vs-srs-no-agg"
            h.reading = (f"saving curve over δ = 0, 0.05, ..., 1 (mean of {p.get('rounds', '?')} round(s) per δ), "
                         f"averaged over δ by the trapezoid rule (δ uniform on [0,1])"
                         + ("; the saving against SRS without aggregation (δ = 1, Fig. 7's baseline)" if vs_srs
                            else ""))
        out.append(missing(h, absent("003-delta") if p is None else f"m = n = {size} not in this run's points"))
    out += _trends_003(part("003-k"), part("003-size"), part("003-delta"), absent)
    out += _worked_003(worked, not_run)
    out += _bloom_003()
    out += _headlines_000(part("000-k"), part("000-size"), emulation, absent)
    return out


PAPER_003 = {"003-k": {"srs": 32.87, "incast": 32.69, "kmb": 28.76, "unicast": 17.64},
             "003-size": {"srs": 55.33, "incast": 55.29, "kmb": 44.89, "unicast": 34.46}}
"""Guo et al., §5.2-5.3: average traffic saving against no aggregation, percent (also in aggregation_model.PAPER)."""


def _ends(p: Mapping[str, Any] | None, var: str) -> str:
    """The last point run minus the first, named by what ran (``k=8 minus k=2``): a difference's unit."""
    keys = list((p or {}).get("points", {}))
    return f"{var}={keys[-1]} minus {var}={keys[0]}" if len(keys) > 1 else f"largest {var} minus smallest"


def _span(p: Mapping[str, Any] | None, var: str) -> str:
    """The points run (``k = 2..8``)."""
    keys = list((p or {}).get("points", {}))
    return f"{var} = {keys[0]}..{keys[-1]}" if len(keys) > 1 else f"{var} = {keys[0]}" if keys else f"every {var}"


def _points(p: Mapping[str, Any] | None, key: str, method: str) -> list[float]:
    if not p:
        return []
    return [v[key][method] for v in p["points"].values() if method in v.get(key, {})]


def _trends_003(pk: Mapping[str, Any] | None, ps: Mapping[str, Any] | None, pd: Mapping[str, Any] | None,
                absent: Any) -> list[Headline]:
    out = []

    def ratio_of_means(p: Mapping[str, Any] | None, key: str, a: str, b: str) -> float | None:
        xa, xb = _mean(_points(p, key, a)), _mean(_points(p, key, b))
        return xa / xb if xa is not None and xb else None

    for key, fig in (("links", "4(b)"), ("aggregators", "4(c)")):
        v = ratio_of_means(pk, key, "srs", "incast")
        h = Headline("003", f"SRS uses fewer {key} than incast-based on BCube(6,k) (Fig. {fig})", None, v,
                     unit="SRS / incast", kind="trend", direction="down", reference=1.0, paper_text="fewer",
                     plot=f"003-k-{key}.png" if v is not None else None,
                     reading=f"mean {key} of SRS over the mean of incast-based, {_span(pk, 'k')}")
        out.append(missing(h, absent("003-k")))
    for method, direction, word in (("incast", "up", "more"), ("unicast", "down", "fewer")):
        xs = _points(pk, "aggregators", method)
        v = xs[-1] - xs[0] if len(xs) > 1 else None
        h = Headline("003", f"As k grows, {method}-based uses {word} aggregating servers (Fig. 4(c))", None, v,
                     unit=f"servers, {_ends(pk, 'k')}", kind="trend", direction=direction, reference=0.0,
                     paper_text=word, plot="003-k-aggregators.png" if v is not None else None,
                     reading="aggregating servers at the largest k minus at the smallest")
        out.append(missing(h, absent("003-k")))
    v = ratio_of_means(pk, "receiver_input", "srs", "none")
    h = Headline("003", "SRS cuts the input size at each receiver (Fig. 4(d))", None, v,
                 unit="SRS / no aggregation", kind="trend", direction="down", reference=1.0, paper_text="smaller",
                 plot="003-k-receiver_input.png" if v is not None else None,
                 reading=f"mean receiver input of SRS over that without aggregation, {_span(pk, 'k')}")
    out.append(missing(h, absent("003-k")))
    v = ratio_of_means(pk, "aggregators", "kmb", "srs")
    h = Headline("003", "Steiner-based uses fewer aggregating servers than SRS (§6)", None, v,
                 unit="Steiner / SRS", kind="trend", direction="down", reference=1.0, paper_text="fewer",
                 plot="003-k-aggregators.png" if v is not None else None,
                 reading=f"mean aggregators of KMB trees over those of SRS, {_span(pk, 'k')}")
    out.append(missing(h, absent("003-k")))
    xs = [v["saving"]["srs"] for v in ps["points"].values()] if ps else []
    v = xs[-1] - xs[0] if len(xs) > 1 else None
    h = Headline("003", "The savings grow with m = n on BCube(8,5) (Fig. 5)", None, v,
                 unit=f"points, {_ends(ps, 'm=n')}",
                 kind="trend", direction="up", reference=0.0, paper_text="grow",
                 plot="003-size-saving.png" if v is not None else None,
                 reading="SRS saving at the largest m = n minus at the smallest")
    out.append(missing(h, absent("003-size") if ps is None else "one point only"))
    worst, above = None, []
    if pd:
        for size, pt in pd["points"].items():
            tr, deltas = pt["traffic"], pt["deltas"]
            cross = None
            for i in range(len(tr["srs"])):
                base = min(tr["unicast"][i], tr["none"][i])
                if base > 0:
                    worst = max(worst or 0.0, tr["srs"][i] / base)
                    if tr["srs"][i] >= base and cross is None:
                        cross = deltas[i]
            if cross is not None:
                above.append(f"m = n = {size} from δ = {cross:g}")
    h = Headline("003", "SRS traffic stays below unicast and no aggregation for every δ (Fig. 6)", None, worst,
                 unit="max SRS / min(others)", kind="trend", direction="down", reference=1.0, paper_text="below",
                 plot="003-delta-250.png" if worst is not None else None,
                 reading="largest ratio over δ = 0, 0.05, ..., 1 of SRS traffic to the lower of unicast and no "
                         "aggregation; " + ("SRS at or above it " + ", ".join(above) if above else "below everywhere"))
    out.append(missing(h, absent("003-delta")))
    return out


def _bloom_003() -> list[Headline]:
    """003 Table 2: formula (3)'s filter sizes, and a Monte Carlo of the false forwards they allow."""
    from dcnlab.controller.aggregation.bloom import (
        min_bits,
        min_bits_measured,
        simulate_false_forwards,
    )

    out = []
    for k, paper in ((3, 19), (4, 38), (7, 102)):
        bits = min_bits(k)
        at, need = simulate_false_forwards(k, bits), min_bits_measured(k)
        out.append(Headline("003", f"In-packet Bloom filter needs {paper} bits on BCube(6,{k}) (Table 2, formula (3))",
                            paper, bits, unit="bits", kind="count",
                            reading=f"formula (3), m >= 2(k+1) log_0.6185(2/(k(k-1))); dcnlab forwards on tree "
                                    f"tables, so this is a model: a Monte Carlo of an ideal filter with {at.hashes} "
                                    f"hash functions ({at.packets} packets) gives {at.false_forwards:.3f} false "
                                    f"forwards per packet at {bits} bits (formula (2): {at.formula:.3f}), and "
                                    f"{need.false_forwards:.3f} at {need.bits} bits, the fewest that stay below 1 "
                                    f"(dcnlab.controller.aggregation.bloom)"))
    return out


def _worked_003(worked: Mapping[str, Any] | None, why: str) -> list[Headline]:
    out = []
    trees = (worked or {}).get("trees") or []
    for i, (_, _, cost, links, where) in enumerate(WORKED_TREES):
        t = trees[i] if i < len(trees) else None
        h = Headline("003", f"IRS tree costs {cost}: {where}, BCube(4,1), senders v2 v5 v9 v10 v11 v14", cost,
                     t["cost"] if t else None, unit="link units", kind="count",
                     reading=(f"dcnlab's IRS tree: cost {t['cost']:g}, {t['links']} links (paper {cost}/{links})"
                              if t else ""))
        out.append(missing(h, f"not run ({why})"))
    entries = (worked or {}).get("entry_costs")
    h = Headline("003", "SRS enters the shuffle to {v0, v3, v8} at v8, cost 42 (v0/v3/v8: 46/48/42; same "
                        "senders, §2.3)", 42, min(entries) if entries else None, unit="link units", kind="count",
                 reading=("entry costs by formula (1): " + "/".join(f"{c:g}" for c in entries) + " (paper 46/48/42)")
                 if entries else "")
    out.append(missing(h, f"not run ({why})"))
    return out


PAPER_000_WAIT = {"size": 100 * 2 / 3, "senders": 75.0}
def _wait_saving(p: Mapping[str, Any] | None, part: str) -> tuple[float | None, str]:
    """1 - busiest link (M2) / busiest link (none), averaged over the table's columns that ran (else all points)."""
    from dcnlab.reproduce.aggregation.model import WAIT_COLUMNS

    if not p:
        return None, ""
    pts = p["points"]
    v = p["overall"].get("m2 wait vs none")
    if v is None:
        return None, "the results predate the waiting-time model"
    cols = [str(c) for c in WAIT_COLUMNS[part] if str(c) in pts] or list(pts)
    from dcnlab.reproduce.aggregation.model import DEFAULT_SETTING_000

    ecmp = DEFAULT_SETTING_000["wait-model"] == "link-bound-ecmp"    # 000's search chose it (open_settings)
    return v, (f"link-bound model (dcnlab.controller.aggregation.waiting): 1 - busiest link with M2 / without "
               f"aggregation{' (spread evenly over the receiver links)' if ecmp else ''}, mean over "
               f"{', '.join(cols)} ({'k' if part == '000-k' else 'senders'}; "
               f"{p.get('rounds', '?')} round(s) each)")


def _bmv2_wait(emulation: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The BMv2 waiting-time experiment's results (:mod:`dcnlab.reproduce.aggregation.waiting`), when it ran."""
    w = (emulation or {}).get("waiting")
    return w if w and w.get("points") else None


def _headlines_000_wait(pk: Mapping[str, Any] | None, ps: Mapping[str, Any] | None,
                        emulation: Mapping[str, Any] | None, absent: Any) -> list[Headline]:
    out = []
    for p, part, key, where in ((pk, "000-k", "size", "across network sizes (Table 1: BCube(6,k), k = 2..6)"),
                                (ps, "000-size", "senders", "across sender counts (Table 2: 1000..3000 senders)")):
        frac = "2/3" if key == "size" else "3/4"
        v, how = _wait_saving(p, part)
        h = Headline("000", f"Shuffle+reduce wait about {frac} shorter than without aggregation, {where} (abstract)",
                     PAPER_000_WAIT[key], v, unit="%", kind="percent", direction="up", reference=0.0,
                     paper_text=f"about {frac} shorter", plot=f"{part}-busiest.png" if v is not None else None,
                     reading=how)
        out.append(h if v is not None else missing(h, how or absent(part)))
    w = _bmv2_wait(emulation)
    h = Headline("000", "Word-count incast on BMv2: M2 shortens shuffle+reduce completion against no aggregation "
                        "(abstract: 2/3 to 3/4)", PAPER_000_WAIT["size"], w["model_saving"] if w else None,
                 emulated=True, emulation=w["saving"] if w else None, unit="%", kind="percent", direction="up",
                 reference=0.0,
                 paper_text="about 2/3 to 3/4 shorter", plot="aggregation-waiting.png" if w else None)
    if w:
        h.reading = (f"{w['spec']}, {', '.join(str(m) for m in w['senders'])} senders, {w['runs']} runs each: "
                     f"1 - completion(M2) / completion(none) per run, mean over runs and sender counts; BMv2 "
                     f"{w['saving']:.1f} ± {w['saving_sd']:.1f}%; model = the link-bound model of the same jobs")
        out.append(h)
    else:
        out.append(missing(h, "not run: the BMv2 waiting-time experiment did not run"))
    return out


def _headlines_000(pk: Mapping[str, Any] | None, ps: Mapping[str, Any] | None,
                   emulation: Mapping[str, Any] | None, absent: Any) -> list[Headline]:
    out = []
    for p, name, paper, where, plot in ((pk, "000-k", 3.0, "across network sizes, BCube(6,k), 120 senders",
                                         "000-k-traffic.png"),
                                        (ps, "000-size", 19.0, "across sender counts, 100..4000 on BCube(4,8)",
                                         "000-size-traffic.png")):
        h = Headline("000", f"M2 carries about {paper:g}% less data than IRS-based, {where} (abstract)",
                     paper, p["overall"]["m2 vs irs"] if p else None, unit="%", kind="percent", direction="up",
                     reference=0.0, paper_text=f"about {paper:g}%", plot=plot if p else None)
        if p:
            h.reading = (f"1 - traffic(M2) / traffic(IRS-based) per point (mean of {p.get('rounds', '?')} round(s)), "
                         f"averaged plainly over {_saving_points(p)}")
        out.append(missing(h, absent(name)))
    out += _headlines_000_wait(pk, ps, emulation, absent)
    # 000 Fig. 5 and 6, the trends the text states
    def delta(method: str, key: str) -> float | None:
        xs = _points(pk, key, method)
        return xs[-1] - xs[0] if len(xs) > 1 else None

    inc = [delta(m, "aggregators") for m in ("m2", "irs")]
    v = min(inc) if all(x is not None for x in inc) else None  # type: ignore[type-var]
    out.append(missing(Headline("000", "Aggregation servers rise with k for M2 and IRS-based (Fig. 5(b))", None, v,
                                unit=f"servers, {_ends(pk, 'k')} (smaller of the two)", kind="trend", direction="up",
                                reference=0.0, paper_text="rise", plot="000-k-aggregators.png" if v is not None else None,
                                reading="aggregating servers at the largest k minus at the smallest, the smaller of "
                                        "M2 and IRS-based"), absent("000-k")))
    v = delta("unicast", "aggregators")
    out.append(missing(Headline("000", "Aggregation servers fall with k for unicast (Fig. 5(b))", None, v,
                                unit=f"servers, {_ends(pk, 'k')}", kind="trend", direction="down", reference=0.0,
                                paper_text="fall", plot="000-k-aggregators.png" if v is not None else None,
                                reading="aggregating servers of unicast trees at the largest k minus at the smallest"),
                       absent("000-k")))
    for p, name, key, fig, plot in ((pk, "000-k", "new_servers", "5(c)", "000-k-new_servers.png"),
                                    (pk, "000-k", "links", "5(d)", "000-k-links.png"),
                                    (ps, "000-size", "links", "6(b)", "000-size-links.png")):
        v = None
        if p:
            first = next(iter(p["points"].values()))[key]
            others = [m for m in first if m in PAPERS_SCHEMES and m not in ("m2", "none", "mib", "mc")]
            v = _mean([pt[key]["m2"] - min(pt[key][m] for m in others) for pt in p["points"].values()])
        what = "newly added servers" if key == "new_servers" else "links"
        out.append(missing(Headline("000", f"M2 uses the fewest {what} ({'BCube(6,k)' if name == '000-k' else 'BCube(4,8)'}"
                                           f", Fig. {fig})", None, v, unit=f"{what}, M2 minus best other",
                                    kind="trend", direction="at most", reference=0.0, paper_text="fewest",
                                    plot=plot if v is not None else None,
                                    reading=f"per point, M2's {what} minus the fewest of IRS-based and unicast, "
                                            f"averaged over the points"), absent(name)))
    v = None
    if ps:
        last = list(ps["points"].values())[-1]["traffic"]
        v = last["m2"] / min(last["unicast"], last["none"])
    out.append(missing(Headline("000", "At the most senders M2 still carries the least data, below unicast and no "
                                       "aggregation (Fig. 6(a))", None, v, unit="M2 / best other", kind="trend",
                                direction="down", reference=1.0, paper_text="least",
                                plot="000-size-traffic.png" if v is not None else None,
                                reading="traffic of M2 over the lower of unicast and no aggregation at the largest "
                                        "sender count run"), absent("000-size")))
    v = None
    if pk and "receiver_input" in next(iter(pk["points"].values()), {}):
        v = _mean([max(x for m, x in pt["receiver_input"].items() if m in PAPERS_SCHEMES and m != "none")
                   / pt["receiver_input"]["none"]
                   for pt in pk["points"].values()])
    out.append(missing(Headline("000", "All in-network schemes sharply reduce the data arriving at the receiver "
                                       "(Fig. 5(e))", None, v, unit="largest in-network / none", kind="trend",
                                direction="down", reference=1.0, paper_text="sharply less",
                                plot="000-k-receiver_input.png" if v is not None else None,
                                reading="per k, the largest receiver input of the in-network schemes over no "
                                        "aggregation's (120 units), averaged over k"), absent("000-k")))
    return out


