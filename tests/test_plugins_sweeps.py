"""A user's algorithm in the model sweeps: ``reproduce aggregation --algo A`` (the incast and shuffle parts)
and ``reproduce cist --algo A`` (the broadcast-survival sweep), with the plug-ins of ``examples/plugins`` given
as ``file.py:name`` references; one-line errors before any work."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dcnlab.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "plugins" / "dcnlab_example_plugins"
TM = f"{EXAMPLES / 'aggregation.py'}:takahashi_matsuyama"
TWO = f"{EXAMPLES / 'cist.py'}:two_trees"

AS_BUILTINS = '''
from dcnlab.controller.aggregation import incast_tree


def irs(fabric, receiver, senders, seed=0):
    """IRS's own tree, returned by a plug-in."""
    return incast_tree(fabric, receiver, senders, "irs", seed=seed).parent


def irs_nointra(fabric, receiver, senders, seed=0):
    """IRS's tree without 003's intra-stage step: Fang et al.'s IRS-based baseline as the 000 parts read it."""
    return incast_tree(fabric, receiver, senders, "irs", seed=seed, intra_stage=False).parent


def unicast(fabric, receiver, senders, seed=0):
    """The unicast paths (the same seed as the sweep's), returned by a plug-in."""
    return incast_tree(fabric, receiver, senders, "unicast", seed=seed).parent


def fat_only(fabric, receiver, senders, seed=0):
    """Applies to fat-trees only."""
    return {}


