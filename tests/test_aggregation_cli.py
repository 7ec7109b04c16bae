"""``dcnlab plan|reproduce|bench aggregation``: JSON schema, random members, plots, errors."""

from __future__ import annotations

import argparse
import json

import pytest

from dcnlab.reproduce.aggregation import model as am
from dcnlab.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_plan_json_schema(capsys):
    rc, out, _ = run(capsys, "plan", "aggregation", "--topo", "bcube:n=4,k=1", "--receiver", "v0",
                     "--senders", "v2,v5,v9,v10,v11,v14", "--algo", "irs", "--json")
    assert rc == 0
    data = json.loads(out)                       # exactly one JSON object on stdout
    assert {"algorithm", "edges", "cost", "links", "aggregators"} <= set(data)
    assert data["algorithm"] == "irs" and data["cost"] == 14 and data["links"] == 11
    assert ["v11", "v9"] in data["edges"] and all(len(e) == 2 for e in data["edges"])
    assert data["aggregators"] == ["v1", "v2", "v9"]


def test_plan_text_and_no_intra_stage(capsys):
    rc, out, _ = run(capsys, "plan", "aggregation", "--topo", "bcube:n=4,k=1", "--receiver", "v0",
                     "--senders", "v2,v5,v9,v10,v11,v14", "--no-intra-stage")
    assert rc == 0 and "cost      16" in out and "links     12" in out and "v11 -> v3  (via w7)" in out


def test_plan_text_names_routing_symbols_in_words(capsys):
    """003 Fig. 2(c): IRS corrects digit 1 from stage 2 to 1 (e2 = 1), then digit 0 (e1 = 0)."""
    rc, out, _ = run(capsys, "plan", "aggregation", "--topo", "bcube:n=4,k=1", "--receiver", "v0",
                     "--senders", "v2,v5,v9,v10,v11,v14")
    assert rc == 0 and "{" not in out and "routing_symbols" not in out
    assert "  stage 2 -> 1: digit 1 (e2 = 1)" in out and "  stage 1 -> 0: digit 0 (e1 = 0)" in out
    assert "intra-stage step on" in out
    rc, out, _ = run(capsys, "plan", "aggregation", "--topo", "bcube:n=4,k=1", "--receiver", "v0",
                     "--senders", "v2,v5", "--algo", "unicast", "--seed", "3")
    assert rc == 0 and "path draw seed 3" in out


def test_shuffle_json_and_random_members(capsys):
    args = ["plan", "aggregation", "--topo", "bcube:n=4,k=2", "--shuffle", "--receivers", "random:5",
            "--senders", "random:12", "--seed", "4", "--json"]
    rc, out, _ = run(capsys, *args)
    assert rc == 0
    data = json.loads(out)
    assert set(data["trees"]) == set(data["receivers"]) and len(data["receivers"]) == 5
    assert len(set(data["senders"])) == 12 and not set(data["senders"]) & set(data["receivers"])
    assert data["algorithm"] == "srs" and "groups" in data
    _, again, _ = run(capsys, *args)
    assert json.loads(again) == data             # --seed makes the draw reproducible


def test_plan_plot_writes_png(capsys, tmp_path):
    png = tmp_path / "tree.png"
    rc, _, err = run(capsys, "plan", "aggregation", "--topo", "fattree:k=4", "--receiver", "h0_0_0",
                     "--senders", "random:5", "--plot", str(png))
    assert rc == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "wrote" in err


@pytest.mark.parametrize("argv,message", [
    (["--receiver", "v0", "--senders", "v2,v2"], "duplicate v2"),
    (["--receiver", "v2", "--senders", "v2,v3"], "a receiver cannot also be a sender"),
    (["--receiver", "v0", "--senders", "random:16"], "valid: 1 <= COUNT <= 15"),
    (["--receiver", "v0", "--senders", "random:x"], "needs an integer count"),
    (["--receiver", "v0", "--senders", "v1", "--delta", "2"], "valid: 0 <= delta <= 1"),
    (["--receiver", "v0", "--senders", "v1", "--algo", "updown"], "does not apply to bcube"),
    (["--senders", "v1"], "--receiver R is required"),
    (["--shuffle", "--senders", "v1"], "--shuffle needs --receivers"),
    (["--receiver", "v0", "--senders", "v1", "--plot", "x.svg"], "must end in .png"),
])
def test_plan_errors_are_one_line(capsys, argv, message):
    rc, out, err = run(capsys, "plan", "aggregation", "--topo", "bcube:n=4,k=1", *argv)
    assert rc == 2 and out == "" and message in err and err.startswith("dcnlab: error:")
    assert "Traceback" not in err


def test_reproduce_emulate_needs_the_toolchain(capsys, monkeypatch):
    from dcnlab.reproduce.aggregation import model as aggregation_model
    monkeypatch.setattr(aggregation_model, "dataplane_missing", lambda tools=(): ["p4c not found", "not root"])
    rc, out, err = run(capsys, "reproduce", "aggregation", "--emulate", "on")
    assert rc == 2 and out == "" and "needs root and p4c: not root; p4c not found" in err


