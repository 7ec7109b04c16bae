"""M2 incasts (Fang et al., 000) against ``reproduce aggregation``'s parts 000-k and 000-size: the headlines, each
judged where the paper makes it (:mod:`dcnlab.results.summary`).

* "M2 carries about 3% / 19% less data than IRS-based": an average over the sweep (the abstract's "across network
  sizes", "across sender counts"), with its spread over the rounds and the per-point figures in the reading. The
  two may need different IRS readings (as 000 describes IRS, and with 003's intra-stage step), and the paper
  compares with one IRS: each is judged on its own, the pair under every reading shown beside (:func:`pair_000`;
  not ``inconsistent``: the paper's text does not contradict itself there).
* The waiting times (Tables 1 and 2, values missing): the paper gives no model, so every model's figure is shown
  and ``not judged (no model in the paper)`` (:data:`dcnlab.reproduce.aggregation.model.WAIT_MODELS`); BMv2's
  measured word-count completion times are judged against the abstract's figure across sender counts, about 3/4:
  the experiment sweeps the sender count on one fabric (4, 8 and 16 senders on BCube(4,2)), and the abstract gives
  "about 2/3" across network sizes and "about 3/4" across sender counts (§5.1 and §5.3 hold the sweeps).
* "M2 uses the fewest new servers / links" and "all in-network schemes sharply reduce the receiver's input": at
  every point of the sweep, judged at the worst, the mean beside.
* The trends over k: the least-squares slope over every k, against its noise (``flat`` within it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dcnlab.reproduce.aggregation.part_figures import PAPERS_SCHEMES
from dcnlab.reproduce.aggregation.part_figures import point_se as _point_se
from dcnlab.reproduce.aggregation.part_figures import points as _points
from dcnlab.reproduce.aggregation.part_figures import saving_points as _saving_points
from dcnlab.reproduce.aggregation.part_figures import slope_over as _slope_over
from dcnlab.reproduce.aggregation.part_figures import span as _span
from dcnlab.reproduce.aggregation.part_figures import spread as _spread
from dcnlab.results.spread import rounds_text, se
from dcnlab.results.goals import NOT_JUDGED
from dcnlab.results.summary import Headline, missing, verdict

PAPER_000 = {"000-k": 3.0, "000-size": 19.0}
"""000's abstract: M2 carries about 3% (across network sizes) and 19% (across sender counts) less than IRS-based."""
PAPER_000_WAIT = {"size": 100 * 2 / 3, "senders": 75.0}
"""000's abstract: the shuffle+reduce wait about 2/3 and 3/4 shorter than without in-network aggregation."""
WORD_COUNT = ("Word-count incast on BMv2: M2 shortens shuffle+reduce completion against no aggregation, across "
              "sender counts (abstract: about 3/4)")
"""BMv2's word-count headline: its sweep is over sender counts (module docstring), so its figure is the abstract's
3/4, not the 2/3 it gives across network sizes."""
NO_MODEL = "not judged (no model in the paper)"
"""The waiting-time model rows: 000 gives no model of the shuffle+reduce time, so our models' figures are shown and
not judged (:data:`dcnlab.results.goals.NOT_JUDGED`)."""
IRS_WORDS = {"no-intra": "IRS as 000 describes it", "intra": "IRS with 003's intra-stage step"}


def _vs_irs(p: Mapping[str, Any] | None, reading: str) -> tuple[float | None, float | None]:
    """M2 below IRS-based (percent) and its standard error under the IRS ``reading`` (``no-intra``, ``intra``)."""
    if not p:
        return None, None
    key = f"m2 vs irs/{reading}"
    return p["overall"].get(key), (p.get("overall_se") or {}).get(key)


