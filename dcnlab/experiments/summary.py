"""Headlines: one record per figure a paper states, with ours beside it and a verdict (issue 18 §1).

Every ``dcnlab reproduce <mechanism>`` and ``dcnlab reproduce all`` write ``summary.json``::

    {"seed": ["000", "003"], "mechanism": "aggregation", "quick": false,
     "headlines": [{"seed": "003", "statement": "...", "paper": 32.87, "model": 35.75, "emulation": null,
                    "unit": "%", "tolerance": "±3 points", "verdict": "deviates", "reading": "...",
                    "plot": "003-k-saving.png", "kind": "percent", ...}, ...],
     "emulation": {"ran": false, "why": "..."}}

``seed`` is the paper id ("000".."004"), ``plot`` a PNG path relative to the directory of the
``summary.json`` (or null). A headline declares its *kind*, and :func:`verdict` is the rule:

* ``percent``: reproduced when ours is within ±3 percentage points of the paper's figure;
* ``ratio``: reproduced when ours is within 10% of the paper's figure (relative to the paper's);
* ``count``: reproduced when ours equals the paper's figure exactly;
* ``trend``: reproduced when ours lies in the stated direction (``up``: above, ``down``: below,
  ``at least``, ``at most``) of the reference (the paper's figure when there is no other);
* a percent, ratio or count that misses its tolerance but still lies in a direction the headline
  states (e.g. "M2 saves more than IRS": above 0) is a ``trend``; otherwise it ``deviates``;
* with no figure of ours the verdict is ``not run`` and ``reading`` says why.

The verdict judges the model's figure; when the model has none and BMv2 measured one, it judges
BMv2's (``basis`` names which). Where both exist, ``difference`` is BMv2 against the model in percent
of the model (issue 18 §4: the goal is within :data:`EMULATION_GOAL_PERCENT`).
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

__all__ = ["DIRECTIONS", "EMULATION_GOAL_PERCENT", "Headline", "KINDS", "PERCENT_POINTS", "RATIO_FRACTION",
           "RULE", "Summary", "VERDICTS", "difference", "read", "tolerance_text", "verdict", "write"]

KINDS = ("percent", "ratio", "count", "trend")
VERDICTS = ("reproduced", "trend", "deviates", "not run")
PERCENT_POINTS = 3.0
"""A percentage is reproduced within this many percentage points."""
RATIO_FRACTION = 0.10
"""A ratio is reproduced within this fraction of the paper's figure."""
EMULATION_GOAL_PERCENT = 5.0
"""Model against BMv2: the goal for every pair (issue 18 §4)."""
DIRECTIONS: dict[str, Callable[[float, float], bool]] = {
    "up": operator.gt, "down": operator.lt, "at least": operator.ge, "at most": operator.le}
DIRECTION_WORDS = {"up": "above", "down": "below", "at least": "at least", "at most": "at most"}
_EPS = 1e-9

RULE = (f"A percentage is reproduced within ±{PERCENT_POINTS:g} points, a ratio within {RATIO_FRACTION:.0%} of the "
        f"paper's figure, a count exactly, a trend when ours goes in the stated direction. A figure outside its "
        f"tolerance that still goes in a direction the paper states is a 'trend'; otherwise it 'deviates'. "
        f"The verdict judges the model's figure (BMv2's where the model has none); 'not run' means we have no "
        f"figure yet, and the reading says why. Model against BMv2: the goal is within "
        f"{EMULATION_GOAL_PERCENT:g}%.")


def _number(x: Any) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def tolerance_text(kind: str, direction: str | None = None, reference: float | None = None) -> str:
    """The tolerance in words: ``±3 points``, ``±10%``, ``exact``, ``at least 512``."""
    if kind == "percent":
        return f"±{PERCENT_POINTS:g} points"
    if kind == "ratio":
        return f"±{RATIO_FRACTION:.0%}"
    if kind == "count":
        return "exact"
    ref = "" if reference is None else f" {reference:g}"
    return f"{DIRECTION_WORDS.get(direction, direction)}{ref}" if direction else "direction"


def within(kind: str, paper: float, value: float) -> bool:
    """Whether ``value`` reproduces ``paper`` under the tolerance of ``kind`` (percent, ratio, count)."""
    if kind == "percent":
        return abs(value - paper) <= PERCENT_POINTS + _EPS
    if kind == "ratio":
        return abs(value - paper) <= RATIO_FRACTION * abs(paper) + _EPS
    if kind == "count":
        return value == paper
    raise ValueError(f"kind {kind!r} has no tolerance; valid: percent, ratio, count")


