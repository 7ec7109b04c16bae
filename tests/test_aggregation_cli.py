"""``dcnlab plan|reproduce|bench aggregation``: JSON schema, random members, plots, errors."""

from __future__ import annotations

import json

import pytest

from experiments.cli import main


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


def test_reproduce_emulate_is_not_implemented_yet(capsys):
    rc, _, err = run(capsys, "reproduce", "aggregation", "--emulate")
    assert rc == 2 and "not implemented yet" in err


def test_reproduce_small_part(capsys, tmp_path):
    rc, out, _ = run(capsys, "reproduce", "aggregation", "--only", "000-k", "--rounds", "1", "--workers", "1",
                     "--out", str(tmp_path))
    assert rc == 0 and "m2 vs irs" in out
    data = json.loads((tmp_path / "aggregation.json").read_text())
    points = data["results"]["000-k"]["points"]
    assert sorted(points, key=int) == [str(k) for k in range(2, 9)]
    assert all(p["traffic"]["m2"] <= p["traffic"]["none"] for p in points.values())
    assert (tmp_path / "000-k-traffic.png").exists()