def pair_000(pk: Mapping[str, Any] | None, ps: Mapping[str, Any] | None) -> str:
    """The 3% / 19% pair under each IRS reading, with each figure's verdict by the report's rule (empty when a
    part did not run or lacks a reading's figure).

    Not ``inconsistent``: the abstract's two figures are taken over different sweeps (network sizes, sender
    counts), so nothing in 000's text makes them impossible together; a pair our readings of IRS cannot reach
    together is a reproduction failure, and each statement keeps its own verdict with this pair shown beside."""
    if not pk or not ps:
        return ""
    parts = []
    both = []
    for reading in IRS_WORDS:
        (vk, sk), (vs, ss) = _vs_irs(pk, reading), _vs_irs(ps, reading)
        if vk is None or vs is None:
            return ""
        a = verdict("percent", PAPER_000["000-k"], vk, spread=sk, n=pk.get("rounds"))
        b = verdict("percent", PAPER_000["000-size"], vs, spread=ss, n=ps.get("rounds"))
        parts.append(f"{IRS_WORDS[reading]} gives {vk:.2f}% ({a}) across network sizes and {vs:.2f}% ({b}) across "
                     "sender counts")
        both.append(a == b == "reproduced")
    return ("the pair 3% / 19% under each reading of IRS: " + "; ".join(parts)
            + ("" if any(both) else "; no reading reproduces both (the pair deviates; 000's text does not contradict "
                                    "itself: the two figures are over different sweeps)"))


def headlines_000(pk: Mapping[str, Any] | None, ps: Mapping[str, Any] | None,
                  emulation: Mapping[str, Any] | None, absent: Callable[[str], str]) -> list[Headline]:
    """000's headlines from the summaries of parts 000-k (``pk``) and 000-size (``ps``)."""
    out = []
    pair = pair_000(pk, ps)
    for p, name, where, plot in ((pk, "000-k", "across network sizes, BCube(6,k), 120 senders", "000-k-traffic.png"),
                                 (ps, "000-size", "across sender counts, 100..4000 on BCube(4,8)",
                                  "000-size-traffic.png")):
        paper = PAPER_000[name]
        h = Headline("000", f"M2 carries about {paper:g}% less data than IRS-based, {where} (abstract)",
                     paper, p["overall"]["m2 vs irs"] if p else None, unit="%", kind="percent", direction="up",
                     reference=0.0, paper_text=f"about {paper:g}%", plot=plot if p else None,
                     **_spread(p, "m2 vs irs"))
        if p:
            per = {q: 100 * (1 - v["traffic"]["m2"] / v["traffic"]["irs"]) for q, v in p["points"].items()}
            worst = max(per, key=lambda q: p["points"][q].get("m2_worse_than_irs", 0.0))
            pooled = (p.get("setting") or {}).get("average") == "pooled"
            h.reading = (f"1 - traffic(M2) / traffic(IRS-based) per point (mean of {p.get('rounds', '?')} round(s)), "
                         + ("pooled" if pooled else "averaged plainly") + f" over {_saving_points(p)}; IRS: "
                         + IRS_WORDS.get((p.get("setting") or {}).get("irs-baseline", ""), "?") + "; per point "
                         + ", ".join(f"{q}: {v:+.1f}" for q, v in per.items())
                         + f"; M2 costs more than IRS in {100 * p['points'][worst].get('m2_worse_than_irs', 0):.0f}% "
                           f"of the rounds at {worst}" + (f"; {pair}" if pair else ""))
        out.append(missing(h, absent(name)))
    out += _waits(pk, ps, emulation, absent)
    out += _trends(pk, absent)
    for p, name, key, fig, plot in ((pk, "000-k", "new_servers", "5(c)", "000-k-new_servers.png"),
                                    (pk, "000-k", "links", "5(d)", "000-k-links.png"),
                                    (ps, "000-size", "links", "6(b)", "000-size-links.png")):
        out.append(_fewest(p, name, key, fig, plot, absent))
    out += _least(pk, ps, absent)
    return out