def verdict(kind: str, paper: float | None, value: float | None, direction: str | None = None,
            reference: float | None = None) -> str:
    """The verdict rule of issue 18 (module docstring): ``reproduced``, ``trend``, ``deviates`` or ``not run``.

    ``value`` is our figure (None: not run). ``direction`` (``up``, ``down``, ``at least``, ``at most``)
    compares ``value`` with ``reference`` (for a trend without one: the paper's figure, else 0); a trend
    headline needs it, a percent/ratio/count headline may state it to earn ``trend`` when it misses."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}; valid: {', '.join(KINDS)}")
    if direction is not None and direction not in DIRECTIONS:
        raise ValueError(f"direction {direction!r}; valid: {', '.join(DIRECTIONS)}")
    v = _number(value)
    if v is None:
        return "not run"
    p = _number(paper)
    if kind == "trend":
        if direction is None:
            raise ValueError("a trend headline needs a direction")
        ref = reference if reference is not None else (p if p is not None else 0.0)
        return "reproduced" if DIRECTIONS[direction](v, ref) else "deviates"
    if p is None:
        raise ValueError(f"a {kind} headline needs the paper's figure")
    if within(kind, p, v):
        return "reproduced"
    if direction is not None and DIRECTIONS[direction](v, reference if reference is not None else 0.0):
        return "trend"
    return "deviates"


def difference(model: float | None, emulation: float | None) -> float | None:
    """BMv2 against the model in percent of the model (None without both, or for a model figure of 0
    against a non-zero one)."""
    m, e = _number(model), _number(emulation)
    if m is None or e is None:
        return None
    if m == 0:
        return 0.0 if e == 0 else None
    return 100.0 * (e - m) / abs(m)


@dataclass
class Headline:
    """One figure of a paper against ours. ``tolerance``, ``verdict``, ``basis`` and ``difference`` are
    computed from the others when left empty (:func:`verdict`, :func:`difference`)."""

    seed: str
    statement: str
    paper: float | None
    model: float | None
    emulation: float | None = None
    unit: str = ""
    tolerance: str = ""
    verdict: str = ""
    reading: str = ""
    plot: str | None = None
    kind: str = "percent"
    direction: str | None = None
    reference: float | None = None
    paper_text: str | None = None
    """How the paper states it, when a number alone would mislead (``about 3%``, ``< 35 s vs > 575 s``)."""
    basis: str | None = None
    """Which figure the verdict judges: ``model``, ``emulation`` or None (not run)."""
    difference: float | None = None
    """BMv2 against the model, percent of the model."""

    def __post_init__(self) -> None:
        self.paper, self.model, self.emulation = _number(self.paper), _number(self.model), _number(self.emulation)
        if not self.tolerance:
            self.tolerance = tolerance_text(self.kind, self.direction, self.reference)
        if self.basis is None:
            self.basis = "model" if self.model is not None else ("emulation" if self.emulation is not None else None)
        if not self.verdict:
            judged = self.model if self.basis == "model" else self.emulation
            self.verdict = verdict(self.kind, self.paper, judged, self.direction, self.reference)
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r}; valid: {', '.join(VERDICTS)}")
        if self.difference is None:
            self.difference = difference(self.model, self.emulation)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Headline:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Summary:
    """The contents of one ``summary.json``."""

    seeds: list[str]
    headlines: list[Headline]
    emulation_ran: bool
    emulation_why: str
    extra: dict[str, Any] | None = None
    """More top-level keys (``mechanism``, ``quick``, ``parts``)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seed": list(self.seeds), "headlines": [h.to_json() for h in self.headlines],
                               "emulation": {"ran": self.emulation_ran, "why": self.emulation_why}}
        for k, v in (self.extra or {}).items():
            out.setdefault(k, v)
        return out

    def counts(self) -> dict[str, int]:
        """Headlines per verdict, in :data:`VERDICTS` order."""
        return {v: sum(h.verdict == v for h in self.headlines) for v in VERDICTS}


def write(path: Path, seeds: Iterable[str], headlines: Sequence[Headline], emulation_ran: bool,
          emulation_why: str, **extra: Any) -> Path:
    """Write ``summary.json`` (the caller wraps it in :func:`dcnlab.experiments.outputs.writing`)."""
    s = Summary(sorted(set(seeds)), list(headlines), emulation_ran, emulation_why, extra or None)
    path.write_text(json.dumps(s.to_json(), indent=1) + "\n")
    return path


def read(path: Path) -> Summary:
    """Read a ``summary.json``; ``ValueError`` when it is not in this shape."""
    data = json.loads(Path(path).read_text())
    try:
        heads = [Headline.from_json(h) for h in data["headlines"]]
        emu = data["emulation"]
        seeds = data["seed"]
        extra = {k: v for k, v in data.items() if k not in ("seed", "headlines", "emulation")}
        return Summary(list(seeds) if isinstance(seeds, list) else [seeds], heads, bool(emu["ran"]),
                       str(emu["why"]), extra or None)
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a summary.json ({type(e).__name__}: {e})") from None
