"""``dcnlab reproduce search [PAPER ...]``: the sensitivity of each paper's verdicts to the settings it leaves open.

The settings a paper leaves open are data (:mod:`dcnlab.results.open_settings`), each pre-registered from the
paper's text alone. A searcher with ``preregistered = True`` (every one of dcnlab's papers) runs the pre-registered
setting and every other admissible reading of one setting at a time, the rest pre-registered
(:func:`one_at_a_time`, :data:`SENSITIVITY_RULE`): no count chooses the setting, and a headline a reading flips is
marked ``depends on <setting>`` by its reproduction. What follows is the older count-based search, kept only for a
searcher without ``preregistered`` (a user's); for it the search

* builds every candidate setting: the cross product of the candidates of its searched settings (a value the
  paper's text rules out, :attr:`OpenSetting.contradicts`, is never one: it is listed with its sentence);
* runs each candidate over ``draws`` draws when it is random (a value that is a draw, such as a
  shuffled order, or a paper whose patterns are random), once otherwise; the tasks of all candidates
  and draws are deduplicated (a task that no setting changes runs once) and fanned out on the cores;
* builds the paper's headlines (``dcnlab/reproduce/<mechanism>/headlines.py``) for each candidate and draw,
  takes per headline the draw with the **median** model figure (the range over the draws is shown) and its
  verdict by the report's rule (:func:`dcnlab.results.summary.verdict`: with its spread over the rounds, at the
  worst point of an "every" statement, ``inconsistent`` where the paper's rules exclude it);
* counts the statements that hold (model verdict ``reproduced``) **at the same time**, and chooses
  the candidate with the most. The choice never looks at the paper's figures beyond that count: ties go to
  the earliest values in the setting lists (the reading the text supports best first), then to a
  deterministic candidate (:data:`TIE_RULE`). The runner-up (the next in that order) is reported beside it.

Why a separate command and not part of ``reproduce all --quick``: the search runs the paper's model
part once per candidate and draw (001: five join orders of the nine grid patterns, three sizes and
three draws of the random ones, about 15 CPU minutes; MR4LMS on the 4-ppn grids is most of it), which
``--quick``'s three-minute budget cannot hold. Its result is a table, ``OUT/<paper>.json``, and a copy
committed in ``dcnlab/results/search_tables/`` that the reproductions' defaults follow (a test
checks that they do); ``dcnlab reproduce all`` shows the committed table (or a newer one in
``OUT/search/``) in its report without running it.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dcnlab.reproduce.protocol import Searcher
from dcnlab.results.open_settings import OpenSetting, searched
from dcnlab.results.summary import Headline, verdict

DRAWS = 3
"""Draws of a random candidate (a range over several draws, the median draw judged)."""
DEFAULT_OUT = "results/reproduce-all/search"


# -- bookkeeping ---------------------------------------------------------------------------------------------

@dataclass
class Judged:
    """One statement under one candidate: the model's figure per draw, their median, judged."""

    statement: str
    paper: float | None
    values: list[float | None]
    median: float | None
    verdict: str
    spread: float | None = None
    """The standard error over the rounds of the median draw's figure."""

    @property
    def holds(self) -> bool:
        return self.verdict == "reproduced"

    def range_text(self) -> str:
        vals = [v for v in self.values if v is not None]
        if not vals:
            return "n/a"
        lo, hi = min(vals), max(vals)
        se = f" ±{_num(1.96 * self.spread)}" if self.spread else ""
        return (_num(lo) + se if _num(lo) == _num(hi) else
                f"{_num(lo)}..{_num(hi)} (median {_num(self.median)}{se})")


def _num(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.3g}" if abs(x) < 100 else f"{x:.1f}"


