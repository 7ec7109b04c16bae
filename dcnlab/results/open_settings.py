"""The settings each paper leaves open, as data, and the method that chooses among them (written once here; the
report prints :data:`METHOD`).

A reproduction has to fix things its paper never states: the size of a random pattern, the order in which groups
join, which variant of an under-specified baseline runs, a counting window. Fixing each one arbitrarily, or picking
per headline whatever matches, makes the verdicts meaningless; so does picking, one level up, the setting whose
figures lie closest to the paper's. The method (:mod:`dcnlab.report.search`, ``dcnlab reproduce search``):

1. every open setting of a paper is listed here, with the sentence that leaves it open and its candidate values,
   **the reading the text supports best first**; what a paper uses once is one setting for the whole paper (one
   averaging rule for every "on average" of the paper, one way of counting, one baseline);
2. **a reading that contradicts the paper's text is never a candidate**: it stays among the values (and among
   the readings of :mod:`dcnlab.results.readings`, with its figure), labelled ``contradicts §x: "<the paper's
   sentence>"`` (:attr:`OpenSetting.contradicts`), and the search never runs it;
3. the search runs the cross product of the candidates and counts, under each, how many of the paper's
   statements (its headlines, ``dcnlab/reproduce/<mechanism>/headlines.py``) hold **at the same time**; a value
   that is a draw (an order, a seed) is run over several draws, the median draw judged, the range shown;
4. **one setting per paper** is chosen: the one under which the most statements hold. The choice never looks at
   the paper's figures beyond that count: ties go to the reading the text supports best (the earliest values of
   the lists, the first setting's first), then to the deterministic setting;
5. the reproduction's defaults are the chosen setting (``tests/test_open_settings.py`` checks it), and
   ``dcnlab reproduce all``'s report shows, per paper, the search table, the chosen setting and the runner-up
   (the next in that order), and the readings dropped as contradicting the text with their sentences.

Where a paper's figure is impossible under its own stated rule, :data:`BOUNDS` names the rule, and the
search computes the bound and the figure of the reading that does give it; such a statement's verdict is
``inconsistent`` (:mod:`dcnlab.results.goals`).

Settings that are listed but not searched (``searched=False``) say why in ``note`` (too costly for the
search, already measured reading by reading in :mod:`dcnlab.results.readings`, or a quantity the paper gives
no model for, whose headline shows every model's figure). :data:`NOTHING_TO_SEARCH` names the papers none of
whose open settings can change a statement, and why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

PAPERS = ("000", "001", "002", "003", "004")

METHOD = ("Every setting a paper leaves open is listed with the sentence that leaves it open and its candidate "
          "readings, the one the text supports best first; what a paper uses once (an averaging rule, a way of "
          "counting, a baseline) is one setting for the whole paper. A reading that contradicts the paper's text is "
          "never a candidate: it is kept among the readings, labelled 'contradicts §x' with the paper's sentence and "
          "its figure. Under each candidate setting the search counts the paper's statements that hold at the same "
          "time, judged by the verdict rule above (spread, worst point, inconsistent pairs); the setting under which "
          "the most hold is chosen, and the reproduction runs it. The choice never looks at the paper's figures "
          "beyond that count: ties go to the reading the text supports best (each list's order), then to the "
          "deterministic one. Each paper's search table below shows the chosen setting and the runner-up.")
"""The method in one paragraph (the report prints it; the module docstring says it at length)."""


@dataclass(frozen=True)
class OpenSetting:
    """One setting a paper leaves open, and the candidate values the search tries."""

    paper: str
    name: str
    what: str
    values: tuple[str, ...]
    """Candidates, the reading the text supports best first (ties in the search go to earlier values)."""
    default: str
    """What the reproduction ran before its first search."""
    sentence: str
    """The sentence that leaves it open, quoted."""
    where: str
    """Where the sentence is: ``report 001 §6.1`` (``/work/shared/papers``) or the paper's section."""
    random: tuple[str, ...] = ()
    """Values that are draws: each is run over several draws (a range, the median judged)."""
    searched: bool = True
    note: str = ""
    contradicts: tuple[tuple[str, str, str], ...] = ()
    """Values the paper's text rules out, each as (value, section, the paper's sentence that rules it out): never
    a candidate of the search, still measured among the readings."""

    def __post_init__(self) -> None:
        if self.paper not in PAPERS:
            raise ValueError(f"open setting {self.name}: paper {self.paper!r}; valid: {', '.join(PAPERS)}")
        if not self.values or self.default not in self.values:
            raise ValueError(f"open setting {self.paper}/{self.name}: default {self.default!r} not among "
                             f"{self.values}")
        if not self.sentence.strip() or not self.where.strip():
            raise ValueError(f"open setting {self.paper}/{self.name}: no sentence or no place")
        if set(self.random) - set(self.values):
            raise ValueError(f"open setting {self.paper}/{self.name}: random values not among its values")
        for value, where, sentence in self.contradicts:
            if value not in self.values or not where.strip() or not sentence.strip():
                raise ValueError(f"open setting {self.paper}/{self.name}: contradiction {value!r} needs one of its "
                                 "values, a section and the paper's sentence")
        if not self.candidates:
            raise ValueError(f"open setting {self.paper}/{self.name}: every value contradicts the text")

    @property
    def candidates(self) -> tuple[str, ...]:
        """The values the search may choose: those the text does not rule out, in list order."""
        ruled_out = {v for v, _, _ in self.contradicts}
        return tuple(v for v in self.values if v not in ruled_out)

    def contradiction(self, value: str) -> str | None:
        """``contradicts §5.1: "<the sentence>"`` for a value the text rules out, else None."""
        for v, where, sentence in self.contradicts:
            if v == value:
                return f'contradicts {where}: "{sentence}"'
        return None