def _waits(pk: Mapping[str, Any] | None, ps: Mapping[str, Any] | None, emulation: Mapping[str, Any] | None,
           absent: Callable[[str], str]) -> list[Headline]:
    from dcnlab.reproduce.aggregation.model import WAIT_COLUMNS, WAIT_MODELS

    out = []
    for p, part, key, where in ((pk, "000-k", "size", "across network sizes (Table 1: BCube(6,k), k = 2..6)"),
                                (ps, "000-size", "senders", "across sender counts (Table 2: 1000..3000 senders)")):
        frac = "2/3" if key == "size" else "3/4"
        models = {m: p["overall"][f"m2 wait vs none/{m}"] for m in WAIT_MODELS
                  if p and f"m2 wait vs none/{m}" in p["overall"]}
        ses = {m: (p.get("overall_se") or {}).get(f"m2 wait vs none/{m}") for m in models} if p else {}
        cols = [str(c) for c in WAIT_COLUMNS[part] if p and str(c) in p["points"]]
        h = Headline("000", f"Shuffle+reduce wait about {frac} shorter than without aggregation, {where} (abstract)",
                     PAPER_000_WAIT[key], None, unit="%", kind="percent", direction="up", reference=0.0,
                     paper_text=f"about {frac} shorter (no model given)",
                     plot=f"{part}-busiest.png" if models else None, points=models or None, point_spreads=ses,
                     over="model", spread_of=rounds_text(int(p.get("rounds") or 0)) if p else "",
                     model_verdict=NOT_JUDGED if models else None,
                     reading=(f"{NO_MODEL}: 000 gives no model of the waiting time (Tables 1 and 2 have no values), "
                              "so no model's figure can be held against its 2/3 or 3/4; each model's figure is "
                              "shown: " + ", ".join(f"{m} {v:.1f}%" for m, v in models.items())
                              + f"; 1 - M2's / no aggregation's, over {', '.join(cols) or 'every point'} "
                              "(dcnlab.controller.aggregation.waiting)") if models else "")
        out.append(missing(h, absent(part)))
    w = (emulation or {}).get("waiting")
    w = w if w and w.get("points") else None
    n = len(w["senders"]) * w["runs"] if w else 0
    h = Headline("000", WORD_COUNT, PAPER_000_WAIT["senders"], w["model_saving"] if w else None,
                 emulated=True, emulation=w["saving"] if w else None, unit="%", kind="percent", direction="up",
                 reference=0.0, emulation_spread=w["saving_sd"] / n ** 0.5 if w and n > 1 else None,
                 emulation_spread_n=n if w and n > 1 else None, model_verdict=NOT_JUDGED if w else None,
                 paper_text="about 3/4 shorter (across sender counts)", plot="aggregation-waiting.png" if w else None)
    if w:
        h.reading = (f"{w['spec']}, {', '.join(str(m) for m in w['senders'])} senders, {w['runs']} runs each: "
                     f"1 - completion(M2) / completion(none) per run, mean over runs and sender counts; BMv2 "
                     f"{w['saving']:.1f} ± {w['saving_sd']:.1f}% (standard deviation over the {n} runs), judged "
                     f"as a measured job time like the paper's testbed; model = the link-bound model of the same "
                     f"jobs, {NO_MODEL}")
        out.append(h)
    else:
        out.append(missing(h, "not run: the BMv2 waiting-time experiment did not run"))
    return out


def _trends(pk: Mapping[str, Any] | None, absent: Callable[[str], str]) -> list[Headline]:
    """Fig. 5(b): aggregating servers rise with k for M2 and IRS, fall for unicast: the least-squares slope over
    every k run, with its spread from the rounds (not the last point minus the first)."""
    rise = {m: _slope_over(pk, "aggregators", m) for m in ("m2", "irs")}
    low = min((m for m in rise if rise[m][0] is not None), key=lambda m: rise[m][0], default=None)  # type: ignore
    v, sp = rise[low] if low else (None, {})
    per = {m: ", ".join(f"{x:.1f}" for x in _points(pk, "aggregators", m)) for m in ("m2", "irs", "unicast")}
    over = _span(pk, "k")
    out = [missing(Headline("000", "Aggregation servers rise with k for M2 and IRS-based (Fig. 5(b))", None, v,
                            unit=f"servers per k, slope over {over} (smaller of the two)", kind="trend", direction="up",
                            reference=0.0, paper_text="rise", plot="000-k-aggregators.png" if v is not None else None,
                            reading=f"least-squares slope of the aggregating servers over every k, the smaller of M2 "
                                    f"({_fmt(rise['m2'][0])}) and IRS-based ({_fmt(rise['irs'][0])}); per k, M2: "
                                    f"{per['m2']}; IRS: {per['irs']}", **sp), absent("000-k"))]
    v, sp = _slope_over(pk, "aggregators", "unicast")
    out.append(missing(Headline("000", "Aggregation servers fall with k for unicast (Fig. 5(b))", None, v,
                                unit=f"servers per k, slope over {over}", kind="trend", direction="down",
                                reference=0.0, paper_text="fall", plot="000-k-aggregators.png" if v is not None else None,
                                reading=f"least-squares slope of the aggregating servers of unicast trees over every "
                                        f"k; per k: {per['unicast']}", **sp), absent("000-k")))
    return out


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"