def median(values: Sequence[float | None]) -> float | None:
    """The median of the figures that exist (None when none does); an even count takes the lower middle
    value, so that the median is always a figure some draw gave."""
    vals = sorted(v for v in values if v is not None and math.isfinite(v))
    return vals[(len(vals) - 1) // 2] if vals else None


def judge(per_draw: Sequence[Sequence[Headline]]) -> list[Judged]:
    """The statements of one candidate from its draws' headlines (the same statements in the same order on
    every draw): per statement, the verdict of the draw whose model figure is the median (with its spread, its
    worst point, its inconsistency), the figures of every draw kept."""
    if not per_draw:
        return []
    first = per_draw[0]
    for heads in per_draw[1:]:
        if [h.statement for h in heads] != [h.statement for h in first]:
            raise ValueError("search: the draws of one setting gave different statements")
    out = []
    for i, h in enumerate(first):
        values = [heads[i].model for heads in per_draw]
        mid = median(values)
        pick = next((heads[i] for heads in per_draw if heads[i].model == mid), h)
        v = pick.model_verdict or verdict(h.kind, h.paper, mid, h.direction, h.reference)
        out.append(Judged(h.statement, h.paper, values, mid, v, pick.spread))
    return out


@dataclass
class Candidate:
    """One setting (name -> value) and its statements."""

    setting: dict[str, str]
    random: bool
    statements: list[Judged] = field(default_factory=list)
    draws: int = 1

    @property
    def holding(self) -> int:
        return sum(s.holds for s in self.statements)

    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.setting.items()) or "(no open setting)"


def candidates(options: Sequence[OpenSetting]) -> list[dict[str, str]]:
    """The cross product of the settings' candidates (the values the text does not rule out), in list order
    (the earliest values first)."""
    return [dict(zip([o.name for o in options], combo))
            for combo in itertools.product(*[o.candidates for o in options])]


def rank_key(options: Sequence[OpenSetting]) -> Callable[[Candidate], tuple[int, tuple[int, ...], int]]:
    """The order of preference: most statements holding, then the earliest values of each setting's list (the
    reading the text supports best), then deterministic. No figure of the paper enters it."""
    def key(c: Candidate) -> tuple[int, tuple[int, ...], int]:
        return (-c.holding, tuple(o.values.index(c.setting[o.name]) for o in options), int(c.random))
    return key


def ranked(cands: Sequence[Candidate], options: Sequence[OpenSetting]) -> list[Candidate]:
    """The candidates in the order of preference (:func:`rank_key`): the chosen first, the runner-up second."""
    for c in cands:
        for o in options:
            if o.contradiction(c.setting[o.name]):
                raise ValueError(f"search: {o.name}={c.setting[o.name]} contradicts the text and is no candidate")
    return sorted(cands, key=rank_key(options))


def choose(cands: Sequence[Candidate], options: Sequence[OpenSetting]) -> Candidate:
    """The candidate with the most statements holding at once; ties: the earliest values of each setting (the
    reading the text supports best), then the deterministic one (:data:`TIE_RULE`)."""
    if not cands:
        raise ValueError("search: no candidate")
    return ranked(cands, options)[0]


TIE_RULE = ("most statements holding at once; ties go to the earliest values of each setting's list (the reading "
            "the text supports best first), then to a deterministic setting; the paper's figures never enter the "
            "choice beyond counting the statements that hold, and a reading the text contradicts is no candidate")


SENSITIVITY_RULE = ("pre-registered: each setting's value is fixed from the paper's text alone (the first value of its "
                    "list, with the sentence and the argument in dcnlab/results/open_settings.py), before any result; "
                    "every other value the text admits runs as a sensitivity reading, one setting at a time, the rest "
                    "pre-registered; a statement whose verdict changes under a reading depends on that setting, and "
                    "the counts are the pre-registered setting's")


def one_at_a_time(options: Sequence[OpenSetting]) -> list[dict[str, str]]:
    """The pre-registered setting (each setting's first candidate) first, then every other candidate of each
    setting with the rest pre-registered: the sensitivity readings of a paper whose searcher is ``preregistered``."""
    base = {o.name: o.candidates[0] for o in options}
    return [base] + [dict(base, **{o.name: v}) for o in options for v in o.candidates[1:]]