@dataclass(frozen=True)
class Bound:
    """A paper's figure that its own stated rule cannot give: the rule, and the reading that gives it."""

    paper: str
    statement: str
    figure: str
    rule: str
    reading: str
    how: str
    """How the bound is computed."""


STEINER_PER_RECEIVER = ("The Steiner-based shuffle subgraph is similar to the incast-based one but each aggregation "
                        "tree results from the Steiner-tree algorithm.")
"""003 §5.1: one Steiner tree per receiver (an incast's aggregation tree), not one over the shuffle."""
MERGE_RULE = ("Data flows each of which consists of key-value pairs can be aggregated as a new one whose size is the "
              "largest size among such flows.")
"""003 §5.4 (recalling §3.1): merged flows are as large as the largest, never their sum."""

SETTINGS: tuple[OpenSetting, ...] = (
    # -- 001: C-MR4LMS ------------------------------------------------------------------------------------
    OpenSetting(
        "001", "join-order", "the order in which a grid pattern's groups (its lines) join",
        ("xyz", "zyx", "shuffle"), "xyz",
        "Patterns: 2D and 3D grid communicators, plus random join patterns, with 1 and 4 processes per "
        "terminal. (No order of the join requests is given; MR4LMS's trees are 'history-dependent', they "
        "'change on recomputation or rerun'.)",
        "report 001 §6.1 and §4 item 3", random=("shuffle",),
        note="xyz: every x-line, then y, then z (the order the grid is built); zyx: z-lines first; shuffle: a "
             "random order (a draw). Pattern syntax: AxBxC:order=zyx, AxBxC:order=shuffle:seed=S."),
    OpenSetting(
        "001", "random-1ppn-groups", "the number of groups of the random 1-ppn patterns",
        ("1000", "2000", "5000"), "1000",
        "| 1 | 512×64, 181×181, 100×327, 64×32×16, 32×32×32, 25×50×26, three random patterns | (their sizes "
        "are never given; only the 4-ppn pattern is named: a '1,000 random groups' pattern)",
        "report 001 §6.1 (table of patterns)",
        note="1,000 follows the one size the paper names (its 4-ppn pattern); C-MR4LMS's max EFI (the "
             "paper's 69) grows with the number of groups."),
    OpenSetting(
        "001", "random-seed", "the draw of the random patterns (which processes join which group)",
        ("draws",), "draws",
        "'processes randomly join a group' (three random patterns at 1 ppn, random patterns at 4 ppn; no "
        "seed, no pattern given)", "report 001 §6.1", random=("draws",),
        note="Always a draw: every setting runs the random patterns with seeds 1..D (D draws, 3 by default), "
             "each figure a range over the draws and the median judged; the reproduction runs seed 1."),
    OpenSetting(
        "001", "dynamic-root-candidates", "the root candidates of C-MR4LMS-dynamic",
        ("tn", "group"), "tn",
        "C-MR4LMS-dynamic: treats every L3 switch in TN tnid as a candidate and 'chooses a suitable one, "
        "preferring lower load'. The load measure is not defined.",
        "report 001 §3.6", searched=False,
        note="Not open: the text states the candidates (the L3 switches of TN tnid, 'tn'). Its max TFI 1 on "
             "64×32×16 and 32×32×32 is impossible under that rule (BOUNDS); 'group' (every TN of the TN "
             "group) is our extension, measured beside it (cmr4lms-dynamic/group)."),
    OpenSetting(
        "001", "mr4lms-merge", "MR4LMS's merge: which groups are 'similar', and the table scope",
        ("any-color/link", "same-color/link", "any-color/switch", "same-color/switch"), "any-color/link",
        "If n 'similar' groups have no entry left, they are merged to share one tree. 'Similar' is not "
        "defined.", "report 001 §4 item 3", searched=False,
        note="Measured reading by reading on the 1,000 random groups (reproduce/multicast/readings.py, "
             "1.5-8 minutes each): too costly for the cross product. The per-switch table contradicts the "
             "paper's 'MR4LMS never merges' at 1 ppn (33-34 groups under one L0 at 1 ppn)."),
    # -- 000: M2 --------------------------------------------------------------------------------------------
    OpenSetting(
        "000", "irs-baseline", "the IRS-based baseline M2 is compared with",
        ("no-intra", "intra"), "intra",
        "It derives the next layer's nodes 'by adjusting the same dimension of the previous layer's nodes'. "
        "... IRS-based is under-specified here; take the details from [13].",
        "report 000 §2.1 and §6 item 12",
        note="no-intra: IRS as 000 describes it (no intra-stage step); intra: with 003's intra-stage step "
             "(the IRS of ref. [13] as 003 gives it)."),
    OpenSetting(
        "000", "average", "how a saving is averaged over the points of a sweep",
        ("mean-of-points", "pooled"), "mean-of-points",
        "Across sender counts: M2-based saves about 19% of network data compared with IRS-based. (These "
        "statements come from the abstract only. The body never quotes them.)", "report 000 §5.4",
        note="mean-of-points: 1 - M2/IRS per point, averaged; pooled: 1 - sum(M2)/sum(IRS)."),
    OpenSetting(
        "000", "sender-sweep", "the sender counts averaged for the 'across sender counts' figures",
        ("100..4000", "table-2"), "100..4000",
        "m ∈ {100, 200, …, 3900, 4000} ... Table 2 ... its columns are 1000, 1500, 2000 and 3000, apparently "
        "sender counts. Values missing.", "report 000 §5.3"),
    OpenSetting(
        "000", "k-sweep", "the network sizes averaged for the 'across network sizes' figures",
        ("2..8", "2..6"), "2..8",
        "Placement. Senders and the receiver get random BCube labels in BCube(6,k) with 2 ≤ k ≤ 8. ... Note "
        "that the setup says 2 ≤ k ≤ 8 but Table 1 covers k = 2–6.", "report 000 §5.1 and §5.2"),
    OpenSetting(
        "000", "wait-model", "what bounds the shuffle+reduce waiting time (Tables 1 and 2)",
        ("link-bound", "link-bound-ecmp", "reduce-bound"), "link-bound",
        "Table 1. 'Effect of network size on shuffle and reduce completion time'. ... All values are missing "
        "from the text. The only claim is that M2-based clearly cuts the shuffle+reduce waiting delay "
        "compared with the existing method.", "report 000 §5.2", searched=False,
        note="Not searched: the paper gives no model of the waiting time, so no model is 'the' reading; the "
             "headlines show the figure of every model and hold only under every one. link-bound: the busiest directed link's units (no aggregation on its primary BCubeRouting paths); "
             "link-bound-ecmp: no aggregation spread evenly over the receiver's k+1 links; reduce-bound: the "
             "receiver's input (dcnlab.controller.aggregation.waiting)."),
    # -- 002: IB CC ----------------------------------------------------------------------------------------
    OpenSetting(
        "002", "ccti-timer", "the CCTI timer's semantics",
        ("reset", "free"), "reset",
        "Algorithm 1 resets the timer on every BECN ... In the Linux hfi1 driver the timer is started if not "
        "already running and is not reset by BECNs. The two give different dynamics.", "report 002 §7 item 2",
        contradicts=(("free", "Algorithm 1 (§4.1)", "4. if receive BECN && CCTI < CCTI_Limit then 5. CCTI = CCTI + "
                      "CCTI_Increase 6. IRD = CCT[CCTI] 7. Timer = 0 8. endif"),),
        note="reset: Algorithm 1 (a BECN restarts the timer; the paper's pseudo-code); free: the specification's "
             "free-running timer (hfi1), which Algorithm 1 rules out (it resets the timer on a BECN). Every model run with CC runs once per semantics in the search "
             "(reproduce/congestion/search.py); the readings (reproduce/congestion/readings.py) show both beside each other."),
    OpenSetting(
        "002", "becn-window", "the window the BECN counts 790/480/320 are counted in",
        ("per-100ms", "per-1s", "per-phase"), "per-100ms",
        "the D->B source receives '790, 480 and 320' BECNs with 1, 2 and 3 tenant-2 flows (the sampling "
        "interval is not stated; the only interval the text gives is Fig. 3's 'throughput is sampled every "
        "100 ms')", "report 002 §6.4",
        note="per-100ms: the settled mean per 100 ms sample (Fig. 3's interval); per-1s: the same per second; "
             "per-phase: every BECN of the 2 s phase, transients included. The ratios 480/790 and 320/790 "
             "are the same under the first two."),
    OpenSetting(
        "002", "recovery-threshold", "when a flow has 'recovered' after a departure",
        ("90%", "80%", "95%"), "90%",
        "after flows leave, tenant 2's remaining flows speed up 'relatively slowly', over 5–7 s and 7–8 s "
        "(no criterion of recovery is given)", "report 002 §6.4 (Fig. 5(a))",
        note="A remaining flow has recovered when it first reaches this fraction of its new steady rate "
             "(dcnlab.controller.congestion.scenarios.summarize_recovery)."),
    OpenSetting(
        "002", "cct-pacing", "how the IRD paces a QP (Algorithm 2's 4-packet aggregate, per packet, or the paper's "
        "arithmetic)", ("aggregate-4", "per-packet", "paper-formula"), "aggregate-4",
        "Whether the IRD applies per packet or per 4-packet aggregate. The paper's 100 Mb/s arithmetic divides by 4. "
        "Physically, waiting one IRD per 4 × 1024 B would give 1.6 Gb/s at 20.48 µs; one IRD per packet would give "
        "400 Mb/s.", "report 002 §7 item 4", searched=False,
        note="Measured reading by reading on Fig. 4's pinned QP (reproduce/congestion/readings.py; only paper-formula gives the "
             "paper's 100 Mb/s). Not searched: it is the pacer of every run with CC, and the CCT (14·i²/11236 µs) "
             "was chosen for Algorithm 2's 4-packet pacing, so a search would have to rescale the CCT with it."),
    # -- 003: SRS ------------------------------------------------------------------------------------------
    OpenSetting(
        "003", "steiner-baseline", "the Steiner-based baseline's tree (dcnlab.controller.aggregation.steiner_readings)",
        ("kmb", "kmb-member-agg", "kmb-member-agg-bundled", "kmb-switch-graph", "kmb-switch-graph-member-agg",
         "kmb-shuffle-tree", "kmb-shuffle-tree-member-agg", "kmb-random-order", "kmb-random-order-member-agg",
         "mst-overlay"), "kmb",
        "Steiner-based, after [27]: build a complete graph on the members, take its MST, replace each "
        "virtual edge with a shortest path, prune unneeded links. [Inference] This is KMB.",
        "report 003 §5 (Baselines)", random=("kmb-random-order", "kmb-random-order-member-agg"),
        contradicts=(("kmb-shuffle-tree", "§5.1", STEINER_PER_RECEIVER),
                     ("kmb-shuffle-tree-member-agg", "§5.1", STEINER_PER_RECEIVER),
                     ("kmb-member-agg-bundled", "§5.4", MERGE_RULE)),
        note="The readings of dcnlab.controller.aggregation.steiner_readings (each also in reproduce/"
             "aggregation/readings_003.py); the two over all m + n members build one tree for the shuffle, where "
             "the text builds one per receiver, and the bundled charge keeps two merged flows at their sum. The "
             "search runs the others at a reduced scale (reproduce/aggregation/search_003.py: 20 rounds per k on "
             "BCube(6,k), one round per point on BCube(8,5)): the ten at the reproduction's 20 rounds per point "
             "would take about two CPU hours."),
    OpenSetting(
        "003", "delta-reading", "how 'δ uniform on [0,1]' turns the Fig. 6 curve into one saving "
        "(dcnlab.controller.aggregation.ratio_readings)",
        ("curve-mean", "per-job", "per-receiver", "per-node", "per-server", "once-per-tree", "vs-srs-no-agg"),
        "curve-mean",
        "Aggregation ratio δ: merging s flows gives max f_i + δ·(Σf_i − max f_i) ... BCube(8,5), δ uniform on "
        "[0,1], m = n = 250 (Fig. 6(a)): 28.78%", "report 003 §5 and §6", random=("per-job",),
        contradicts=(("vs-srs-no-agg", "§5.4", "In such a case, our SRS-based method saves the resultant network "
                      "traffic by 28.78% in Fig.6(a) and 45.05% in Fig.6(b) compared to the existing method, "
                      "respectively."),),
        note="The readings of dcnlab.controller.aggregation.ratio_readings; vs-srs-no-agg: the curve's mean "
             "against SRS without aggregation (Fig. 7's baseline, not the existing method the text names). Searched "
             "on 3 rounds per size (reproduce/aggregation/search_003.py)."),
    OpenSetting(
        "003", "average", "how every 'on average' of 003 averages a sweep: Fig. 4(a) over k and Fig. 5 over m = n "
        "alike", ("plain", "by-members", "by-traffic"), "plain",
        "the SRS-based, incast-based, Steiner-based, and unicast-based methods save the network traffic by 32.87%, "
        "32.69%, 28.76%, and 17.64% on average compared to the existing method (§5.2); ... by 55.33%, 55.29%, "
        "44.89%, and 34.46% on average compared to the existing method as m=n ranges from 50 to 1500 (§5.3)",
        "§5.2 and §5.3",
        note="One rule for the paper (the same words in both sections): plain: each point weighs the same; "
             "by-members: weighted by m + n (the same as plain over k, where m = n = 60); by-traffic: pooled, one "
             "minus the sum of the method's traffic over the sum of no aggregation's."),
    OpenSetting(
        "003", "counting", "how the aggregating servers of a shuffle are counted (Fig. 4(c), Fig. 5(c), §5.2's "
        "'Steiner-based uses fewer')", ("distinct", "summed"), "distinct",
        "They are the resultant network traffic, the number of active links, the number of cache servers, and the "
        "input data size at each receiver. (Whether a server aggregating in several receivers' trees counts once or "
        "once per tree is not said.)", "§5.1",
        note="distinct: each server once; summed: once per incast tree it aggregates in (SRS: per entry tree)."),
    # -- 004: CISTs -----------------------------------------------------------------------------------------
    OpenSetting(
        "004", "instances", "the Dragonfly instances the theorems are checked on",
        ("paper-worked+sweep",), "paper-worked+sweep",
        "Experiments and simulations: none. The only concrete instance is the hand-worked D(p,4,2): g = 9, "
        "36 switches, 2 CISTs.", "report 004 §4", searched=False,
        note="Every statement of 004 is a theorem checked on every instance of the sweep (and the worked "
             "D(4,2)); no open setting changes whether one holds, so there is nothing to search."),
    OpenSetting(
        "004", "failures", "which switches and links fail in the CIST-property check",
        ("random-draws",), "random-draws",
        "Broadcast over the k CISTs survives up to k−1 failures (the CIST property; no failure pattern and no "
        "experiment is given: 'Experiments and simulations: none')", "report 004 §2 and §4", searched=False,
        random=("random-draws",),
        note="The property is a theorem for every set of at most k−1 failed elements (no pair loses all k "
             "independent paths), so a draw of failures can only find a construction error, never change what "
             "the paper states; the BMv2 experiment adds the adversarial set that cuts one pair in every tree."),
    OpenSetting(
        "004", "timing-sizes", "the sizes N over which the construction time is measured (Theorems 5-7, O(N))",
        ("a=2h, a=8..",), "a=2h, a=8..",
        "Theorem 5: Algorithm 1 is O(N), N = number of vertices ... (no sizes, no measurement: 'Experiments and "
        "simulations: none')", "report 004 §4", searched=False,
        note="O(N) is asymptotic: it holds or not whatever sizes are timed, the sizes only set how well the slope is "
             "measured (dcnlab.reproduce.cist.scaling says why a = 2h from a = 8 and the threshold 1.15); choosing "
             "sizes to make a slope pass would be fitting the verdict, not reading the paper."),
    OpenSetting(
        "004", "arrangement", "the global-link arrangement of the Dragonfly",
        ("relative", "absolute", "circulant"), "relative",
        "Use the corrected absolute and circulant link formulas in §1.3. The circulant arrangement needs "
        "even h.", "report 004 §6 item 3", searched=False,
        note="Each theorem is stated for its own arrangement; the sweep runs all three."),
)
"""Every open setting of the five papers."""

