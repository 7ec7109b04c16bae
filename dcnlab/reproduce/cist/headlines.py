"""Dragonfly CISTs (Bian et al., 004) against ``reproduce cist``: its headline figures, each against ours, judged by the
verdict rule of :mod:`dcnlab.results.summary`.

The figures and statements are the paper's (its worked examples, Theorems 1-7). The builder reads what the
reproduction already computed (the JSON-able results it writes) and returns
:class:`dcnlab.results.summary.Headline` records, one per headline of the paper; a headline that the run
did not compute (a part left out by ``--only``, a quick run, a figure no command measures yet) is still
there, with no figure of ours and the reason in its ``reading``. ``emulation`` arguments are the BMv2
experiment's JSON (its ``to_json()`` / ``summary()``), or None when BMv2 did not run; a headline gets a BMv2
figure only where the emulated experiment measures the same quantity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dcnlab.results.summary import Headline, missing

# -- 004: reproduce cist ---------------------------------------------------------------------------------------

def cist(cases: Sequence[Mapping[str, Any]] | None, emulation: Sequence[Mapping[str, Any]] | None = None,
         why: str = "", scaling: Mapping[str, Any] | None = None) -> list[Headline]:
    """The headlines of Bian et al. from ``reproduce cist``'s model cases (``model.json``), BMv2 results and the construction-time
    measurement (``scaling.json``, :mod:`dcnlab.reproduce.cist.scaling`)."""
    cases = list(cases or [])
    emu = list(emulation or [])
    not_run = "not run" + (f" ({why})" if why else "")
    out: list[Headline] = []
    ok = [c for c in cases if c["valid"] and c["k"] == _half_a(c["spec"])]
    out.append(missing(Headline("004", "Dragonfly has ⌊a/2⌋ completely independent spanning trees (Theorems 1–4)",
                                None, 100 * len(ok) / len(cases) if cases else None, unit="% of instances",
                                kind="trend", direction="at least", reference=100.0, paper_text="every instance",
                                plot="model-sweep.png",
                                reading=f"k = ⌊a/2⌋ trees built and checked (spanning, completely independent) on "
                                        f"{len(cases)} instances: " + ", ".join(c['spec'].removeprefix('dragonfly:')
                                                                               for c in cases)), not_run))
    d42 = next((c for c in cases if c["spec"].startswith("dragonfly:p=1,a=4,h=2")), None)
    e42 = next((x for x in emu if str(x.get("spec", "")).startswith("dragonfly:p=1,a=4,h=2")), None)
    out.append(missing(Headline("004", "D(4,2), the worked instance: 36 switches, 2 CISTs (§3.1)", 2,
                                d42["k"] if d42 and d42["valid"] else (0 if d42 else None),
                                emulated=True,
                                emulation=(e42["k"] if e42["checks"].get("exactly_once") else 0) if e42 else None,
                                unit="trees", kind="count", plot="model-sweep.png",
                                reading=(f"{d42['spec']}: {d42['switches']} switches, {d42['k']} valid CISTs"
                                         if d42 else "") + ("; BMv2: the k trees installed, every broadcast "
                                                            "delivered exactly once without failures" if e42 else "")),
                       not_run))
    survive = [c["no_loss_below_k"] for c in cases]
    esurvive = [bool(x.get("checks", {}).get("survives_k_minus_1")) for x in emu]
    out.append(missing(Headline("004", "Broadcast over the k CISTs loses nothing with up to k−1 failed switches or "
                                       "links (the CIST property)", None,
                                100 * sum(survive) / len(survive) if survive else None,
                                emulated=True,
                                emulation=100 * sum(esurvive) / len(esurvive) if esurvive else None,
                                unit="% of instances", kind="trend", direction="at least", reference=100.0,
                                paper_text="nothing lost", plot="model-sweep.png",
                                reading="random failures of up to k−1 elements (mixed switches and links): no "
                                        "(source, destination) pair lost on any round" +
                                        (f"; BMv2: broadcasts on {', '.join(x['spec'] for x in emu)}" if emu else "")),
                       not_run))
    from dcnlab.reproduce.cist import scaling as cist_scaling

    slope = scaling.get("slope") if scaling else None
    fit = ((scaling or {}).get("algorithms") or {}).get((scaling or {}).get("slope_of") or "", {})
    stderr = fit.get("stderr") if slope is not None else None
    out.append(missing(Headline("004", "Algorithms 1–3 run in O(N) (Theorems 5–7)", 1.0, slope,
                                spread=stderr, spread_of=f"the fit's standard error over {fit.get('points', '?')} "
                                                         "timed sizes (each the minimum of repeated timings)"
                                if stderr is not None else "",
                                unit="log-log slope of time vs N", kind="trend", direction="at most",
                                reference=float(scaling.get("threshold", cist_scaling.SLOPE_THRESHOLD)) if scaling
                                else cist_scaling.SLOPE_THRESHOLD,
                                paper_text="O(N)", plot="scaling.png" if slope is not None else None,
                                reading=(f"largest judged slope {slope:.2f} ({scaling.get('slope_of')}); "
                                         + cist_scaling.reading(scaling)) if slope is not None else ""),
                       "not run: no construction-time measurement (scaling.json)"))
    return out


def _half_a(spec: str) -> int:
    from dcnlab.topos.spec import parse_spec

    return int(getattr(parse_spec(spec), "a", 0)) // 2