def settings_to_run(searcher: Searcher, options: Sequence[OpenSetting]) -> list[dict[str, str]]:
    """What ``dcnlab reproduce search`` runs for ``searcher``: the sensitivity readings of a pre-registered paper
    (:func:`one_at_a_time`, a searcher with ``preregistered = True``), else the cross product (:func:`candidates`)."""
    return one_at_a_time(options) if getattr(searcher, "preregistered", False) else candidates(options)


def dropped(options: Sequence[OpenSetting]) -> list[dict[str, str]]:
    """The values the text rules out, each with the sentence that does (never candidates)."""
    return [{"name": o.name, "value": v, "why": o.contradiction(v) or ""} for o in options for v in o.values
            if o.contradiction(v)]


def rechoose(data: Mapping[str, Any], options: Sequence[OpenSetting]) -> dict[str, Any]:
    """A stored search chosen again by today's :func:`choose` (the same measurements, e.g. after the tie rule
    changed; a candidate the text now rules out is dropped): ``chosen``, ``runner_up``, ``rule`` and ``dropped``
    updated."""
    keep = [c for c in data["candidates"] if not any(o.contradiction(c["setting"].get(o.name, "")) for o in options)]
    if data.get("preregistered"):       # the setting is the text's, never the count's
        return dict(data, candidates=keep, dropped=dropped(options))
    cands = from_json(dict(data, candidates=keep))
    order = ranked(cands, options)
    out = dict(data)
    out["candidates"] = keep
    out["chosen"], out["rule"], out["dropped"] = order[0].setting, TIE_RULE, dropped(options)
    out["runner_up"] = order[1].setting if len(order) > 1 else None
    return out


def from_json(data: Mapping[str, Any]) -> list[Candidate]:
    """The candidates of a stored search (``OUT/<paper>.json``)."""
    return [Candidate(dict(c["setting"]), bool(c["random"]),
                      [Judged(s["statement"], s["paper"], list(s["values"]), s["median"], s["verdict"],
                              s.get("spread")) for s in c["statements"]], int(c["draws"])) for c in data["candidates"]]


def evaluate(searcher: Searcher, options: Sequence[OpenSetting], results: Mapping[Hashable, Any], draws: int,
             ) -> list[Candidate]:
    """Every candidate's statements from the tasks' results."""
    out = []
    for setting in settings_to_run(searcher, options):
        rnd = searcher.is_random(setting)
        n = draws if rnd else 1
        per_draw = [searcher.headlines(setting, d, results) for d in range(1, n + 1)]
        out.append(Candidate(setting, rnd, judge(per_draw), n))
    return out


# -- running -------------------------------------------------------------------------------------------------

def _run_one(paper: str, task: Hashable) -> tuple[Hashable, Any, float]:
    t0 = time.process_time()
    res = searcher_for(paper).run(task)
    return task, res, time.process_time() - t0