NOTHING_TO_SEARCH = {
    "004": "every statement of 004 is a theorem (⌊a/2⌋ CISTs, the CIST property, O(N)) or its worked D(4,2); the "
           "reproduction checks each on every instance of its sweep (all three arrangements, each theorem under its "
           "own) and holds on all of them, and none of the settings listed above can change whether a theorem "
           "holds (failure draws only look for a construction error, timing sizes only measure a slope), so no "
           "setting has candidates to choose among.",
}
"""Papers whose open settings cannot change a statement, and why (the report says so instead of a table)."""

BOUNDS: tuple[Bound, ...] = (
    Bound("001", "C-MR4LMS-dynamic max TFI 1 on 64×32×16 and 32×32×32 (1 ppn, Fig. 9)", "1 and 1",
          "the dynamic variant's root candidates are the L3 switches of TN tnid (report 001 §3.6)",
          "group: every L3 switch of every TN of the TN group (cmr4lms-dynamic/group)",
          "groups on one spanning tree (same color, same TN) that share a forced link must share a tree "
          "whatever top switch is chosen: an L0–L1 link (both span more than one L0 under that L0) or an "
          "L1–L2 link (both span more than one CN through that CN); the largest connected set of such "
          "groups bounds max TFI from below. Under the group reading only the L0–L1 links are forced."),
)


def settings(paper: str) -> tuple[OpenSetting, ...]:
    """The open settings of ``paper``."""
    return tuple(s for s in SETTINGS if s.paper == paper)


def searched(paper: str) -> tuple[OpenSetting, ...]:
    """The settings the search varies for ``paper`` (a draw-only setting such as a seed is not varied: every
    setting runs over the draws)."""
    return tuple(s for s in settings(paper) if s.searched and len(s.values) > 1)


@lru_cache(maxsize=8)
def stored_search(paper: str) -> dict[str, Any] | None:
    """The search of ``paper`` as measured and committed (``search_tables/<paper>.json``), or None."""
    path = resources.files("dcnlab.results") / "search_tables" / f"{paper}.json"   # Traversable.joinpath takes one name before 3.11
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def chosen(paper: str) -> dict[str, str] | None:
    """The setting the committed search chose for ``paper`` (name -> value), or None without a search."""
    s = stored_search(paper)
    return dict(s["chosen"]) if s else None
