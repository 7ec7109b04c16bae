"""Every headline of 004 (Bian et al., CISTs on Dragonfly) can fail: for each, a deliberately wrong mechanism fed
through the same pipeline (``model_case`` and its checks, the instruction counter, ``headlines.cist`` and the
report's one verdict rule) is judged ``deviates`` (or ``flat``), while the paper's construction on the same inputs
is not. The falsifier of each headline, in one phrase, is ``headlines.FALSIFIERS``."""

from __future__ import annotations

import dataclasses
import functools
import random
from typing import Any

import pytest

from dcnlab.reproduce.cist import headlines, model, opcount

FAILING = ("deviates", "flat")
SMALL = ("dragonfly:p=1,a=4,h=2", "dragonfly:p=1,a=4,h=2,arrangement=absolute",
         "dragonfly:p=1,a=4,h=2,arrangement=circulant", "dragonfly:p=1,a=6,h=3,arrangement=absolute",
         "dragonfly:p=1,a=5,h=2,arrangement=circulant")


def drop_one_tree(fabric: Any) -> model.Built:
    """The paper's construction that returns one tree fewer (⌊a/2⌋ - 1 trees, each still valid)."""
    graph, _, trees = model.paper_trees(fabric)
    return graph, None, trees[:-1]


def copies_of_one_tree(fabric: Any) -> model.Built:
    """k copies of the paper's first tree: spanning trees that share every edge and every path."""
    graph, parts, trees = model.paper_trees(fabric)
    return graph, parts, [dataclasses.replace(trees[0], tree_id=t) for t in range(len(trees))]


def sorting_partition(arrangement: str, a: int, h: int) -> Any:
    """Algorithm 1 or 2 with a sort of the shuffled switches by a Python comparison inserted: N log N."""
    paper = opcount.paper_partition(arrangement, a, h)

    def partition() -> Any:
        part = paper()
        switches = [v for p in part.vertex_parts() for v in p]
        random.Random(0).shuffle(switches)
        sorted(switches, key=functools.cmp_to_key(lambda x, y: (x > y) - (x < y)))
        return part
    return partition


def _cases(build: Any = None, specs: tuple[str, ...] = SMALL, rounds: int = 3) -> list[dict[str, Any]]:
    return [model.model_case(s, rounds, 1, 0, build=build) for s in specs]


def _judged(cases: list[dict[str, Any]], scaling: Any = None) -> dict[str, Any]:
    return {h.statement: h for h in headlines.cist(cases, scaling=scaling)}


@pytest.fixture(scope="module")
def paper() -> dict[str, Any]:
    return _judged(_cases())


def test_every_headline_has_a_falsifier_in_one_phrase():
    heads = headlines.cist(None)
    assert [h.statement for h in heads] == list(headlines.FALSIFIERS)
    assert all(phrase and "\n" not in phrase for phrase in headlines.FALSIFIERS.values())


def test_the_papers_construction_holds_on_the_same_inputs(paper):
    assert paper[headlines.EVERY].verdict == "reproduced" and paper[headlines.EVERY].model == len(SMALL)
    assert paper[headlines.WORKED].verdict == "reproduced"
    assert paper[headlines.SURVIVE].verdict == "reproduced"


def test_dropping_a_tree_fails_the_count_and_the_worked_instance():
    heads = _judged(_cases(drop_one_tree))
    assert heads[headlines.EVERY].verdict in FAILING and heads[headlines.EVERY].model == 0
    assert heads[headlines.WORKED].verdict in FAILING and heads[headlines.WORKED].model == 1


def test_trees_sharing_edges_and_paths_fail_independence_and_survival():
    cases = _cases(copies_of_one_tree)
    assert all(not c["valid"] and c["paths"] == {"pairs": c["switches"] * (c["switches"] - 1) // 2, "ok": False}
               for c in cases)                      # the definition check, too, finds the shared paths
    assert any("share edge" in p for c in cases for p in c["problems"])
    heads = _judged(cases)
    assert heads[headlines.EVERY].verdict in FAILING
    assert heads[headlines.SURVIVE].verdict in FAILING    # k - 1 failures cut pairs that one tree carries


def test_a_failing_construction_counts_as_a_failure():
    """D(5,1) relative has no CIST-partition by the paper's construction: the instance is counted, not left out."""
    cases = _cases(specs=("dragonfly:p=1,a=4,h=2", "dragonfly:p=1,a=5,h=1"))
    assert cases[1]["valid"] is False and "gcd(a+1, 2) = 2" in cases[1]["error"]
    h = _judged(cases)[headlines.EVERY]
    assert (h.paper, h.model, h.verdict) == (2, 1, "deviates")
    assert "relative, h = 1: a = 5 fail" in h.reading


@pytest.fixture(scope="module")
def counted() -> tuple[dict[str, Any], dict[str, Any]]:
    """The instruction counts of the paper's partitions and of the sorting falsifier (family h=2, two
    arrangements: a few seconds)."""
    kw: dict[str, Any] = {"families": ("h=2",), "arrangements": ("relative", "absolute")}
    return opcount.measure(True, **kw), opcount.measure(True, partition=sorting_partition, **kw)


def test_an_n_log_n_partition_is_judged_deviates_where_the_papers_holds(counted):
    ours, sorting = counted
    partitions = [k for k in ours["series"] if not k.startswith("Algorithm 3")]
    assert partitions == [k for k in sorting["series"] if not k.startswith("Algorithm 3")] and len(partitions) == 2
    # point by point through the headline's own verdict rule: the paper's partitions hold, the sorting ones deviate
    for data, want in ((ours, "reproduced"), (sorting, "deviates")):
        only = {k: data["series"][k] for k in partitions}
        h = headlines.linear({"operations": data | {"series": only, "worst": partitions[0]}})
        assert h.verdict == want, (want, {k: f["growth"] for k, f in only.items()})
    h = headlines.linear({"operations": sorting})
    assert h.verdict in FAILING


def test_the_instruction_count_is_deterministic():
    step = opcount.paper_partition("relative", 8, 2)
    assert opcount.count_instructions(step) == opcount.count_instructions(step) > 1000