def run_search(paper: str, quick: bool, draws: int, workers: int | None,
               say: Callable[[str], None] = lambda m: None, cache: Path | None = None) -> dict[str, Any]:
    """Run the search of ``paper``; its table as JSON (what ``OUT/<paper>.json`` holds).

    ``cache``: a pickle of the tasks' results (``OUT/<paper>.cache.pickle``), read when present so that a
    later search (another statement, more draws) runs only the tasks it lacks, and written at the end."""
    import pickle

    from dcnlab.sweep.pool import fan_out

    searcher = searcher_for(paper)
    options = searched(paper)
    wanted: dict[Hashable, None] = {}
    for setting in settings_to_run(searcher, options):
        for d in range(1, (draws if searcher.is_random(setting) else 1) + 1):
            wanted.update(dict.fromkeys(searcher.tasks(setting, d, quick)))
    cached: dict[Hashable, Any] = {}
    if cache is not None and cache.is_file():
        try:
            stored = pickle.loads(cache.read_bytes())
            cached = stored["results"] if stored.get("quick") == quick else {}
        except Exception:           # a stale or foreign file: run everything
            cached = {}
    results: dict[Hashable, Any] = {t: cached[t] for t in wanted if t in cached}
    tasks = sorted((t for t in wanted if t not in results), key=lambda t: -searcher.seconds(t))
    say(f"{paper}: {len(settings_to_run(searcher, options))} settings, {len(wanted)} distinct tasks, {len(results)} cached")
    t0 = time.perf_counter()
    cpu = 0.0
    for _, (task, res, sec) in fan_out(_run_one, [(paper, t) for t in tasks], workers,
                                       warm=getattr(searcher, "warm", None)):
        results[task] = res
        cpu += sec
        say(f"  [{len(results)}/{len(wanted)}] {task} {sec:.1f} s")
    if cache is not None and tasks:
        cache.write_bytes(pickle.dumps({"quick": quick, "results": {**cached, **results}}))
    cands = evaluate(searcher, options, results, draws)
    pre = bool(getattr(searcher, "preregistered", False))
    order = list(cands) if pre else ranked(cands, options)     # pre-registered: the first, whatever holds
    best = order[0]
    return {"paper": paper, "quick": quick, "draws": draws, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "wall_seconds": round(time.perf_counter() - t0, 1), "cpu_seconds": round(cpu, 1),
            "settings": [{"name": o.name, "values": list(o.values), "random": list(o.random), "default": o.default,
                          "sentence": o.sentence, "where": o.where} for o in options],
            "rule": SENSITIVITY_RULE if pre else TIE_RULE, "chosen": best.setting,
            "runner_up": None if pre or len(order) < 2 else order[1].setting,
            **({"preregistered": True} if pre else {}),
            "dropped": dropped(options),
            "candidates": [{"setting": c.setting, "random": c.random, "draws": c.draws, "holding": c.holding,
                            "total": len(c.statements),
                            "statements": [{"statement": s.statement, "paper": s.paper, "values": s.values,
                                            "median": s.median, "verdict": s.verdict, "spread": s.spread}
                                           for s in c.statements]}
                           for c in cands],
            **searcher.extra(results, quick)}


# -- showing -------------------------------------------------------------------------------------------------


# -- the command line ------------------------------------------------------------------------------------------

def searchers() -> dict[str, Callable[[], Searcher]]:
    """Every paper's searcher (each reproduction's :meth:`~dcnlab.reproduce.protocol.Reproduction.sensitivity`),
    by paper id in the order of the ids."""
    from dcnlab.reproduce import registry

    found: dict[str, Callable[[], Searcher]] = {}
    for name in registry.names():
        found.update(registry.get(name, "reproduce search").sensitivity())
    return dict(sorted(found.items()))


def __getattr__(name: str) -> Any:
    if name == "SEARCHABLE":    # the papers with a searcher (the others list their open settings only)
        return tuple(searchers())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def searcher_for(paper: str) -> Searcher:
    """The searcher of ``paper`` (one of :data:`SEARCHABLE`)."""
    return searchers()[paper]()


def search_and_write(paper: str, quick: bool, draws: int, workers: int | None, say: Callable[[str], None],
                     out: Path) -> tuple[dict[str, Any], Path]:
    """:func:`run_search` of ``paper`` (its cache in ``out``), written to ``out/PAPER.json``: (the search, the file)."""
    from dcnlab.results.outputs import writing

    data = run_search(paper, quick, draws, workers, say, out / f"{paper}.cache.pickle")
    with writing(out, "--out"):
        (out / f"{paper}.json").write_text(json.dumps(data, indent=1) + "\n")
    return data, out / f"{paper}.json"