irs.fabrics = irs_nointra.fabrics = unicast.fabrics = ("bcube",)
fat_only.fabrics = ("fattree",)
'''
KEYS = ("traffic", "links", "aggregators", "new_servers", "busiest", "receiver_input")


@pytest.fixture(scope="module")
def plugin_file(tmp_path_factory) -> Path:
    f = tmp_path_factory.mktemp("plugins") / "as_builtins.py"
    f.write_text(AS_BUILTINS)
    return f


@pytest.fixture(scope="module")
def sweep(plugin_file, tmp_path_factory) -> tuple[Path, dict]:
    """One quick run of the incast parts with the example tm and the built-in look-alikes (one round a point)."""
    out = tmp_path_factory.mktemp("agg")
    assert main(["reproduce", "aggregation", "--emulate", "off", "--quick", "--only", "000-k", "gap", "--rounds", "1",
                 "--workers", "2", "--algo", TM, "--algo", f"{plugin_file}:irs", "--algo", f"{plugin_file}:irs_nointra",
                 "--algo", f"{plugin_file}:unicast", "--out", str(out)]) == 0
    return out, json.loads((out / "aggregation.json").read_text())


def test_the_plugins_figures_are_the_built_in_scorer_on_its_own_tree(sweep):
    from dcnlab.controller.aggregation import incast_tree
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.reproduce.aggregation import model
    from dcnlab.reproduce.aggregation.plugins import forest_of
    from dcnlab.topos.spec import parse_spec

    out, data = sweep
    points = data["results"]["000-k"]["points"]
    for k in model.K_POINTS_000:
        space = LabelSpace(6, k)
        pick = model._draw(space.N, 121, (1, model.PARTS.index("000-k"), k, 0))     # --seed 1, round 0
        receiver, senders = f"v{pick[0]}", [f"v{x}" for x in pick[1:]]
        tree = incast_tree(parse_spec(f"bcube:n=6,k={k}"), receiver, senders, TM)     # validated as plan's
        got = {key: points[str(k)][key][TM] for key in KEYS}
        assert got["traffic"] == tree.cost and got["links"] == tree.links       # plan's own measure agrees
        f = forest_of(space, int(pick[0]), pick[1:].tolist(), tree.parent)
        want: dict = {key: {} for key in KEYS}
        model.score_forest(f, want, TM, 120)
        assert got == {key: want[key][TM] for key in KEYS}
    gap = data["results"]["gap"]
    assert all(TM in v["ratio_to_optimum"] and v["ratio_to_optimum"][TM] >= 1.0 for v in gap["points"].values())
    assert f"{TM} / optimum (mean ratio)" in gap["overall"]


def test_its_rows_reach_the_table_the_plots_and_summary_json(sweep):
    out, data = sweep
    overall = data["results"]["000-k"]["overall"]
    pts = data["results"]["000-k"]["points"]
    assert overall[f"{TM} vs irs"] == pytest.approx(100 * np.mean([1 - v["traffic"][TM] / v["traffic"]["irs"]
                                                                    for v in pts.values()]))
    summary = json.loads((out / "summary.json").read_text())
    (tm,) = [a for a in summary["algorithms"] if a["name"] == TM]
    assert tm["origin"] == "reference" and tm["summary"].startswith("Takahashi-Matsuyama")
    assert tm["parts"]["000-k"][f"{TM} vs irs"] == overall[f"{TM} vs irs"]
    assert [a["name"] for a in data["meta"]["algorithms"]][0] == TM
    assert {p.name for p in out.glob("*.png")} >= {"000-k-traffic.png", "000-k-links.png", "gap-ratio.png"}


def test_a_plugin_returning_a_builtins_tree_gives_exactly_its_figures(sweep, plugin_file):
    _, data = sweep
    # 000's IRS row is the reading its search chose (no intra-stage step); the gap part's IRS has the step
    for name, builtin in ((f"{plugin_file}:irs_nointra", "irs"), (f"{plugin_file}:unicast", "unicast")):
        for v in data["results"]["000-k"]["points"].values():
            assert all(v[key][name] == v[key][builtin] for key in KEYS)
        assert data["results"]["000-k"]["overall"][f"{name} vs {builtin}"] == 0.0
    for name, builtin in ((f"{plugin_file}:irs", "irs"), (f"{plugin_file}:unicast", "unicast")):
        for v in data["results"]["gap"]["points"].values():
            assert v["ratio_to_optimum"][name] == v["ratio_to_optimum"][builtin]


@pytest.mark.parametrize("argv, message", [
    (["aggregation", "--algo", "nope"], "argument --algo: 'nope' is not an aggregation algorithm"),
    (["aggregation", "--algo", "irs"], "--algo irs: a built-in; the model sweeps run the papers' schemes already"),
    (["aggregation", "--algo", "{file}:fat_only"], "builds trees for fattree only; the model sweeps run BCubes"),
    (["aggregation", "--only", "003-delta", "--algo", TM], "--only 003-delta has none of them"),
    (["cist", "--algo", "/nonexistent/c.py:build"], "argument --algo: file '/nonexistent/c.py': does not exist"),
    (["cist", "--algo", "generic"], "--algo generic: a built-in; the model sweep runs the paper's CISTs already"),
])
def test_a_bad_algo_in_a_sweep_is_one_line_before_any_work(argv, message, plugin_file, tmp_path, capsys):
    out = tmp_path / "never"
    argv = [a.replace("{file}", str(plugin_file)) for a in argv]
    try:
        rc = main(["reproduce", argv[0], "--quick", *argv[1:], "--out", str(out)])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_reproduce_cist_runs_a_users_construction_beside_the_papers(tmp_path, monkeypatch, capsys):
    from dcnlab.controller.cist import plan_cists
    from dcnlab.reproduce.cist import model, scaling
    from dcnlab.topos.spec import parse_spec

    monkeypatch.setattr(model, "QUICK_MODEL_SPECS", model.MODEL_SPECS[:1] + model.MODEL_SPECS[3:4])   # D(4,2), D(6,2)
    monkeypatch.setattr(scaling, "QUICK_A", (8, 12, 16))
    assert main(["reproduce", "cist", "--emulate", "off", "--quick", "--workers", "2", "--algo", TWO,
                 "--out", str(tmp_path)]) in (0, 1)
    table = capsys.readouterr().out
    assert "D(1,6,2) relative [plug-in two_trees() of cist.py]" in table
    cases = json.loads((tmp_path / "model.json").read_text())
    d62 = cases[1]
    mine = d62["algorithms"][TWO]
    paper = plan_cists(parse_spec(d62["spec"]))                 # type: ignore[arg-type]
    assert d62["k"] == 3 and mine["k"] == 2 and mine["diameters"] == [t.diameter for t in paper.trees[:2]]
    assert mine["no_loss_below_k"]                               # two CISTs: one failure loses nothing
    # the same survival function on the same draws: the plug-in's "single" baseline is the paper's
    assert [p["single_mean"] for p in mine["sweep"]] == [p["single_mean"] for p in d62["sweep"]][:len(mine["sweep"])]
    assert cases[0]["algorithms"][TWO]["sweep"] == cases[0]["sweep"]     # D(4,2): k = 2, the very same trees
    summary = json.loads((tmp_path / "summary.json").read_text())
    (two,) = summary["algorithms"]
    assert two["name"] == TWO and two["origin"] == "reference"
    assert two["instances"][d62["spec"]]["k"] == 2
    assert (tmp_path / "model-sweep.png").stat().st_size > 0


SHUFFLE_KEYS = ("traffic", "links", "aggregators", "receiver_input")


@pytest.fixture(scope="module")
def shuffles(plugin_file, tmp_path_factory) -> tuple[Path, dict, str]:
    """One quick run of the shuffle parts with the example tm and the built-in look-alikes: 003-k at one round a
    point, 003-size at two small points (m = n = 20, 40) instead of the quick 50..500."""
    from dcnlab.reproduce.aggregation import model

    out = tmp_path_factory.mktemp("shuffle")
    small = {**model.plans(True, 1), "003-size": model.Plan("003-size", (20, 40), 1)}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(model, "plans", lambda quick, rounds: small)
        assert main(["reproduce", "aggregation", "--emulate", "off", "--quick", "--only", "003-k", "003-size",
                     "--workers", "2", "--algo", TM, "--algo", f"{plugin_file}:irs", "--algo", f"{plugin_file}:unicast",
                     "--out", str(out)]) == 0
    return out, json.loads((out / "aggregation.json").read_text()), (out / "summary.json").read_text()


def test_a_plugins_shuffle_figures_are_the_shared_scorer_on_its_per_receiver_trees(shuffles):
    """Each point's figures of the plug-in are plan --shuffle --algo's trees on the round's draw, measured by
    shuffle_costs (the built-ins' scorer); plan's own cost and links agree."""
    from dcnlab.controller.aggregation import shuffle_plan
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.controller.aggregation.shuffle import shuffle_costs
    from dcnlab.reproduce.aggregation import model
    from dcnlab.reproduce.aggregation.plugins import forest_of_trees
    from dcnlab.topos.spec import parse_spec

    _, data, _ = shuffles
    for part, (n, k_of, m_of) in {"003-k": (6, lambda p: p, lambda p: 60),
                                  "003-size": (8, lambda p: 5, lambda p: p)}.items():
        points = data["results"][part]["points"]
        for p in points:
            k, m = k_of(int(p)), m_of(int(p))
            space = LabelSpace(n, k)
            pick = model._draw(space.N, 2 * m, (1, model.PARTS.index(part), int(p), 0))    # --seed 1, round 0
            receivers, senders = [f"v{x}" for x in pick[:m]], [f"v{x}" for x in pick[m:]]
            plan = shuffle_plan(parse_spec(f"bcube:n={n},k={k}"), receivers, senders, TM, seed=0)
            forest = forest_of_trees(space, pick[:m].tolist(), pick[m:].tolist(),
                                     [plan.trees[r].parent for r in receivers])
            want = shuffle_costs(space, pick[m:], pick[:m], methods=(), detail=True, forests={TM: forest})
            got = points[p]
            assert got["traffic"][TM] == want.traffic[TM][0] == plan.cost
            none = got["traffic"]["none"]
            assert got["saving"][TM] == pytest.approx(100 * (1 - plan.cost / none))
            assert got["below_srs"][TM] == pytest.approx(100 * (1 - plan.cost / got["traffic"]["srs"]))
            if part == "003-k":
                assert {key: got[key][TM] for key in SHUFFLE_KEYS[1:]} == {
                    "links": want.links[TM], "aggregators": want.aggregators[TM],
                    "receiver_input": want.receiver_input[TM]}
                assert got["links"][TM] == plan.links and got["aggregators"][TM] == len(plan.aggregators)


def test_a_plugin_returning_unicasts_trees_gives_exactly_unicasts_shuffle_figures(shuffles, plugin_file):
    _, data, _ = shuffles
    for name, builtin in ((f"{plugin_file}:unicast", "unicast"), (f"{plugin_file}:irs", "incast")):
        for part in ("003-k", "003-size"):
            res = data["results"][part]
            for v in res["points"].values():
                assert all(v[key][name] == v[key][builtin] for key in ("saving", *SHUFFLE_KEYS) if v.get(key))
                assert v["below_srs"][name] == pytest.approx(100 * (1 - v["traffic"][builtin] / v["traffic"]["srs"]))
            assert res["overall"][f"{name} saving vs none"] == res["overall"][builtin]
    # SRS is the IRS trees regrouped: at most the incast-based traffic, so nothing above SRS
    assert data["results"]["003-k"]["overall"][f"{plugin_file}:irs vs srs"] <= 0.0


def test_a_plugins_shuffle_rows_reach_the_table_the_plots_and_summary_json(shuffles):
    out, data, summary = shuffles
    (tm,) = [a for a in json.loads(summary)["algorithms"] if a["name"] == TM]
    assert tm["origin"] == "reference"
    for part in ("003-k", "003-size"):
        overall = data["results"][part]["overall"]
        assert tm["parts"][part] == {f"{TM} saving vs none": overall[f"{TM} saving vs none"],
                                     f"{TM} vs srs": overall[f"{TM} vs srs"]}
        assert [k for k in overall][:4] == ["srs", "incast", "kmb", "unicast"]    # the papers' rows first
    from dcnlab.reproduce.aggregation.model import table
    labels = table(data["results"]).labels
    for figure in ("Guo Fig. 4(a)", "Guo Fig. 5"):
        assert f"{figure} traffic saving, plug-in takahashi_matsuyama() of aggregation.py" in labels
        assert f"{figure} plug-in takahashi_matsuyama() of aggregation.py traffic below SRS" in labels
    assert {p.name for p in out.glob("*.png")} >= {"003-k-saving.png", "003-size-saving.png", "003-k-links.png"}


def test_no_headline_sees_a_plugin(sweep):
    """A headline compares the papers' schemes: the plug-ins' rows, however extreme, change none of them (seen: the
    'fewest links' and 'receiver input' headlines took their best or largest over every method, plug-ins too)."""
    from dcnlab.reproduce.aggregation import headlines

    _, data = sweep
    names = {a["name"] for a in data["meta"]["algorithms"]}
    assert names

    def numbers(x, value):
        if isinstance(x, dict):
            return {k: numbers(v, value) for k, v in x.items()}
        if isinstance(x, list):
            return [numbers(v, value) for v in x]
        return value if isinstance(x, (int, float)) and not isinstance(x, bool) else x

    def extreme(x, value):      # the plug-ins' entries, anywhere in the results, get ``value`` in every number
        if isinstance(x, dict):
            return {k: numbers(v, value) if k in names else extreme(v, value) for k, v in x.items()}
        if isinstance(x, list):
            return [extreme(v, value) for v in x]
        return x

    def figures(results):
        return [(h.statement, h.model) for h in headlines.aggregation(results)]

    base = figures(data["results"])
    assert any(m is not None for _, m in base)
    for value in (0.0, 1e12, -1.0):
        assert figures(extreme(data["results"], value)) == base
