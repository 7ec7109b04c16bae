"""The settings each paper leaves open, as data, and the method that fixes them (written once here; the report
prints :data:`METHOD`).

A reproduction has to fix things its paper never states: the size of a random pattern, the order in which groups
join, which variant of an under-specified baseline runs, a counting window, a marking rate. Fixing each one
arbitrarily, or picking per headline whatever matches, makes the verdicts meaningless; so does picking, one level
up, the setting under which the most statements hold, which is closeness to the paper by another name. The method:

1. **pre-registered readings.** Every open setting of a paper is listed here with the sentence that leaves it open
   (:attr:`OpenSetting.sentence`, :attr:`OpenSetting.where`) and its admissible readings, **the pre-registered
   reading first**: the reading the paper's text supports best, fixed from the text alone before any result is
   seen, its one-line argument the first sentence of :attr:`OpenSetting.note`; where the text gives no ground at
   all, the simplest reading, declared as such. No outcome, count of holding statements or figure of the paper
   enters the choice. What a paper uses once is one setting for the whole paper (one averaging rule for every
   "on average", one way of counting, one baseline), and the paper's model and BMv2 experiment run the same
   setting (where BMv2 cannot, the report says so and runs the model at BMv2's setting beside it).
   :func:`preregistered` gives it; the reproductions' defaults are it (``tests/test_open_settings.py`` checks it);
2. **a reading that contradicts the paper's text is never run as one**: it stays among the values (and among the
   readings of :mod:`dcnlab.results.readings`, with its figure), labelled ``contradicts §x: "<the paper's
   sentence>"`` (:attr:`OpenSetting.contradicts`);
3. **the other readings are a sensitivity analysis, not a search.** ``dcnlab reproduce search`` (a searcher with
   ``preregistered = True``, :func:`dcnlab.report.search.one_at_a_time`) runs the pre-registered setting, then
   every other admissible reading **one setting at a time** with the rest pre-registered; a value that is a
   draw (an order, a seed) runs over the reproduction's draws, with its spread. The committed table
   (``search_tables/<paper>.json``, :func:`stored_search`) gives per headline and reading the figure and the
   verdict; a headline whose verdict some reading flips is marked ``depends on <setting>`` with the readings that
   flip it, keeps the pre-registered figure, and is judged again by the report's rule (a verdict a reading
   decides holds only at 3 seeds, else ``unstable``);
4. **the headline counts are those of the pre-registered readings only**: nothing is chosen by how many
   statements hold under a reading, and the report prints each paper's sensitivity table beside them, with
   the readings dropped as contradicting the text and their sentences.

Where a paper's figure is impossible under a rule, :data:`BOUNDS` names the rule and how the bound is computed,
and the sensitivity run computes the bound and the figure of the reading that gives it. A bound that rests on our
readings is shown beside a ``deviates`` verdict; ``inconsistent`` (:mod:`dcnlab.results.goals`) is kept for a
contradiction that follows from the paper's text alone.

Settings that are listed but not varied (``searched=False``) say why in ``note`` (not open, a draw every
setting runs over, too costly, already measured reading by reading in :mod:`dcnlab.results.readings`, or a
quantity the paper gives no model for, whose headline is not judged). :data:`NOTHING_TO_SEARCH` names the papers
whose other readings run elsewhere, and where.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

PAPERS = ("000", "001", "002", "003", "004")

METHOD = ("Every setting a paper leaves open is listed with the sentence that leaves it open and its admissible "
          "readings (dcnlab/results/open_settings.py). Each is pre-registered from the paper's text alone, before any "
          "result is seen: the reading the text supports best, with its sentence and a one-line argument, or, where "
          "the text gives no ground, the simplest reading, declared as such; no outcome, count of statements that "
          "hold, or figure of the paper enters the choice. What a paper uses once (an averaging rule, a way of "
          "counting, a baseline) is one setting for the whole paper, and its model and BMv2 run the same setting. A "
          "reading that contradicts the paper's text is never run as one: it is kept among the readings, labelled "
          "'contradicts §x' with the paper's sentence. Every other admissible reading runs as a sensitivity reading, "
          "one setting at a time with the rest pre-registered (dcnlab reproduce search); a headline whose "
          "verdict a reading flips is marked 'depends on <setting>' with the readings that flip it, and keeps its "
          "pre-registered figure and verdict. The headline counts are those of the pre-registered readings only. "
          "Each paper's sensitivity table below shows every reading's verdicts beside the pre-registered setting's.")
"""The method in one paragraph (the report prints it; the module docstring says it at length)."""


@dataclass(frozen=True)
class OpenSetting:
    """One setting a paper leaves open: its readings, the pre-registered one first, the others sensitivity readings."""

    paper: str
    name: str
    what: str
    values: tuple[str, ...]
    """The readings, the pre-registered one first (fixed from the text alone; the note's first sentence argues
    it), then the other readings the text admits, which run as sensitivity readings."""
    default: str
    """What the reproduction ran before its first search."""
    sentence: str
    """The sentence that leaves it open, quoted."""
    where: str
    """Where the sentence is in the paper: its section, figure, table or algorithm."""
    random: tuple[str, ...] = ()
    """Values that are draws: each is run over several draws (a range, the median judged)."""
    searched: bool = True
    note: str = ""
    contradicts: tuple[tuple[str, str, str], ...] = ()
    """Values the paper's text rules out, each as (value, section, the paper's sentence that rules it out): never
    pre-registered nor run as a sensitivity reading, still measured among the readings."""

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
        """The admissible readings: the values the text does not rule out, in list order (the first is the
        pre-registered one)."""
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
    # Pre-registered from the text alone (the first value; the note's first sentence is the argument, or says
    # "simplest reading" where the text gives no ground); every other value the text admits runs as a
    # sensitivity reading, one setting at a time (dcnlab reproduce search 001, dcnlab.reproduce.multicast.search).
    OpenSetting(
        "001", "join-order", "the order in which a grid pattern's groups (its lines) join",
        ("xyz", "zyx", "shuffle"), "xyz",
        "后面實驗中,采用2維及3維網格劃分進程,以測試存在大量多播組時多播路由算法的性能.除此之外,還測試了進程隨機加入某個多播組的通信模式. (In the experiments, processes are "
        "divided by 2-D and 3-D grids, and processes also join groups at random; the order in which a grid's groups "
        "join is not given.)",
        "§4.1", random=("shuffle",),
        note="Pre-registered, the simplest reading (the text gives no order): xyz, every x-line, then y, then z, "
             "the order in which the text itself lists a grid's groups and their layers ('1個用于行通信的子通信域以及1個用于列通信的子通信域'; "
             "'layerx,layery,layerz分別對應x,y,z軸方向上的多播組', §3.1). zyx: z-lines first; shuffle: a random order "
             "(a draw, seeds 1-5). Pattern syntax: AxBxC:order=zyx, AxBxC:order=shuffle:seed=S."),
    OpenSetting(
        "001", "random-1ppn-groups", "the number of groups of the random 1-ppn patterns",
        ("1000", "2000", "5000"), "1000",
        "例如1 000個隨機多播組模式下僅剩下32個多播組 (the only size of a random pattern the text gives: 1,000 random groups, at 4 "
        "processes per terminal; the sizes of the 1-process random patterns are not given)",
        "§4.3.2",
        note="Pre-registered: 1,000, because it is the one size the text gives a random pattern, and it meets "
             "what §4.2.1 says of the 1-ppn random patterns ('多播組的個數已經超過了不沖突的生成樹的個數': more groups than "
             "the 512 spanning trees). 2,000 and 5,000: larger patterns, sensitivity readings."),
    OpenSetting(
        "001", "random-seed", "the draw of the random patterns (which processes join which group)",
        ("draws",), "draws",
        "還測試了進程隨機加入某個多播組的通信模式 (processes join a group at random; no seed and no pattern is given)",
        "§4.1", random=("draws",),
        note="Always a draw: every setting runs the random patterns (and a shuffled join order) with seeds 1-5, "
             "the reproduction's draws; a figure from them is the mean with its standard error over the 5 draws, "
             "and a claim that deviates on any draw deviates."),
    OpenSetting(
        "001", "dynamic-root-candidates", "the root candidates of C-MR4LMS-dynamic",
        ("tn", "group"), "tn",
        "如果多播組內各成員的最近公共祖先位于L3層,則頂層網絡中板tnid內每個L3交換機都可以做樹根.從中選擇哪個做樹根實際上有2種策略 ... "
        "二是將所有L3交換機都作為備選樹根,從中選擇1個合適的做樹根(優先選擇負載低的) (if the members' lowest common ancestor is at L3, every L3 switch "
        "of TN tnid can be the root; the dynamic variant takes them all as candidates and prefers the least loaded)",
        "the paragraph before Fig. 6", searched=False,
        contradicts=(("group", "§4.3.1",
                      "這表明通過選擇同一TN內的不同L3交換機做樹根可以避免一些不必要的合并操作 (this shows that choosing different L3 "
                      "switches of the same TN as roots avoids some needless merges)"),),
        note="Pre-registered: tn, the L3 switches of TN tnid, because the text names them twice (the paragraph "
             "before Fig. 6 and §4.3.1). 'group' (every TN of the TN group) contradicts §4.3.1; it is measured "
             "beside it as our extension (cmr4lms-dynamic/group), never a reading of the paper."),
    OpenSetting(
        "001", "dynamic-load", "the load by which C-MR4LMS-dynamic prefers a root",
        ("groups-rooted",), "groups-rooted",
        "從中選擇1個合適的做樹根(優先選擇負載低的) (choose a suitable one as the root, preferring a low load; the load is not "
        "defined)", "the paragraph before Fig. 6", searched=False,
        note="Pre-registered, the simplest reading (the text defines no load): the number of groups whose trees "
             "are rooted at the switch, ties to the formula's root (dcnlab.controller.multicast.cmr4lms). No other "
             "reading is implemented, so none runs as a sensitivity reading."),
    OpenSetting(
        "001", "mr4lms-merge", "MR4LMS's merge ('similar' groups) and the scope of its table",
        ("any-color/link", "same-color/link", "any-color/switch", "same-color/switch"), "any-color/link",
        "而當n個相似的多播組無條目號可用時,就將它們合并到一起共用同一棵多播樹 ... 采用合并算法,將多個多播組合并成1個多播組,從而降低對多播組顏色數的需求 (when "
        "n similar groups have no entry number left, they are merged to share one tree ... the merge makes several "
        "groups one group, lowering the number of colors needed; 'similar' is not defined)",
        "§1 (MR4LMS, ref. [15])",
        contradicts=tuple((v, "§1", "MR4LMS工作原理為:只要多個多播組不經過同一條鏈路,就盡量共用同一個多播表條目號 (MR4LMS: as long as "
                           "groups do not cross the same link, they share one entry number; one table per switch "
                           "forbids that to trees crossing one switch on different links)")
                          for v in ("any-color/switch", "same-color/switch")),
        note="Pre-registered: any-color/link, because the merged groups become '1個多播組' (one group) and a group "
             "is placed by MR4LMS's two methods, which try every color; entries are per link, as MR4LMS shares an "
             "entry number between groups that cross no common link. same-color/link (a merged group keeps the "
             "color of its groups) is the sensitivity reading; the per-switch tables contradict §1."),
    OpenSetting(
        "001", "efi-average", "the links the average EFI is taken over",
        ("used-links", "all-links"), "used-links",
        "最大EFI及平均EFI反映了各鏈路上多播樹的數量,一定程度上代表了多播路由算法的均衡程度 (max and average EFI reflect the number of "
        "multicast trees on each link and, to a degree, how balanced the routing is; the links averaged over are not "
        "given)", "§4.2",
        note="Pre-registered: used-links, the switch-to-switch links that carry a group, because §4.2.1 explains "
             "MR4LMS's higher average EFI on 2-D patterns by its using only some TNs ('僅使用了部分頂層網絡中板,進而導致連接L1交換機與"
             "L2交換機的那些鏈路上EFI指數偏大'): over every link of the fabric the same trees give the same average wherever "
             "they are rooted. all-links: every switch-to-switch link of the fabric. Both count a group once on each "
             "link its tree crosses (Definition 5: '經過該鏈路的多播組個數', the groups, not the trees)."),
    # -- 000: M2 --------------------------------------------------------------------------------------------
    # Pre-registered from the text alone (the first value; the note's first sentence is the argument, or says
    # "simplest reading" where the text gives no ground); every other value runs as a sensitivity reading, one
    # setting at a time (dcnlab reproduce search 000, dcnlab.reproduce.aggregation.search_000).
    OpenSetting(
        "000", "irs-baseline", "the IRS-based baseline M2 is compared with",
        ("no-intra", "intra"), "intra",
        "IRS-based算法通过对上一层节点的同一维进行调整来生成下一层节点,没有考虑上一层节点与位于下层的已有节点直接聚合的可能 (IRS-based derives the next layer's nodes by "
        "adjusting the same dimension of the previous layer's nodes; the rest is that of ref. [13], the IRS of Guo et"
        " al., whose intra-stage step 000 does not mention)",
        "§2.2",
        note="Pre-registered: no-intra, because 000's own description of its baseline derives every next-layer node "
             "by adjusting one dimension of the previous layer's nodes, which leaves no hop inside a layer. intra: "
             "with the intra-stage step of ref. [13] (Guo et al.), which 000 does not describe."),
    OpenSetting(
        "000", "average", "how a saving is averaged over the points of a sweep",
        ("mean-of-points", "pooled"), "mean-of-points",
        "在不同传输节点规模下,M2-based比IRS-based节省了网络中约19%的数据量 (across sender counts M2-based saves about 19% of the network's "
        "data against IRS-based; how the sweep's points are averaged is not said)",
        "abstract",
        note="Pre-registered, the simplest reading (the text gives no rule): mean-of-points, 1 - M2/IRS per point, "
             "each point weighing the same. pooled: 1 - sum(M2)/sum(IRS)."),
    OpenSetting(
        "000", "sender-sweep", "the sender counts averaged for the 'across sender counts' figures",
        ("100..4000", "table-2"), "100..4000",
        "令发送节点m∈{100,200,…,3900,4000} ... 表2网络规模对混洗和reduce阶段完成时间的影响1000150020003000 (the sweep m = 100..4000; Table "
        "2's columns 1000, 1500, 2000, 3000, its values missing)",
        "§5.3 and Table 2",
        note="Pre-registered: 100..4000, because §5.3 runs the sender-count experiment over m ∈ {100, 200, …, 4000} "
             "and the data volumes of Fig. 6 are over that sweep; Table 2's columns are those of its waiting times. "
             "table-2: Table 2's columns only."),
    OpenSetting(
        "000", "k-sweep", "the network sizes averaged for the 'across network sizes' figures",
        ("2..8", "2..6"), "2..8",
        "为了实现在BCube(6,k)(2≤k≤8)网络上的incast传输 ... 表1网络规模对混洗和reduce阶段完成时间的影响BCube(6,k)k=2k=3k=4k=5k=6 (the setup's 2 ≤ k"
        " ≤ 8; Table 1 covers k = 2..6)",
        "§5.1 and Table 1",
        note="Pre-registered: 2..8, because the setup places the incasts on BCube(6,k) with 2 ≤ k ≤ 8 and Fig. 5's "
             "data volumes are the setup's; Table 1's columns k = 2..6 are those of its waiting times. 2..6: Table "
             "1's columns only."),
    OpenSetting(
        "000", "wait-model", "what bounds the shuffle+reduce waiting time (Tables 1 and 2)",
        ("link-bound", "link-bound-ecmp", "reduce-bound"), "link-bound",
        "表1中的数据说明与现存方法相比,M2-based明显减少了整个作业在混洗和reduce阶段的等待延迟 (Table 1's data show that M2-based clearly cuts the job's"
        " waiting delay in the shuffle and reduce phases against the existing method; the table's values are missing,"
        " and no model of the delay is given)",
        "§5.2 (Table 1) and §5.3 (Table 2)", searched=False,
        note="Not pre-registered and not judged: the paper gives no model of the waiting time, so no model is 'the' "
             "reading, and the model rows are 'not judged (no model in the paper)', each model's figure shown. "
             "link-bound: the busiest directed link's units (no aggregation on its primary BCubeRouting paths); "
             "link-bound-ecmp: no aggregation spread evenly over the receiver's k+1 links; reduce-bound: the "
             "receiver's input (dcnlab.controller.aggregation.waiting). BMv2's measured completion times are judged."),
    # -- 002: IB CC ----------------------------------------------------------------------------------------
    # Pre-registered from the text alone (the first value; the note's first sentence is the argument, or says
    # "simplest reading" where the text gives no ground); every other value runs as a sensitivity reading, one
    # setting at a time (dcnlab reproduce search 002, dcnlab.reproduce.congestion.search).
    OpenSetting(
        "002", "ccti-timer", "the CCTI timer's semantics",
        ("reset", "free"), "reset",
        "3.StartTimer=04.ifreceiveBECN&&CCTI<CCTI_Limitthen5.CCTI=CCTI+CCTI_Increase6.IRD=CCT[CCTI]7.Timer=08.endif "
        "(Algorithm 1, as the text prints it: the timer restarts on every BECN; the specification's timer, as the "
        "Linux hfi1 driver runs it, is started if not running and is not reset by BECNs)",
        "Algorithm 1 (§4.1)",
        contradicts=(("free", "Algorithm 1 (§4.1)", "4. if receive BECN && CCTI < CCTI_Limit then 5. CCTI = CCTI + "
                      "CCTI_Increase 6. IRD = CCT[CCTI] 7. Timer = 0 8. endif"),),
        note="Pre-registered: reset, because Algorithm 1 line 7 restarts the timer on every BECN. free: the "
             "specification's free-running timer (hfi1), which that line rules out; it is never run as a reading "
             "of the paper, only shown among the readings (reproduce/congestion/readings.py)."),
    OpenSetting(
        "002", "ccti-timer-value", "CCTI_Timer and its unit",
        ("150x1.024us", "150us"), "150x1.024us",
        "CCT参数CCTItemCCTI_IncreaseCCTI每次增加的单位量1 ... CCTI_Timer恢复速率的超时定时器150 ... 14.foreverytimeunit15.Timer=Timer+1 "
        "(Table 1 gives CCTI_Timer 150 without a unit; Algorithm 1 counts 'every time unit')",
        "§4.1 (Table 1, Algorithm 1)",
        note="Pre-registered: 150 in the field's own unit (1.024 µs, 153.6 µs), because the text sets these "
             "parameters as IB fields ('根据IB规范的定义', written with ibccconfig, §5), so Table 1's 150 is a field value. "
             "150us: 150 µs, the unit of the text's CCT formula, run as 146 ticks (149.5 µs)."),
    OpenSetting(
        "002", "marking-rate", "Marking_Rate: packets between two FECN marks of the packets that meet the threshold",
        ("0", "1", "3", "7"), "0",
        "对于FECN标记,交换机主要有两个参数,一个是标记的阈值,另一个是标记报文的比率 ... 设α为交换机采取FECN的标记报文比例 (the switch has two "
        "parameters, the marking threshold and the ratio of marked packets; α is the proportion of packets the "
        "switch marks with FECN; no value is given)",
        "§4.1 and §4.2 (Theorem 1's proof)",
        note="Pre-registered, the simplest reading (the text gives no value): 0, every packet that meets the "
             "threshold is marked (α = 1); counting and random marking then coincide. 1, 3, 7: one in 2, 4, 8."),
    OpenSetting(
        "002", "becn-every", "C, the marked packets per BECN the receiver returns",
        ("1", "2", "4"), "1",
        "对于接受端的CA网卡,每C个报文采用ACK或者发送CN实现BECN携带拥塞标记信息 (the receiving CA returns the congestion mark in a BECN of "
        "an ACK or CN every C packets; no value is given)",
        "§4.2 (Theorem 1's proof)",
        note="Pre-registered, the simplest reading (the text gives no value): 1, a BECN for every marked packet. "
             "2, 4: one per 2 or 4 marks."),
    OpenSetting(
        "002", "threshold", "the switch's marking threshold level (0-15; the queue depth the model maps it to)",
        ("15", "14", "12"), "15",
        "IB交换机的拥塞阈值从0~15,0表示没有拥塞标识,1表示非常高的阈值,拥塞容易发生传播,而15代表非常低的阈值,代表即使互联拥塞程度不高也可能发生标记降速,降低拥塞传播的可能性."
        "其中给出的参考是15表示256Bytes的报文,报文之间的间隔为176Bytes,从而达到60%的带宽占用率.权重从15~1表示从平均60%的带宽占用以上的线性增加,阈值设置与交换机体系结构相关 "
        "(levels 0-15, 15 the lowest threshold, which lowers the chance of congestion spreading; 15 is the one "
        "level tied to a quantity, 60% occupancy; the setting depends on the switch architecture; the level the "
        "experiments used is not given)",
        "§4.1",
        note="Pre-registered: 15, because it is the one level the text ties to a quantity and the one it credits "
             "with lowering congestion spreading. The model marks from a queue of 8 x (16 - level) packets (8 at "
             "15: the depth is ours, the text leaves it to the switch architecture). 14, 12: 16 and 32 packets."),
    OpenSetting(
        "002", "cct-denominator", "the denominator of the reference CCT, 14 i^2 / D µs",
        ("11236", "1062"), "11236",
        "实验中CCT表项采用参考设计值CCT(i)=14×i2/1062(μs) (the experiment's CCT is the reference design CCT(i) = 14 × i2 / 1062 µs)",
        "§5 (experiment 2)",
        note="Pre-registered: 11236 = 106², because the same formula prints i² as 'i2': its exponents are "
             "flattened, so '1062' reads 106² the same way. 1062: the digits as printed."),
    OpenSetting(
        "002", "link-rate", "the links' data rate (Gb/s)",
        ("10", "8"), "10",
        "链路实际工作速率均设置为10Gbps (the links' actual working rate is set to 10 Gb/s)",
        "§5 (setup)",
        note="Pre-registered: 10, because the text gives the links' actual working rate as 10 Gb/s. 8: 4X SDR "
             "after 8b/10b encoding, knowledge from outside the text."),
    OpenSetting(
        "002", "becn-window", "the window the BECN counts 790/480/320 are counted in",
        ("per-100ms", "per-1s", "per-phase"), "per-100ms",
        "在1条、2条和3条流的情况下BECN数目分别为790,480和320 (with 1, 2 and 3 flows the BECN counts are 790, 480 and 320; the only "
        "interval the text gives is Fig. 3's: 按照100ms的粒度统计吞吐量, throughput counted per 100 ms)",
        "§5 (Fig. 5(b), Fig. 3)",
        note="Pre-registered: per-100ms, the settled mean per 100 ms sample, because 100 ms is the only sampling "
             "interval the text gives. per-1s: the same per second; per-phase: every BECN of the phase, "
             "transients included. The ratios 480/790 and 320/790 are the same under the first two."),
    OpenSetting(
        "002", "recovery-threshold", "when a flow has 'recovered' after a departure",
        ("90%", "80%", "95%"), "90%",
        "随着流的离开,租户2当前的活跃流相对缓慢的增速,包括从5s~7s和7s~8s两个阶段 (as flows leave, tenant 2's remaining flows speed up relatively "
        "slowly, from 5 s to 7 s and from 7 s to 8 s; no criterion of recovery is given)",
        "§5 (Fig. 5(a))",
        note="Pre-registered, the simplest reading (the text gives no criterion): 90%, a remaining flow has "
             "recovered when it first reaches 90% of its new steady rate, the report's own 10% for a rate "
             "(dcnlab.controller.congestion.scenarios.summarize_recovery). 80%, 95%: looser and stricter."),
    OpenSetting(
        "002", "cct-pacing", "how the IRD paces a QP (Algorithm 2's 4-packet aggregate, per packet, or the paper's "
        "arithmetic)", ("aggregate-4", "per-packet", "paper-formula"), "aggregate-4",
        "源端的限速是累积一定数量的报文(如IB规范中定义4个[2])进行报文间隔计算 ... "
        "由于每次发送端聚合4个1024Bytes的报文进行IRD比较,如20.48μs的表项值,带宽限制在(1024×8)/(20.48×4×10-6)=100MB (the source paces per "
        "aggregate of packets, 4 as the specification defines; Fig. 4's arithmetic divides one packet's bits by 4 "
        "IRDs: per 4-packet aggregate 20.48 µs would give 1.6 Gb/s, per packet 400 Mb/s)",
        "§4.1 (Algorithm 2) and §5 (Fig. 4)", searched=False,
        note="Pre-registered: aggregate-4, because Algorithm 2 and its sentence state the 4-packet aggregate; Fig. "
             "4's arithmetic contradicts it (the headline is inconsistent). Not in the sensitivity run: it is the "
             "pacer of every run with CC; each reading is measured on Fig. 4's pinned QP in "
             "reproduce/congestion/readings.py."),
    # -- 003: SRS ------------------------------------------------------------------------------------------
    # Pre-registered from the text alone (the first value; the note's first sentence is the argument, or says
    # "simplest reading" where the text gives no ground); every other value runs as a sensitivity reading, one
    # setting at a time (dcnlab reproduce search 003, dcnlab.reproduce.aggregation.search_003).
    OpenSetting(
        "003", "steiner-baseline", "the Steiner-based baseline's tree (dcnlab.controller.aggregation.steiner_readings)",
        ("kmb", "kmb-member-agg", "kmb-member-agg-bundled", "kmb-switch-graph", "kmb-switch-graph-member-agg",
         "kmb-shuffle-tree", "kmb-shuffle-tree-member-agg", "kmb-random-order", "kmb-random-order-member-agg",
         "mst-overlay"), "kmb",
        "The Steiner-tree algorithm we choose is the one described in [27], whose benefit is the computation speed. "
        "... At first, a virtual complete graph is generated upon the incast members. Then, a minimum spanning tree "
        "is calculated on the virtual complete graph. Finally, the virtual link in the virtual complete graph is "
        "replaced by the shortest path between any two incast members in the original topology, with unnecessary "
        "links deleted. (Which shortest path, which graph, which servers aggregate: not said.)",
        "§5.1", random=("kmb-random-order", "kmb-random-order-member-agg"),
        contradicts=(("kmb-shuffle-tree", "§5.1", STEINER_PER_RECEIVER),
                     ("kmb-shuffle-tree-member-agg", "§5.1", STEINER_PER_RECEIVER),
                     ("kmb-member-agg-bundled", "§5.4", MERGE_RULE)),
        note="Pre-registered: kmb, one KMB tree per receiver over its incast members, every server of it "
             "aggregating, each virtual link BCube's own shortest path (digits corrected highest first) at server "
             "hops, because §5.1 builds 'each aggregation tree' by the three steps quoted, §3.1's cost model (a "
             "server where flows meet aggregates) is that of every method compared, and 'the shortest path' names "
             "no other path; the text gives no ground for the path's digit order, so the routing's own is the "
             "simplest. The other readings of dcnlab.controller.aggregation.steiner_readings run as sensitivity "
             "readings at a reduced scale (reproduce/aggregation/search_003.py: 20 rounds per k on BCube(6,k), one "
             "round per point on BCube(8,5)); the two over all m + n members build one tree for the shuffle, where "
             "the text builds one per receiver, and the bundled charge keeps two merged flows at their sum."),
    OpenSetting(
        "003", "delta-reading", "how 'δ uniform on [0,1]' turns the Fig. 6 curve into one saving "
        "(dcnlab.controller.aggregation.ratio_readings)",
        ("curve-mean", "per-job", "per-receiver", "per-node", "per-server", "once-per-tree", "vs-srs-no-agg"),
        "curve-mean",
        "Assume that the value of the random variable δ follows a uniform distribution (if any). In such a case, our "
        "SRS-based method saves the resultant network traffic by 28.78% in Fig.6(a) and 45.05% in Fig.6(b) compared "
        "to the existing method, respectively. (What is random, one δ per job, per receiver or per merge, is not "
        "said.)",
        "§5.4", random=("per-job",),
        contradicts=(("vs-srs-no-agg", "§5.4", "In such a case, our SRS-based method saves the resultant network "
                      "traffic by 28.78% in Fig.6(a) and 45.05% in Fig.6(b) compared to the existing method, "
                      "respectively."),),
        note="Pre-registered: curve-mean, the mean of Fig. 6's saving curve over δ in [0,1], because the text "
             "names one random variable δ, the variable of Fig. 6's curve, uniform on [0,1]. The other readings of "
             "dcnlab.controller.aggregation.ratio_readings (δ drawn per job, per receiver, per node, per server, "
             "applied once per tree) run as sensitivity readings on 3 rounds per size "
             "(reproduce/aggregation/search_003.py); vs-srs-no-agg: the curve's mean against SRS without "
             "aggregation (Fig. 7's baseline, not the existing method the text names)."),
    OpenSetting(
        "003", "average", "how every 'on average' of 003 averages a sweep: Fig. 4(a) over k and Fig. 5 over m = n "
        "alike", ("plain", "by-members", "by-traffic"), "plain",
        "the SRS-based, incast-based, Steiner-based, and unicast-based methods save the network traffic by 32.87%, "
        "32.69%, 28.76%, and 17.64% on average compared to the existing method (§5.2); ... by 55.33%, 55.29%, "
        "44.89%, and 34.46% on average compared to the existing method as m=n ranges from 50 to 1500 (§5.3)",
        "§5.2 and §5.3",
        note="Pre-registered, the simplest reading (the text gives no weighting): plain, each point of the sweep "
             "weighs the same; one rule for the paper, since both sections use the same words. by-members: "
             "weighted by m + n (the same as plain over k, where m = n = 60); by-traffic: pooled, one minus the "
             "sum of the method's traffic over the sum of no aggregation's."),
    OpenSetting(
        "003", "counting", "how the aggregating servers of a shuffle are counted (Fig. 4(c), Fig. 5(c), §5.2's "
        "'Steiner-based uses fewer')", ("distinct", "summed"), "distinct",
        "They are the resultant network traffic, the number of active links, the number of cache servers, and the "
        "input data size at each receiver. (Whether a server aggregating in several receivers' trees counts once or "
        "once per tree is not said.)", "§5.1",
        note="Pre-registered: distinct, because the metric is 'the number of cache servers', a count of servers, "
             "and a server is one server however many trees it caches in. summed: once per incast tree it "
             "aggregates in (SRS: per entry tree)."),
    # -- 004: CISTs -----------------------------------------------------------------------------------------
    # Pre-registered from the text alone (the first value; the note's first sentence is the argument); the other
    # values run as sensitivity readings in reproduce cist (dcnlab.reproduce.cist.opcount).
    OpenSetting(
        "004", "instances", "the Dragonfly instances Theorems 1-4 (⌊a/2⌋ CISTs) are checked on",
        ("a=3..8,h=1..3,every-arrangement", "worked-D(4,2)"), "a=3..8,h=1..3,every-arrangement",
        "蜻蜓网络的大小由以下参数决定: p, 每个交换机中的计算节点数; a, 每个分组中交换机的数量; h, 每个交换机的全局链路数 ... 定理 1 通过算法 1 得到的蜻蜓网络 "
        "D(p, a, h) 顶点的子集 V[0], V[1], …, V[⌊a/2⌋] 是蜻蜓网络 D(p, a, h) 在相对链接下的一个完全独立生成树划分 (the size of a Dragonfly "
        "is set by p, a and h; Theorems 1-4 are stated for D(p, a, h) with no condition on a or h)",
        "§2.2 and §3 (Theorems 1-4)", searched=False,
        note="Pre-registered: every (a, h) of the sweep a = 3..8, h = 1..3 under each arrangement (the smallest "
             "values of both size parameters, 42 instances; h = 1 included), because the theorems state no "
             "condition on a or h, so every instance is one they claim. p is not a size of the claim: "
             "'顶点和边分别表示蜻蜓图的交换机和链路' (§1: the vertices are the switches), so every p gives the same graph. The "
             "worked D(4,2) alone is the paper's only example, kept as its own headline."),
    OpenSetting(
        "004", "circulant-odd-h", "whether the circulant arrangement with odd h is an instance of the claim",
        ("not-a-dragonfly", "instance"), "not-a-dragonfly",
        "R^+(S_{i,k}) = {S_{m,n} | i+k*floor(h/2) < m < i+k*floor(h/2)+floor(h/2), n = k} (Lemma 3: the circulant "
        "arrangement links floor(h/2) groups each way)",
        "§2.2 (Lemma 3)", searched=False,
        contradicts=(("instance", "§2.2", "每个交换机有 h 个全局链路连接其他的组"),),
        note="Pre-registered: not an instance, because with odd h Lemma 3 gives a switch 2⌊h/2⌋ = h - 1 global "
             "links where §2.2 gives every switch h; the paper omits the condition 'h even', which the report "
             "names."),
    OpenSetting(
        "004", "failures", "which switches and links fail in the CIST-property check",
        ("random-draws",), "random-draws",
        "若找到 k 棵完全独立生成树,假设网络中存在至多 k-1 个故障服务器,则任意两个处理器之间总存在一条无故障路径 (with k CISTs, any two processors keep a fault-free"
        " path under at most k-1 faults; no failure pattern is given)",
        "§1", searched=False,
        random=("random-draws",),
        note="Pre-registered: random draws of up to k-1 failed elements (the simplest reading: the text names no "
             "pattern). The property is a theorem for every such set, so a draw can only find a construction "
             "error; the BMv2 experiment adds the adversarial set that cuts one pair in every tree."),
    OpenSetting(
        "004", "timing-sizes", "how N grows where O(N) is tested (Theorems 5-7)",
        ("every-family", "a=2h", "a=8", "h=2"), "every-family",
        "定理 5 算法 1 的时间复杂度为 O(N), 其中 N 为顶点的个数 ... 蜻蜓网络的大小由以下参数决定: p ... a ... h (Theorem 5: Algorithm 1 runs "
        "in O(N), N the number of vertices; the size is set by p, a and h)",
        "§3.5 (Theorems 5-7) and §2.2", searched=False,
        note="Pre-registered: every family, a = 2h (a and h grow together), a = 8 (h grows) and h = 2 (a grows), "
             "judged at the worst, because N is the claim's only variable, so the bound must hold however N "
             "grows; each family alone is a sensitivity reading."),
    OpenSetting(
        "004", "alg3-cost", "whether Theorem 7 bounds Algorithm 3's total or its cost per tree",
        ("total", "per-tree"), "total",
        "定理 7 算法 3 的时间复杂度为 O(N), 其中 N 为顶点的个数。该算法需要判断每个组中的每个顶点所连接的边,因此时间复杂度为 O(N) (Theorem 7: Algorithm 3 "
        "is O(N) because it checks the edges of every vertex of every group)",
        "§3.5 (Theorem 7)", searched=False,
        note="Pre-registered: the total of all ⌊a/2⌋ trees, because Theorem 7's proof runs nothing in parallel "
             "(only Theorem 5's, for Algorithm 1: '对于最外层的循环,通过并行构造其 floor(a/2) 棵完全独立生成树'); per tree is a "
             "sensitivity reading."),
    OpenSetting(
        "004", "cost-measure", "what the O(N) of Theorems 5-7 counts",
        ("operations", "cpu-time"), "operations",
        "对于内部的循环,所有的顶点至多只进出 nextGroup 一次,故时间复杂度为 O(N) (Theorem 5's proof: every vertex enters and leaves "
        "nextGroup at most once, hence O(N))",
        "§3.5 (Theorem 5)", searched=False,
        note="Pre-registered: operations executed (counted as interpreter instructions), because the proofs count "
             "steps (a vertex entering and leaving a queue), not seconds; CPU time is shown beside it in the "
             "full run as a figure."),
    OpenSetting(
        "004", "arrangement", "the global-link arrangement of the Dragonfly",
        ("relative", "absolute", "circulant"), "relative",
        "本文给出相对链接、绝对链接以及循环链接下完全独立生成树的构造算法 (the paper gives the construction under the relative, absolute and "
        "circulant arrangements; each theorem under its own)",
        "§1 and §2", searched=False,
        note="Not open: each theorem is stated for its own arrangement; the sweep runs all three."),
)
"""Every open setting of the five papers."""

NOTHING_TO_SEARCH = {
    "004": "004's settings are pre-registered from its text (above, each with its sentence); their other readings "
           "(each size family alone, Algorithm 3 per tree) are cheap and run inside reproduce cist as its "
           "sensitivity table (the O(N) headline's reading), not as a search.",
}
"""Papers whose open settings cannot change a statement, and why (the report says so instead of a table)."""

BOUNDS: tuple[Bound, ...] = (
    Bound("001", "C-MR4LMS-dynamic max TFI 1 on 64×32×16 and 32×32×32 (1 ppn, Fig. 9)", "1 and 1",
          "the dynamic variant's root candidates are the L3 switches of TN tnid (the paragraph before Fig. 6)",
          "group: every L3 switch of every TN of the TN group (cmr4lms-dynamic/group)",
          "groups on one spanning tree (same color, same TN) that share a forced link must share a tree "
          "whatever top switch is chosen: an L0–L1 link (both span more than one L0 under that L0) or an "
          "L1–L2 link (both span more than one CN through that CN); the largest connected set of such "
          "groups bounds max TFI from below. Under the group reading only the L0–L1 links are forced."),
)


def settings(paper: str) -> tuple[OpenSetting, ...]:
    """The open settings of ``paper``."""
    return tuple(s for s in SETTINGS if s.paper == paper)


def preregistered(paper: str) -> dict[str, str]:
    """The pre-registered reading of every open setting of ``paper`` (the first value the text does not rule out,
    each fixed from the text alone; the note says why): name -> value."""
    return {s.name: s.candidates[0] for s in settings(paper)}


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
    """The pre-registered setting of ``paper``'s committed sensitivity table (its base, name -> value), or None
    without a table."""
    s = stored_search(paper)
    return dict(s["chosen"]) if s else None
