"""The settings each paper leaves open, as data: what the search of issue 25 §2 chooses among.

A reproduction has to fix things its paper never states: the size of a random pattern, the order in
which groups join, which variant of an under-specified baseline runs, a counting window. Fixing each
one arbitrarily, or picking per headline whatever matches, makes the verdicts meaningless. The method
(:mod:`dcnlab.experiments.settings_search`, ``dcnlab reproduce search``):

1. every open setting of a paper is listed here, with the sentence of the paper (or of its report in
   ``/work/shared/papers``) that leaves it open, and a few candidate values, **the reading the text
   supports best first** (that order breaks ties);
2. the search runs the cross product of the candidates and counts, under each setting, how many of
   the paper's statements (its headlines, :mod:`dcnlab.experiments.headlines`) hold **at the same
   time**; a value that is a draw (an order, a seed) is run over several draws, each figure reported as
   a range and its median judged;
3. **one setting per paper** is chosen, the one under which the most statements hold; ties go to the
   deterministic setting, then to the earliest values in the lists below (the simplest reading);
4. the reproduction's defaults are the chosen setting (``tests/test_open_settings.py`` checks it), and
   ``dcnlab reproduce all``'s report shows the search table of every paper that has one.

Where a paper's figure is impossible under its own stated rule, :data:`BOUNDS` names the rule, and the
search computes the bound and the figure of the reading that does give it.

Settings that are listed but not searched (``searched=False``) say why in ``note`` (too costly for the
search, or already measured reading by reading in :mod:`dcnlab.experiments.readings`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

PAPERS = ("000", "001", "002", "003", "004")


@dataclass(frozen=True)
class OpenSetting:
    """One setting a paper leaves open, and the candidate values the search tries."""

    paper: str
    name: str
    what: str
    values: tuple[str, ...]
    """Candidates, the reading the text supports best first (ties in the search go to earlier values)."""
    default: str
    """What the reproduction ran before the search (issue 25)."""
    sentence: str
    """The sentence that leaves it open, quoted."""
    where: str
    """Where the sentence is: ``report 001 §6.1`` (``/work/shared/papers``) or the paper's section."""
    random: tuple[str, ...] = ()
    """Values that are draws: each is run over several draws (a range, the median judged)."""
    searched: bool = True
    note: str = ""

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
             "paper's 69) grows with the number of groups (issue 25 §2)."),
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
        note="Measured reading by reading on the 1,000 random groups (readings/fattree_multicast_001.py, "
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
        "compared with the existing method.", "report 000 §5.2",
        note="link-bound: the busiest directed link's units (no aggregation on its primary BCubeRouting paths); "
             "link-bound-ecmp: no aggregation spread evenly over the receiver's k+1 links; reduce-bound: the "
             "receiver's input (dcnlab.controller.aggregation.waiting)."),
    # -- 002: IB CC ----------------------------------------------------------------------------------------
    OpenSetting(
        "002", "ccti-timer", "the CCTI timer's semantics",
        ("reset", "free"), "reset",
        "Algorithm 1 resets the timer on every BECN ... In the Linux hfi1 driver the timer is started if not "
        "already running and is not reset by BECNs. The two give different dynamics.", "report 002 §7 item 2", searched=False,
        note="Both semantics measured beside each reading of the BECN counts and the recovery times "
             "(readings/ib_cc_002.py); no search yet: every scenario of reproduce congestion would run twice."),
    OpenSetting(
        "002", "becn-window", "the window the BECN counts 790/480/320 are counted in",
        ("per-100ms", "per-1s", "per-phase"), "per-100ms",
        "the D->B source receives '790, 480 and 320' BECNs with 1, 2 and 3 tenant-2 flows (the sampling "
        "interval is not stated; the only interval the text gives is Fig. 3's 'throughput is sampled every "
        "100 ms')", "report 002 §6.4", searched=False,
        note="Measured reading by reading (readings/ib_cc_002.py); no search yet."),
    OpenSetting(
        "002", "recovery-threshold", "when a flow has 'recovered' after a departure",
        ("90%", "80%", "95%"), "90%",
        "after flows leave, tenant 2's remaining flows speed up 'relatively slowly', over 5–7 s and 7–8 s "
        "(no criterion of recovery is given)", "report 002 §6.4 (Fig. 5(a))", searched=False,
        note="Measured reading by reading (readings/ib_cc_002.py); no search yet."),
    # -- 003: SRS ------------------------------------------------------------------------------------------
    OpenSetting(
        "003", "steiner-baseline", "the Steiner-based baseline's tree (dcnlab.controller.aggregation.steiner_readings)",
        ("kmb", "kmb-member-agg", "kmb-member-agg-bundled", "kmb-switch-graph", "kmb-switch-graph-member-agg",
         "kmb-shuffle-tree", "kmb-shuffle-tree-member-agg", "kmb-random-order", "kmb-random-order-member-agg",
         "mst-overlay"), "kmb",
        "Steiner-based, after [27]: build a complete graph on the members, take its MST, replace each "
        "virtual edge with a shortest path, prune unneeded links. [Inference] This is KMB.",
        "report 003 §5 (Baselines)", random=("kmb-random-order", "kmb-random-order-member-agg"), searched=False,
        note="Measured reading by reading (readings/bcube_shuffle_003.py); no search yet: the BCube(8,5) "
             "readings take tens of CPU minutes."),
    OpenSetting(
        "003", "delta-reading", "how 'δ uniform on [0,1]' turns the Fig. 6 curve into one saving "
        "(dcnlab.controller.aggregation.ratio_readings)",
        ("curve-mean", "per-job", "per-receiver", "per-node", "per-server", "once-per-tree", "vs-srs-no-agg"),
        "curve-mean",
        "Aggregation ratio δ: merging s flows gives max f_i + δ·(Σf_i − max f_i) ... BCube(8,5), δ uniform on "
        "[0,1], m = n = 250 (Fig. 6(a)): 28.78%", "report 003 §5 and §6", random=("per-job",), searched=False,
        note="Measured reading by reading (readings/bcube_shuffle_003.py); no search yet."),
    OpenSetting(
        "003", "size-average", "how the Fig. 5 sweep m = n = 50..1500 is averaged",
        ("plain", "by-members", "by-traffic"), "plain",
        "BCube(8,5), m = n = 50…1500 (100–3,000 members) (Fig. 5): 55.33% (an average; the figure's values "
        "are not recoverable)", "report 003 §6", searched=False,
        note="Measured reading by reading (readings/bcube_shuffle_003.py); no search yet."),
    # -- 004: CISTs -----------------------------------------------------------------------------------------
    OpenSetting(
        "004", "instances", "the Dragonfly instances the theorems are checked on",
        ("paper-worked+sweep",), "paper-worked+sweep",
        "Experiments and simulations: none. The only concrete instance is the hand-worked D(p,4,2): g = 9, "
        "36 switches, 2 CISTs.", "report 004 §4", searched=False,
        note="Every statement of 004 is a theorem checked on every instance of the sweep (and the worked "
             "D(4,2)); no open setting changes whether one holds, so there is nothing to search."),
    OpenSetting(
        "004", "arrangement", "the global-link arrangement of the Dragonfly",
        ("relative", "absolute", "circulant"), "relative",
        "Use the corrected absolute and circulant link formulas in §1.3. The circulant arrangement needs "
        "even h.", "report 004 §6 item 3", searched=False,
        note="Each theorem is stated for its own arrangement; the sweep runs all three."),
)
"""Every open setting of the five papers."""

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
    path = resources.files("dcnlab.experiments").joinpath("search_tables", f"{paper}.json")
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def chosen(paper: str) -> dict[str, str] | None:
    """The setting the committed search chose for ``paper`` (name -> value), or None without a search."""
    s = stored_search(paper)
    return dict(s["chosen"]) if s else None
