"""C-MR4LMS (Chen et al., 001) against ``reproduce multicast``: its headline figures, each against ours, judged by the
verdict rule of :mod:`dcnlab.results.summary`.

The figures and statements are the paper's (its experiments, §4.2-4.3, and Figs. 9-10). The builder reads what the
reproduction already computed (the JSON-able results it writes) and returns
:class:`dcnlab.results.summary.Headline` records, one per headline of the paper; a headline that the run
did not compute (a part left out by ``--only``, a quick run, a figure no command measures yet) is still
there, with no figure of ours and the reason in its ``reading``. ``emulation`` arguments are the BMv2
experiment's JSON (its ``to_json()`` / ``summary()``), or None when BMv2 did not run; a headline gets a BMv2
figure only where the emulated experiment measures the same quantity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from dcnlab.reproduce.multicast.model import RANDOM_1PPN as RANDOM_1
from dcnlab.reproduce.multicast.model import RANDOM_4PPN as RANDOM_4
from dcnlab.reproduce.multicast.sensitivity import flips, phrase
from dcnlab.results.summary import Headline, missing

# -- 001: reproduce multicast ----------------------------------------------------------------------------------

MC_PLOT_1, MC_PLOT_4 = "multicast_1ppn.png", "multicast_4ppn.png"
MC_CMR = ("cmr4lms-fixed", "cmr4lms-dynamic")
BIG_4 = "100x50x26:ppn=4"


NULL_CASE = "the null case: MR4LMS is C-MR4LMS (C-MR4LMS-fixed's rows stand for all three algorithms)"
FALSIFIERS = {
    "C-MR4LMS-fixed max TFI 7 on 64×32×16 (1 ppn, Fig. 9)":
        "a router that ignores the table limit (one entry per group, no merge: max TFI 1)",
    "C-MR4LMS-dynamic max TFI 1 on 64×32×16 (1 ppn, Fig. 9)": "C-MR4LMS-fixed passed off as the dynamic variant (7)",
    "C-MR4LMS-fixed max TFI 6 on 32×32×32 (1 ppn, Fig. 9)":
        "a router that ignores the table limit (one entry per group, no merge: max TFI 1)",
    "C-MR4LMS-dynamic max TFI 1 on 32×32×32 (1 ppn, Fig. 9)": "C-MR4LMS-fixed passed off as the dynamic variant (6)",
    "After merging C-MR4LMS keeps at least 512 groups, all when fewer (§4.3)":
        "the global broadcast tree passed off as C-MR4LMS (every group merged into 1 tree)",
    "MR4LMS keeps only 32 of 1,000 random groups (4 ppn, §4.3)": "C-MR4LMS-fixed passed off as MR4LMS (512 kept)",
    "MR4LMS max TFI 168 on 100×50×26 (4 ppn, §4.3)": "C-MR4LMS-fixed passed off as MR4LMS (max TFI 20)",
    "MR4LMS average TFI 1.1 on 100×50×26 (4 ppn, §4.3)":
        "the global broadcast tree passed off as MR4LMS (every group on one tree; a router that never merges, 1.0, "
        "passes the ±10%)",
    "C-MR4LMS up to 94% faster than MR4LMS (100×50×26, 4 ppn: < 35 s vs > 575 s; Fig. 10(f))": NULL_CASE,
    "C-MR4LMS computes 100×50×26 (4 ppn) in under 35 s (Fig. 10(f))":
        "C-MR4LMS-fixed wasting 5 ms of CPU per join (8,900 joins: 45 s)",
    "MR4LMS never merges with 1 ppn: max TFI 1 on every pattern (§4.3)":
        "C-MR4LMS-fixed passed off as MR4LMS (it merges: max TFI 7 on 64×32×16)",
    "C-MR4LMS max TFI 1 on 181×181 and 100×327 (fewer than 512 groups; §4.3)":
        "C-MR4LMS-fixed with a quarter of the table (C = 8: 128 spanning trees for 362 and 427 groups)",
    "Fixed and dynamic: equal max TFI above 1 on 25×50×26 and random (1 ppn, §4.3)":
        "a router that ignores the table limit as both variants (no merge: max TFI 1, not above 1)",
    "MR4LMS max TFI 1, C-MR4LMS above 1 on 256×32×16, 128×32×32 (4 ppn, §4.3)": NULL_CASE,
    "C-MR4LMS lower max and average EFI than MR4LMS on 2-D patterns (1 ppn, §4.2)": NULL_CASE + " (a tie is not lower)",
    "MR4LMS clearly better on random patterns: lower max EFI than C-MR4LMS (1 ppn, §4.2)":
        NULL_CASE + " (a tie is not lower)",
    "C-MR4LMS better on random patterns: lower max EFI than MR4LMS (4 ppn, §4.2)": NULL_CASE + " (a tie is not lower)",
    "C-MR4LMS max EFI 69 on random patterns (1 ppn, §4.2)":
        "the global broadcast tree passed off as C-MR4LMS (every group on every link: max EFI 1,000)",
    "C-MR4LMS max EFI at most 88 higher than MR4LMS's (§4.2)": NULL_CASE + " (0 higher)",
    "C-MR4LMS max EFI at most 594 lower than MR4LMS's (§4.2)": NULL_CASE + " (0 lower)",
    "C-MR4LMS max TFI at most 25 higher than MR4LMS's (§4.3)": NULL_CASE + " (0 higher)",
    "C-MR4LMS max TFI at most 148 lower than MR4LMS's (§4.3)": NULL_CASE + " (0 lower)",
}
"""Per headline, its falsifier in one phrase: a deliberately wrong mechanism or input that
``tests/test_falsifiers_001.py`` feeds through the same pipeline (the paper-scale workloads, the routers,
:func:`multicast` and the report's one verdict rule), and that must be judged ``deviates`` (or ``flat``); for a
comparison, the null case first (X is Y)."""


EFI_AVERAGE = "used-links"
"""The pre-registered reading of 001's open setting ``efi-average`` (:mod:`dcnlab.results.open_settings`): the average
EFI over the switch-to-switch links that carry a group (``efi_avg``); ``all-links`` reads ``efi_avg_all``."""
EFI_KEYS = {"used-links": "efi_avg", "all-links": "efi_avg_all"}


def multicast(rows: Sequence[Mapping[str, Any]] | None, why: str = "", efi_average: str = EFI_AVERAGE,
              depends: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
              timing: Mapping[str, Any] | None = None) -> list[Headline]:
    """C-MR4LMS's headlines from ``reproduce multicast``'s rows (``multicast.json``'s ``rows``).

    The random patterns are draws (a row's ``draw``, its seed; none: draw 1). Every headline is computed on
    each draw (the grid rows with that draw's random rows, :func:`dcnlab.reproduce.multicast.model.at_draw`);
    one that reads a random pattern (its figure differs between draws, or changes when the random rows are left
    out) gets the mean over the draws as its figure and their standard error as its ``spread``
    (``spread_of``: ``N draws``), and is judged on its 95% interval like every figure from random draws
    (:mod:`dcnlab.results.summary`, Student's t for the draws: 2.78 standard errors over 5), and a claim that
    deviates on any one draw deviates (each draw's figure is in ``draws``: a statement about every pattern that
    fails on 1 of 5 draws is not 80% true). A figure that is itself a maximum over one pattern ("max EFI 69 on random
    patterns") is so taken per draw and averaged: the paper states one number per kind of random pattern,
    i.e. the maximum on one pattern of that kind, so the quantity is a per-draw statistic and the mean over
    draws estimates it; the maximum over R draws would be a statistic of R patterns, which grows with R and has
    no standard error.

    ``efi_average``: the reading of the open setting ``efi-average`` (:data:`EFI_KEYS`). ``depends``: statement
    -> the readings of an open setting that flip its verdict (:func:`dcnlab.reproduce.multicast.sensitivity.flips`);
    None reads them from the committed sensitivity table (``dcnlab/results/search_tables/001.json``), ``{}``
    marks none (the sensitivity run itself). A headline a reading flips is marked ``depends_on`` that setting and
    judged again by the report's rule; its figure stays the pre-registered setting's. ``timing``: the speed
    headlines' CPU times measured alone over several repeats (:mod:`dcnlab.reproduce.multicast.timing`), which
    replace the pool's single figures (:func:`timed`)."""
    from dcnlab.reproduce.multicast.model import at_draw, draws_of, is_random

    rows = list(rows or [])
    draws = draws_of(rows)
    if len(draws) < 2:
        heads = _multicast(rows, why, efi_average)
    else:
        heads = over_draws({d: at_draw(rows, d) for d in draws}, [r for r in rows if not is_random(r["pattern"])],
                           why, efi_average)
    return mark(timed(heads, timing), depends)


SPEED = "C-MR4LMS up to 94% faster than MR4LMS"
FAST = "C-MR4LMS computes 100×50×26 (4 ppn) in under 35 s"
"""The beginnings of the two statements that are CPU times (:func:`timed`)."""


def timed(heads: Sequence[Headline], timing: Mapping[str, Any] | None) -> list[Headline]:
    """``heads`` with the speed headlines' figures from ``timing`` (:func:`dcnlab.reproduce.multicast.timing.measure`:
    the mean over the repeats timed alone, with its standard error), where a timing was measured and the model ran
    the pattern; the others as they are."""
    from dataclasses import replace

    if not timing:
        return list(heads)
    from dcnlab.reproduce.multicast.timing import figures

    figs = figures(dict(timing))
    out = []
    for h in heads:
        key = "speed" if h.statement.startswith(SPEED) else "fast" if h.statement.startswith(FAST) else None
        if key is None or h.model is None:
            out.append(h)
            continue
        value, spread, over = figs[key]
        # each timing is a replicate (a seed of the machine's timing): a verdict a reading decides holds when every
        # timing's own figure gives it (dcnlab.results.summary.verdict), as each draw of a random pattern
        each = [float(x) for x in timing["speed_percent" if key == "speed" else "slower_cmr4lms"]]
        out.append(replace(h, model=value, spread=spread, spread_of=over, spread_n=None, interval=None,
                           seeds={str(i + 1): x for i, x in enumerate(each)},
                           seed_spreads={str(i + 1): None for i in range(len(each))},
                           model_verdict=None, verdict="", basis=None, difference=None, stability="",
                           reading=h.reading + f"; mean over {over} of the three algorithms in turns, timed alone "
                                               "after the pool (timing.json)"))
    return out


def over_draws(per: Mapping[int, Sequence[Mapping[str, Any]]], fixed: Sequence[Mapping[str, Any]], why: str = "",
               efi_average: str = EFI_AVERAGE) -> list[Headline]:
    """The headlines of several draws (``per``: draw -> that draw's rows), each judged over the draws
    (:func:`_over_draws`); ``fixed``: the rows no draw changes (a headline that reads only them, and is the same on
    every draw, is that one figure)."""
    draws = sorted(per)
    each = [_multicast(per[d], why, efi_average) for d in draws]
    grids = _multicast(fixed, why, efi_average)
    return [_over_draws(list(hs), g, draws) for *hs, g in zip(*each, grids)]


def mark(heads: Sequence[Headline], depends: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
         ) -> list[Headline]:
    """``heads`` with each headline a sensitivity reading flips marked ``depends on <setting>`` (the readings and
    their verdicts and figures in its reading) and judged again by the report's rule (a verdict a reading decides
    holds at 3 seeds, :func:`dcnlab.results.summary.verdict`); the figure stays the pre-registered setting's."""
    from dataclasses import replace

    if depends is None:
        from dcnlab.results.open_settings import stored_search

        depends = flips(stored_search("001"))
    out = []
    for h in heads:
        rows = depends.get(h.statement)
        if not rows or h.model is None:
            out.append(h)
            continue
        names = ", ".join(dict.fromkeys(str(r["setting"]) for r in rows))
        out.append(replace(h, depends_on=names, model_verdict=None, verdict="", stability="",
                           reading=(h.reading + "; " if h.reading else "") + f"depends on {phrase(rows)}; the "
                           "figure is the pre-registered setting's"))
    return out


def _over_draws(heads: list[Headline], grids: Headline, draws: list[int]) -> Headline:
    """One headline from its value on each draw (``heads``) and without the random patterns (``grids``)."""
    from dataclasses import replace

    from dcnlab.results.spread import se

    first = heads[0]
    vals = [h.model for h in heads if h.model is not None]
    if len(vals) < 2 or (len(set(vals)) == 1 and (grids.model, grids.reading) == (first.model, first.reading)):
        return first            # no random pattern behind its figure
    mean = sum(vals) / len(vals)
    same = len({h.reading for h in heads}) == 1
    reading = (first.reading + ("" if same else f" (draw {draws[0]})") + f"; mean over {len(vals)} draws (seeds "
               f"{draws[0]}-{draws[-1]}), per draw: " + ", ".join(f"{v:.4g}" for v in vals))
    per = {str(d): h.model for d, h in zip(draws, heads) if h.model is not None}
    # each draw is a seed of the pattern generator: a verdict near an edge, or one a reading decides, holds when
    # every draw's own figure (one draw: no spread) gives it (dcnlab.results.summary.verdict)
    return replace(first, model=mean, spread=se(vals), spread_of=f"{len(vals)} draws", spread_n=None, draws=per,
                   seeds=dict(per), seed_spreads={d: None for d in per}, reading=reading, interval=None, model_verdict=None, verdict="", basis=None, difference=None,
                   stability="")


def _multicast(rows: Sequence[Mapping[str, Any]], why: str = "", efi_average: str = EFI_AVERAGE) -> list[Headline]:
    """The headlines of one draw (``rows``: one row per pattern and algorithm; ``efi_average``: which average EFI
    the comparison of 2-D patterns reads, :data:`EFI_KEYS`)."""

    def get(pattern: str, algo: str) -> Mapping[str, Any] | None:
        return next((r for r in rows if r["pattern"] == pattern and r["algo"] == algo), None)

    def val(pattern: str, algo: str, key: str) -> float | None:
        r = get(pattern, algo)
        return None if r is None else r[key]

    def absent(*needs: tuple[str, str]) -> str:
        gone = [f"{a} on {p}" for p, a in needs if get(p, a) is None]
        return ("not run: " + ", ".join(gone) + (f" ({why})" if why else "")) if gone else (why or "not run")

    out: list[Headline] = []
    for pattern, fixed in (("64x32x16", 7), ("32x32x32", 6)):
        out.append(missing(Headline("001", f"C-MR4LMS-fixed max TFI {fixed} on {pattern.replace('x', '×')} "
                                           "(1 ppn, Fig. 9)", fixed, val(pattern, "cmr4lms-fixed", "tfi_max"),
                                    unit="groups per tree",
                                    kind="count", plot=MC_PLOT_1, reading="max TFI (groups on one tree) of the fixed "
                                                                          "variant, C = 32"),
                           absent((pattern, "cmr4lms-fixed"))))
        group = val(pattern, "cmr4lms-dynamic/group", "tfi_max")
        out.append(missing(Headline("001", f"C-MR4LMS-dynamic max TFI 1 on {pattern.replace('x', '×')} (1 ppn, Fig. 9)",
                                    1, val(pattern, "cmr4lms-dynamic", "tfi_max"), unit="groups per tree", kind="count",
                                    plot=MC_PLOT_1,
                                    reading="dynamic variant with the paper's root candidates (top switches of one "
                                            "TN)" + (f"; {bound}" if (bound := dynamic_bound(pattern)) else "")
                                            + (f"; with every TN of the TN group (our extension, which §4.3.1 "
                                               f"rules out) {group}" if group is not None else "")),
                           absent((pattern, "cmr4lms-dynamic"))))
    cmr = [r for r in rows if r["algo"] in MC_CMR]
    kept = None
    if cmr:
        big = [r["trees"] for r in cmr if r["groups_in"] >= 512]
        short = [r for r in cmr if r["groups_in"] < 512 and r["trees"] < r["groups_in"]]
        kept = min(r["trees"] for r in short) if short else (min(big) if big else None)
    out.append(missing(Headline("001", "After merging C-MR4LMS keeps at least 512 groups, all when fewer (§4.3)", 512,
                                kept, unit="groups", kind="trend", direction="at least", paper_text=">= 512",
                                plot=MC_PLOT_1, reading="fewest groups kept by fixed or dynamic over every pattern "
                                                        "with 512 or more groups (a smaller pattern must keep all)"),
                       why or "not run"))
    out.append(missing(Headline("001", "MR4LMS keeps only 32 of 1,000 random groups (4 ppn, §4.3)", 32,
                                val(RANDOM_4, "mr4lms", "trees"), unit="groups", kind="count", plot=MC_PLOT_4,
                                reading="trees left after MR4LMS-like merging on a random pattern"),
                       absent((RANDOM_4, "mr4lms"))))
    out.append(missing(Headline("001", "MR4LMS max TFI 168 on 100×50×26 (4 ppn, §4.3)", 168,
                                val(BIG_4, "mr4lms", "tfi_max"), unit="groups per tree", kind="count", plot=MC_PLOT_4,
                                reading="max groups on one tree, MR4LMS-like"), absent((BIG_4, "mr4lms"))))
    out.append(missing(Headline("001", "MR4LMS average TFI 1.1 on 100×50×26 (4 ppn, §4.3)", 1.1,
                                val(BIG_4, "mr4lms", "tfi_avg"), unit="groups per tree", kind="ratio", plot=MC_PLOT_4,
                                reading="mean groups per tree, MR4LMS-like"), absent((BIG_4, "mr4lms"))))
    speed, fast = None, None
    mr = get(BIG_4, "mr4lms")
    cm = [get(BIG_4, a) for a in MC_CMR]
    if mr and all(cm):
        def t(r: Mapping[str, Any]) -> float:
            return float(r.get("cpu_seconds") or r["seconds"])
        slow = max(t(r) for r in cm if r)
        speed, fast = 100 * (1 - slow / t(mr)), slow
    out.append(missing(Headline("001", "C-MR4LMS up to 94% faster than MR4LMS (100×50×26, 4 ppn: < 35 s vs > 575 s; "
                                       "Fig. 10(f))", 94.0, speed, unit="%", kind="percent", direction="up", reference=0.0,
                                plot=MC_PLOT_4,
                                reading="1 - CPU time of the slower C-MR4LMS variant / CPU time of MR4LMS-like on "
                                        "100×50×26 (4 ppn), ours in Python"), absent((BIG_4, "mr4lms"), (BIG_4, MC_CMR[0]))))
    out.append(missing(Headline("001", "C-MR4LMS computes 100×50×26 (4 ppn) in under 35 s (Fig. 10(f))", 35.0, fast, unit="s",
                                kind="trend", direction="down", paper_text="< 35 s", plot=MC_PLOT_4,
                                reading="CPU seconds of the slower of fixed and dynamic"),
                       absent((BIG_4, MC_CMR[0]), (BIG_4, MC_CMR[1]))))
    ones = [r for r in rows if r["algo"] == "mr4lms" and r["ppn"] == 1]
    out.append(missing(Headline("001", "MR4LMS never merges with 1 ppn: max TFI 1 on every pattern (§4.3)", 1,
                                max(r["tfi_max"] for r in ones) if ones else None, unit="groups per tree", kind="count",
                                plot=MC_PLOT_1, reading="largest max TFI of MR4LMS-like over the 1-ppn patterns run: "
                                + ", ".join(r["pattern"].split(":")[0] for r in ones)), "not run: MR4LMS-like on no "
                                "1-ppn pattern" + (f" ({why})" if why else "")))
    small = [v for p in ("181x181", "100x327") for a in MC_CMR if (v := val(p, a, "tfi_max")) is not None]
    out.append(missing(Headline("001", "C-MR4LMS max TFI 1 on 181×181 and 100×327 (fewer than 512 groups; §4.3)", 1,
                                max(small) if small else None, unit="groups per tree", kind="count", plot=MC_PLOT_1,
                                reading=f"largest max TFI of fixed and dynamic over the {len(small)} runs"),
                       absent(("181x181", MC_CMR[0]), ("100x327", MC_CMR[0]))))
    out += _shares_001(get, why, EFI_KEYS[efi_average])
    rand = [v for a in MC_CMR if (v := val(RANDOM_1, a, "efi_max")) is not None]
    out.append(missing(Headline("001", "C-MR4LMS max EFI 69 on random patterns (1 ppn, §4.2)", 69,
                                max(rand) if rand else None, unit="groups per link", kind="count", plot=MC_PLOT_1,
                                reading=f"max EFI of fixed and dynamic on a random pattern ({int(RANDOM_1.split(':')[1]):,} "
                                        "groups); the paper does not give its 1-ppn random patterns' sizes: the "
                                        "size is the pre-registered one, the only size it gives a random pattern "
                                        "(open setting random-1ppn-groups)"),
                       absent((RANDOM_1, MC_CMR[0]))))
    pats = sorted({r["pattern"] for r in rows if r["algo"] == "mr4lms"})
    for key, hi, lo, fig in (("efi_max", 88, 594, "§4.2"), ("tfi_max", 25, 148, "§4.3")):
        diffs = [v - m for p in pats for a in MC_CMR
                 if (v := val(p, a, key)) is not None and (m := val(p, "mr4lms", key)) is not None]
        label = "EFI" if key == "efi_max" else "TFI"
        for paper, word, pick in ((hi, "higher", max), (lo, "lower", min)):
            v = pick(diffs) if diffs else None
            out.append(missing(Headline(
                "001", f"C-MR4LMS max {label} at most {paper} {word} than MR4LMS's ({fig})", paper,
                None if v is None else (v if word == "higher" else -v),
                unit=f"groups per {'link' if label == 'EFI' else 'tree'}, "
                     + ("C-MR4LMS minus MR4LMS" if word == "higher" else "MR4LMS minus C-MR4LMS"), kind="count",
                plot=MC_PLOT_4, reading=f"{'largest' if word == 'higher' else 'largest negative'} difference of max "
                                         f"{label}, C-MR4LMS (fixed or dynamic) minus MR4LMS-like, over the "
                                         f"{len(pats)} patterns where MR4LMS-like ran"),
                "not run: MR4LMS-like on no pattern" + (f" ({why})" if why else "")))
    return out


SAME_TN_RULE = "如果多播組內各成員的最近公共祖先位于L3層,則頂層網絡中板tnid內每個L3交換機都可以做樹根"
"""C-MR4LMS (Chen et al.), the paragraph before Fig. 6: "if the members' lowest common ancestor is at L3, every L3
switch of the top network midplane tnid can be the root" (the dynamic variant chooses among those)."""


@lru_cache(maxsize=8)
def dynamic_bound(pattern: str) -> str:
    """Why C-MR4LMS-dynamic's max TFI 1 on ``pattern`` is out of reach under the paper's rule (its root candidates
    are the L3 switches of TN tnid, :data:`SAME_TN_RULE`) on our readings, or empty when they allow it: the bound
    (:func:`dcnlab.controller.multicast.bounds.tfi_bound`, on the reproduction's fabric and colors). The bound rests
    on our readings of what the text leaves out (the wiring, formulas (1) and (5), the placement), not on the text
    alone, so the headline is judged ``deviates`` with the bound shown, never ``inconsistent``."""
    from dcnlab.controller.multicast.bounds import tfi_bound
    from dcnlab.reproduce.multicast.model import COLORS, SPEC

    bound = tfi_bound(pattern, "tn", SPEC, COLORS)
    if bound <= 1:
        return ""
    return (f"on our readings the paper's rule (\"{SAME_TN_RULE}\": the root is one of the L3 switches of TN tnid) "
            f"forces groups of one spanning tree that cross the same links onto one tree whatever root is chosen: "
            f"max TFI is at least {bound} on {pattern.replace('x', '×')}, so 1 is out of reach (with every TN of the "
            f"TN group, our extension, the bound is {tfi_bound(pattern, 'group', SPEC, COLORS)})")


def _shares_001(get: Any, why: str, efi_avg: str = "efi_avg") -> list[Headline]:
    """The statements about every pattern of a kind: the share of patterns (and variants) where they hold."""
    out = []
    cases = [
        ("Fixed and dynamic: equal max TFI above 1 on 25×50×26 and random (1 ppn, §4.3)", MC_PLOT_1,
         [("25x50x26",), (RANDOM_1,)],
         lambda p: (lambda f, d: None if f is None or d is None else f["tfi_max"] == d["tfi_max"] > 1)(
             get(p, MC_CMR[0]), get(p, MC_CMR[1]))),
        ("MR4LMS max TFI 1, C-MR4LMS above 1 on 256×32×16, 128×32×32 (4 ppn, §4.3)", MC_PLOT_4,
         [("256x32x16:ppn=4",), ("128x32x32:ppn=4",)],
         lambda p: (lambda m, f: None if m is None or f is None else m["tfi_max"] == 1 and f["tfi_max"] > 1)(
             get(p, "mr4lms"), get(p, MC_CMR[0]))),
        ("C-MR4LMS lower max and average EFI than MR4LMS on 2-D patterns (1 ppn, §4.2)", MC_PLOT_1,
         [("512x64",), ("181x181",), ("100x327",)],
         lambda p: (lambda m, c: None if m is None or not all(c) else all(
             x["efi_max"] < m["efi_max"] and x[efi_avg] < m[efi_avg] for x in c))(
             get(p, "mr4lms"), [get(p, a) for a in MC_CMR])),
        # the random patterns' statements (the size of the 1-ppn ones is an open setting, random-1ppn-groups)
        ("MR4LMS clearly better on random patterns: lower max EFI than C-MR4LMS (1 ppn, §4.2)", MC_PLOT_1,
         [(RANDOM_1,)],
         lambda p: (lambda m, c: None if m is None or not all(c) else all(x["efi_max"] > m["efi_max"] for x in c))(
             get(p, "mr4lms"), [get(p, a) for a in MC_CMR])),
        ("C-MR4LMS better on random patterns: lower max EFI than MR4LMS (4 ppn, §4.2)", MC_PLOT_4,
         [(RANDOM_4,)],
         lambda p: (lambda m, c: None if m is None or not all(c) else all(x["efi_max"] < m["efi_max"] for x in c))(
             get(p, "mr4lms"), [get(p, a) for a in MC_CMR])),
    ]
    for statement, plot, pats, holds in cases:
        results = {p[0]: holds(p[0]) for p in pats}
        run = {p: ok for p, ok in results.items() if ok is not None}
        share = 100 * sum(run.values()) / len(run) if run else None
        h = Headline("001", statement, None, share, unit="% of patterns", kind="trend", direction="at least",
                     reference=100.0, paper_text="every pattern", plot=plot,
                     reading=("holds on " + ", ".join(f"{p.split(':')[0]} {'yes' if ok else 'NO'}" for p, ok in run.items())
                              + (f"; not run on {', '.join(p.split(':')[0] for p in results if p not in run)}"
                                 if len(run) < len(results) else "")) if run else "")
        out.append(missing(h, "not run: " + ", ".join(p.split(":")[0] for p in results) + (f" ({why})" if why else "")))
    return out


