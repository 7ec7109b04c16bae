"""The words every judgement of dcnlab uses, in one place.

Two vocabularies:

* a benchmark line that judges says ``ok (goal ...)`` or ``MISS (goal ...)`` (:func:`verdict`);
* a headline of a paper (:mod:`dcnlab.results.summary`) gets one of :data:`FIGURE_VERDICTS` per figure of ours
  (the model's, BMv2's) and one of :data:`VERDICTS` overall; :data:`LEGEND` says what each means, and the
  report prints it (:func:`legend_lines`).

How a figure is judged (:func:`dcnlab.results.summary.verdict`): a figure that comes from random draws carries its
spread over the rounds (the standard error of the mean, ``se``) and its 95% interval ``figure ± t se``, t
Student's quantile for the rounds' degrees of freedom (:func:`dcnlab.results.summary.quantile`; :data:`Z95` when
the count is unknown); the verdict is taken on the whole interval, not on the figure alone. A statement about every point
of a sweep ("fewest", "every", "always", "at every k") is judged at its worst point, the mean over the points
reported beside it.
"""

from __future__ import annotations

REPRODUCED = "reproduced"
TREND = "trend"
UNSTABLE = "unstable"
FLAT = "flat"
DEVIATES = "deviates"
INCONSISTENT = "inconsistent"
NOT_RUN = "not run"
NOT_JUDGED = "not judged"
MODEL_ONLY, BMV2_ONLY = "model only", "BMv2 only"

FIGURE_VERDICTS = (REPRODUCED, TREND, UNSTABLE, FLAT, DEVIATES, INCONSISTENT, NOT_RUN, NOT_JUDGED)
"""The verdicts of one figure (the model's or BMv2's)."""
VERDICTS = (REPRODUCED, MODEL_ONLY, BMV2_ONLY, TREND, UNSTABLE, FLAT, DEVIATES, INCONSISTENT, NOT_RUN, NOT_JUDGED)
"""The verdicts of a headline (its figures' verdicts combined)."""

Z95 = 1.96
"""A 95% interval of a figure from many rounds (or an unknown count) is the figure ± this many standard errors;
from n rounds, Student's t with n - 1 degrees of freedom (:func:`dcnlab.results.summary.quantile`)."""

LEGEND: dict[str, str] = {
    REPRODUCED: "our figure, its whole 95% interval where it comes from random draws, lies within the tolerance of "
                "the paper's (a percentage ±3 points, a ratio ±10%, a count exactly), or goes in the stated "
                "direction; a statement about every point holds at its worst point",
    MODEL_ONLY: "the model's figure is reproduced, BMv2's is not",
    BMV2_ONLY: "BMv2's figure is reproduced, the model's is not",
    TREND: "outside the tolerance, but in a direction the paper states (e.g. 'M2 saves more than IRS': above 0)",
    UNSTABLE: "the 95% interval over the rounds (Student's t for their count) straddles an edge of the tolerance, "
              "or the figure lies within 2 standard errors of an edge (or a reading decides it) and the verdict did "
              "not hold at 3 seeds: more rounds could turn it either way, so it is neither reproduced nor a miss",
    FLAT: "a trend or comparison whose 95% interval contains its reference (0 for a change, 1 for a ratio): the "
          "difference is within the noise of the rounds, so no direction is shown",
    DEVIATES: "outside the tolerance and not in a stated direction, or a claim about random draws that fails on "
              "one of them",
    INCONSISTENT: "two sentences of the paper contradict each other by its own arithmetic (or a bound its own rules "
                  "imply): both are quoted with the arithmetic; no reading can reproduce both",
    NOT_RUN: "we have no figure yet; the reading says why",
    NOT_JUDGED: "a figure of ours with nothing in the paper to judge it by (e.g. a model of a quantity the paper "
                "gives no model for): shown, not a verdict; the reading says why",
}
"""What each verdict means (the report's legend)."""


def legend_lines() -> list[str]:
    """``verdict: meaning``, one line per verdict, in :data:`VERDICTS` order."""
    return [f"{v}: {LEGEND[v]}" for v in VERDICTS]


def verdict(ok: bool, goal: str) -> str:
    """``ok (goal <= 10 s)`` or ``MISS (goal <= 10 s)``: a benchmark line that judges names what it judged
    against (``goal``: e.g. ``<= 10 s, <= 3 GiB``), so that a ``MISS`` needs no ``--help`` to be read."""
    return f"{'ok' if ok else 'MISS'} (goal {goal})"