def _fewest(p: Mapping[str, Any] | None, name: str, key: str, fig: str, plot: str, absent: Callable[[str], str]
            ) -> Headline:
    """'M2 uses the fewest ...' at every point of the sweep: M2 minus the fewest of the others per point (paired by
    round), judged at the worst point; below 0, since a tie is not 'the fewest'."""
    what = "newly added servers" if key == "new_servers" else "links"
    points: dict[str, float] = {}
    spreads: dict[str, float | None] = {}
    if p:
        for q, pt in p["points"].items():
            others = [m for m in pt[key] if m in PAPERS_SCHEMES and m not in ("m2", "none", "mib", "mc")]
            best = min(others, key=lambda m: pt[key][m])
            points[q] = pt[key]["m2"] - pt[key][best]
            spreads[q] = _point_se(p, q, key, "m2", best)
    var = "k" if name == "000-k" else "m"
    h = Headline("000", f"M2 uses the fewest {what} ({'BCube(6,k)' if name == '000-k' else 'BCube(4,8)'}, Fig. {fig})",
                 None, None, unit=f"{what}, M2 minus best other, worst {var}", kind="trend", direction="down",
                 reference=0.0, paper_text="fewest", plot=plot if points else None, points=points or None,
                 point_spreads=spreads, over=var, spread_of=rounds_text(int(p.get("rounds") or 0)) if p else "",
                 reading=f"per {var}, M2's {what} minus the fewest of IRS-based and unicast (the same rounds), judged "
                         f"at the worst {var}, the mean over the points beside")
    return missing(h, absent(name))


def _least(pk: Mapping[str, Any] | None, ps: Mapping[str, Any] | None, absent: Callable[[str], str]
           ) -> list[Headline]:
    out = []
    v, sp = None, None
    if ps:
        last = list(ps["points"])[-1]
        t = ps["points"][last]["traffic"]
        base = "unicast" if t["unicast"] <= t["none"] else "none"
        v = t["m2"] / t[base]
        rd = ps["points"][last].get("rounds", {}).get("traffic", {})
        sp = se([a / b for a, b in zip(rd.get("m2", []), rd.get(base, []))])
    out.append(missing(Headline("000", "At the most senders M2 still carries the least data, below unicast and no "
                                       "aggregation (Fig. 6(a))", None, v, unit="M2 / best other", kind="trend",
                                direction="down", reference=1.0, paper_text="least", spread=sp,
                                spread_of=rounds_text(int(ps.get("rounds") or 0)) if ps else "",
                                plot="000-size-traffic.png" if v is not None else None,
                                reading="traffic of M2 over the lower of unicast and no aggregation at the largest "
                                        "sender count run"), absent("000-size")))
    points: dict[str, float] = {}
    spreads: dict[str, float | None] = {}
    if pk and "receiver_input" in next(iter(pk["points"].values()), {}):
        for q, pt in pk["points"].items():
            ri = pt["receiver_input"]
            worst = max((m for m in ri if m in PAPERS_SCHEMES and m != "none"), key=lambda m: ri[m])
            points[q] = ri[worst] / ri["none"]
            rd = pt.get("rounds", {}).get("receiver_input", {})
            spreads[q] = se([a / b for a, b in zip(rd.get(worst, []), rd.get("none", []))])
    out.append(missing(Headline("000", "All in-network schemes sharply reduce the data arriving at the receiver "
                                       "(Fig. 5(e))", None, None, unit="largest in-network / none, worst k",
                                kind="trend", direction="down", reference=1.0, paper_text="sharply less",
                                points=points or None, point_spreads=spreads, over="k",
                                spread_of=rounds_text(int(pk.get("rounds") or 0)) if pk else "",
                                plot="000-k-receiver_input.png" if points else None,
                                reading="per k, the largest receiver input of the in-network schemes over no "
                                        "aggregation's (120 units), judged at the worst k"), absent("000-k")))
    return out

