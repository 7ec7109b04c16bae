"""A user's multicast router beside C-MR4LMS in the BMv2 experiment (marker ``bmv2``, ``p4c``: root,
p4c and BMv2): examples/plugins' shortest-path trees, by file reference, through ``reproduce --emulate --algo``."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from dcnlab.emu.cleanup import leftovers
from dcnlab.reproduce.multicast.reproduction import REPRODUCTION
from dcnlab.reproduce.protocol import write_summary

pytestmark = [pytest.mark.bmv2, pytest.mark.p4c]

SPT = str(Path(__file__).resolve().parents[1] / "examples/plugins/dcnlab_example_plugins/multicast.py") \
    + ":ShortestPathTrees"


@pytest.fixture(autouse=True)
def isolated_runs(tmp_path, monkeypatch):
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    yield
    if root.is_dir():
        assert leftovers(root) == []


def test_a_plugin_router_runs_beside_cmr4lms_on_bmv2_and_delivers_exactly_once(tmp_path):
    out = tmp_path / "out"
    rep = REPRODUCTION.configure(argparse.Namespace(algo=[SPT], topo=None, colors=None, feed=None, cut=None))
    em = rep.emulate(out, True, lambda m: None)       # what reproduce multicast --emulate on --quick --algo SPT runs
    png, js = em.files
    summ = write_summary(rep, out, None, em.data, em.why, True, model_why="the model parts did not run")
    result = em.data
    lines = "\n".join(em.lines)
    checks = result["checks"]
    assert checks["algorithms"] and all(checks.values()), lines
    # C-MR4LMS's own windows ran as without --algo
    assert [w["name"] for w in result["windows"]] == ["steady", "churned", "failure", "failed-over"]
    rows = {r["algorithm"]: r for r in result["algorithms"]}
    assert list(rows) == ["cmr4lms-fixed", SPT]
    spt = rows[SPT]
    assert spt["origin"] == "reference" and rows["cmr4lms-fixed"]["origin"] == "built-in"
    assert 0 < spt["placed"] <= spt["groups"] == 14 and len(spt["refused"]) == spt["groups"] - spt["placed"]
    for r in rows.values():
        w = r["window"]
        # every member received each message exactly once, no outsider delivered, and the switches' counters
        # saw exactly the model's packets on every directed link (none where the trees have no link)
        assert w["delivered"] == w["receptions"] > 0 and w["lost"] == 0, lines
        assert w["outsider_delivered"] == 0 and w["link_packets"] == w["link_model"] > 0, lines
        assert not w["link_mismatches"] and not w["copy_mismatches"], lines
        assert 0 < r["entries_per_port_max"] <= r["table_limit_per_port"] == 3
        assert r["entries_total"] >= r["entries_per_switch_max"] > 0 and r["readback_ok"]
    assert spt["window"]["dups"] == 0      # one tree per group: no second copy (C-MR4LMS's dual feed drops its own)
    assert "C-MR4LMS only" in spt["failover"]
    # the table shows both routers; the JSON and summary.json carry them with their origin
    flat = "".join(lines.split())      # the routers line names each in full (long references wrap)
    assert f"{SPT}(reference)" in flat and "cmr4lms-fixed(built-in)" in flat and "C-MR4LMSonly" in flat
    data = json.loads(js.read_text())
    assert [r["algorithm"] for r in data["algorithms"]] == ["cmr4lms-fixed", SPT]
    summary = json.loads(summ.read_text())
    got = {r["algorithm"]: r["origin"] for r in summary["algorithms"]}
    assert got == {"cmr4lms-fixed": "built-in", SPT: "reference"}
    assert os.path.getsize(png) > 0