def test_reproduce_emulate_hands_its_options_to_the_experiment(capsys, monkeypatch):
    from dcnlab.cli import reproduce as reproduce_cli
    from dcnlab.reproduce.aggregation import model as aggregation_model
    from dcnlab.reproduce.aggregation import reproduce as aggregation_reproduce
    seen = []
    monkeypatch.setattr(aggregation_model, "dataplane_missing", lambda tools=(): [])
    monkeypatch.setattr(reproduce_cli, "run_alone", lambda rep, args, out, planned: seen.append((rep, args, out,
                                                                                               planned)) or 0)
    rc, _, _ = run(capsys, "reproduce", "aggregation", "--emulate", "on", "--quick", "--seed", "4", "--topo",
                   "bcube:n=3,k=2", "--topo", "fattree:k=4", "--json", "--out", "x")
    assert rc == 0 and len(seen) == 1 and seen[0][3][0] is True
    rep, args = seen[0][0], seen[0][1]
    cfg = aggregation_reproduce.config_from_args(argparse.Namespace(quick=True, seed=rep.seed, topo=rep.topo))
    assert cfg.specs == ("bcube:n=3,k=2", "fattree:k=4") and cfg.seed == 4 and args.json and seen[0][2] == "x"
    rc, _, err = run(capsys, "reproduce", "aggregation", "--emulate", "off", "--topo", "bcube:n=4,k=1")
    assert rc == 2 and "--topo applies only when the BMv2 experiment runs" in err and "--emulate off" in err


def test_bench_dataplane_skipped_or_run(capsys, monkeypatch):
    from dcnlab.reproduce.aggregation import bench as aggregation_bench
    from dcnlab.reproduce.aggregation import model as aggregation_model
    rc, out, _ = run(capsys, "bench", "aggregation", "--no-model", "--no-dataplane")
    assert rc == 0 and "skipped: disabled by --no-dataplane" in out
    monkeypatch.setattr(aggregation_model, "dataplane_missing", lambda tools=(): ["not root"])
    rc, out, _ = run(capsys, "bench", "aggregation", "--no-model", "--json")
    assert rc == 0 and json.loads(out)["dataplane"] == {"skipped": "not root"}

    class Fake:
        goal_met = True

        def summary_lines(self):
            return ["one BMv2 node: fake"]

        def to_json(self):
            return {"goal_met": True}

    calls = []
    monkeypatch.setattr(aggregation_model, "dataplane_missing", lambda tools=(): [])
    monkeypatch.setattr(aggregation_bench, "bench_dataplane", lambda **kw: calls.append(kw) or Fake())
    rc, out, _ = run(capsys, "bench", "aggregation", "--no-model", "--dp-frames", "500", "--dp-rounds", "1")
    assert rc == 0 and "one BMv2 node: fake" in out
    assert calls[0]["frames"] == 500 and calls[0]["rounds"] == 1


def test_bench_model_small(capsys, monkeypatch):
    from dcnlab.controller.aggregation import mib, optimal
    monkeypatch.setattr(optimal, "solve", lambda *a, **kw: None)       # timed elsewhere; seconds each here
    monkeypatch.setattr(mib, "m2_family", lambda *a, **kw: None)
    rc, out, _ = run(capsys, "bench", "aggregation", "--rounds", "2", "--workers", "1", "--no-dataplane", "--json")
    data = json.loads(out)
    assert rc == 0 and data["point_1500"]["rounds"] == 2
    assert data["point_1500"]["saving"]["srs"] > data["point_1500"]["saving"]["unicast"] > 0


def test_reproduce_small_part(capsys, tmp_path):
    rc, out, _ = run(capsys, "reproduce", "aggregation", "--only", "000-k", "--rounds", "1", "--workers", "1",
                     "--emulate", "off", "--out", str(tmp_path))
    assert rc == 0 and "M2 traffic below IRS-based" in out and "Fang Fig. 5" in out
    data = json.loads((tmp_path / "aggregation.json").read_text())
    points = data["results"]["000-k"]["points"]
    assert sorted(points, key=int) == [str(k) for k in am.K_POINTS_000]   # 000's chosen k-sweep (open_settings)
    assert all(p["traffic"]["m2"] <= p["traffic"]["none"] for p in points.values())
    assert (tmp_path / "000-k-traffic.png").exists()


def test_reproduce_json_is_one_object(capsys, tmp_path):
    rc, out, _ = run(capsys, "reproduce", "aggregation", "--only", "003-k", "--rounds", "1", "--workers", "1",
                     "--emulate", "off", "--out", str(tmp_path), "--json")
    data = json.loads(out)
    assert rc == 0 and set(data["results"]) == {"003-k"}
    assert data["results"]["003-k"]["paper"]["srs"] == 32.87
    assert any(line.startswith("Guo Fig. 4(a)") for line in data["table"])


@pytest.mark.parametrize("terminal", [True, False])
def test_shuffle_progress_on_a_terminal_only(capsys, monkeypatch, terminal):
    """A bar on stderr when stderr is a terminal (after SHUFFLE_PROGRESS_DELAY, here 0); nothing otherwise."""
    from dcnlab.cli import aggregation as aggregation_cmd
    from dcnlab.sweep import progress
    monkeypatch.setattr(progress, "is_terminal", lambda stream=None: terminal)
    monkeypatch.setattr(aggregation_cmd, "SHUFFLE_PROGRESS_DELAY", 0.0)
    rc, out, err = run(capsys, "plan", "aggregation", "--topo", "bcube:n=4,k=2", "--shuffle", "--receivers",
                       "random:6", "--senders", "random:10", "--json")
    assert rc == 0 and len(json.loads(out)["receivers"]) == 6
    if terminal:
        assert "shuffle trees" in err and "6/6" in err
    else:
        assert err == ""
