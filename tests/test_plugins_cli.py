"""Plug-ins through the commands: ``--algo list``, a reference in ``plan``, a plug-in's rows in
``reproduce multicast``, and one-line errors before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcnlab.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "plugins" / "dcnlab_example_plugins"
SPT = f"{EXAMPLES / 'multicast.py'}:ShortestPathTrees"
TM = f"{EXAMPLES / 'aggregation.py'}:takahashi_matsuyama"


@pytest.mark.parametrize("command, builtins", [
    (["plan", "multicast"], ["cmr4lms-fixed", "opensm"]),
    (["plan", "aggregation"], ["irs", "updown", "optimal"]),
    (["plan", "cist"], ["generic", "algorithm3"]),
    (["reproduce", "multicast"], ["cmr4lms-dynamic/group"]),
])
def test_algo_list_prints_what_is_installed_before_checking_the_rest(command, builtins, capsys):
    with pytest.raises(SystemExit) as e:
        main([*command, "--algo", "list"])                 # required options missing: list still answers
    out = capsys.readouterr().out
    assert e.value.code == 0
    assert all(f"\n  {b} " in out for b in builtins) and out.rstrip().splitlines()[-1].startswith("interface: ")


@pytest.mark.parametrize("argv, message", [
    (["plan", "multicast", "--pattern", "4x4", "--algo", "nope"], "argument --algo: 'nope' is not a multicast"),
    (["plan", "aggregation", "--topo", "bcube:n=2,k=1", "--receiver", "v0", "--senders", "v1", "--algo",
      "no_such_pkg_q:x"], "argument --algo: cannot import 'no_such_pkg_q'"),
    (["plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2", "--algo", "/nonexistent/c.py:build"],
     "argument --algo: file '/nonexistent/c.py': does not exist"),
    (["reproduce", "multicast", "--quick", "--algo", "json:__doc__"], "cannot be a multicast algorithm: a str"),
])
def test_a_bad_algorithm_is_one_line_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_plan_runs_a_users_router_and_tree_builder_by_reference(capsys):
    assert main(["plan", "multicast", "--topo", "fattree:k=8", "--pattern", "random:200:seed=3:ppn=2",
                 "--colors", "4", "--algo", SPT, "--json", "--summary"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["algo"] == SPT and data["metrics"]["tfi_max"] == 1
    assert main(["plan", "aggregation", "--topo", "fattree:k=4", "--receiver", "h0_0_0", "--senders",
                 "h1_0_0,h3_1_1,h0_1_0", "--algo", TM]) == 0
    assert capsys.readouterr().out.startswith(f"incast    {TM} on fattree:k=4: 3 senders -> h0_0_0")


def test_plan_cist_runs_a_construction_and_refuses_rule_with_algo(tmp_path, capsys):
    mine = tmp_path / "mine.py"
    mine.write_text("from dcnlab.controller.cist.plan import plan_cists\n"
                    "def build(fabric, graph):\n    return [list(t.edges) for t in plan_cists(fabric).trees]\n")
    assert main(["plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2", "--algo", f"{mine}:build"]) == 0
    out = capsys.readouterr().out
    assert f"trees       2, by the plug-in {mine}:build" in out and "valid       yes" in out
    assert main(["plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2", "--algo", "generic", "--rule", "generic"]) == 2


def test_a_users_router_joins_the_reproduction_rows_and_plots(tmp_path):
    from dcnlab.reproduce.multicast import model, reproduce

    tasks = model.tasks_for(True, [SPT])
    mine = [t for t in tasks if t.algo == SPT]
    assert {t.pattern for t in mine} == set(model.QUICK_PATTERNS)
    rows = [model.run_task(t) for t in tasks if t.pattern == "181x181" and t.algo in (SPT, "cmr4lms-fixed")]
    assert [r["algo"] for r in sorted(rows, key=lambda r: model.algo_rank(r["algo"]))] == ["cmr4lms-fixed", SPT]
    _, pngs = reproduce.write_outputs(tmp_path, rows, True, 1.0)
    data = json.loads((tmp_path / "multicast.json").read_text())
    assert {a["name"]: a["origin"] for a in data["algorithms"]} == {"cmr4lms-fixed": "built-in", SPT: "reference"}
    assert model.algo_name(SPT) == "ShortestPathTrees" and "ShortestPathTrees" in model.table(rows)
    assert [p.name for p in pngs] == ["multicast_1ppn.png"]
