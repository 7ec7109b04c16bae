"""``dcnlab reproduce cist`` on the model backend (the --emulate half is tests/test_cist_bmv2.py)."""

from __future__ import annotations

import json

import pytest

from dcnlab.cli import main


def test_reproduce_quick_json(capsys, tmp_path):
    rc = main(["reproduce", "cist", "--emulate", "off", "--quick", "--json", "--workers", "2", "--out", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert rc == 0
    data = json.loads(out)
    assert set(data) == {"model", "scaling", "emulation", "emulation_why", "ok", "differ_from_full_run"}
    assert data["ok"] is True and data["differ_from_full_run"] == []     # 004 has no committed full run
    assert data["emulation"] == [] and data["emulation_why"] == "not run: --emulate off"
    specs = [c["spec"] for c in data["model"]]
    assert specs[0] == "dragonfly:p=1,a=4,h=2,arrangement=relative" and len(specs) == 43   # 42 of the sweep + D(8,4)
    survival = [c for c in data["model"] if c["survival"]]
    assert len(survival) == 5
    for c in survival:
        assert c["valid"] and c["no_loss_below_k"] and c["k"] == int(c["spec"].split("a=")[1].split(",")[0]) // 2
        sweep = {p["failures"]: p for p in c["sweep"]}
        assert all(sweep[f]["cists_min"] == 1.0 for f in range(c["k"]))      # the guarantee, every round
        assert sweep[0]["single_min"] == 1.0 and len(sweep) == c["k"] + 4
        for kind in ("switch", "link"):
            adv = c["adversary"][kind]
            assert len(adv["failed"]) == c["k"] and 0 < adv["cists_lost"] < adv["pairs"]
    # every instance: the four failing constructions count as failures (not left out), the rest checked, the
    # definition (every pair's tree paths) on every instance of the sweep (at most 200 switches)
    failed = sorted(c["spec"].removeprefix("dragonfly:p=1,") for c in data["model"] if not c["valid"])
    assert failed == ["a=5,h=1,arrangement=relative", "a=6,h=1,arrangement=absolute",
                      "a=7,h=1,arrangement=relative", "a=8,h=1,arrangement=relative"]
    assert all("cist:" in c["error"] for c in data["model"] if not c["valid"])
    assert all(c["paths"] == {"pairs": c["switches"] * (c["switches"] - 1) // 2, "ok": True}
               for c in data["model"] if c["valid"] and c["switches"] <= 200)
    assert sum(1 for c in data["model"] if c["paths"]) == 38
    d42 = data["model"][0]
    assert d42["diameters"] == [11, 9] and d42["switches"] == 36
    assert (tmp_path / "model-sweep.png").stat().st_size > 10_000
    assert json.loads((tmp_path / "model.json").read_text()) == data["model"]
    # Theorems 5-7: instructions counted over the three families, no CPU timing in --quick
    scaling = data["scaling"]
    assert json.loads((tmp_path / "scaling.json").read_text()) == scaling
    assert (tmp_path / "operations.png").stat().st_size > 10_000 and not (tmp_path / "scaling.png").exists()
    assert scaling["slope"] is None and set(scaling["operations"]["families"]) == {"a=2h", "a=8", "h=2"}
    heads = {h["statement"]: h for h in json.loads((tmp_path / "summary.json").read_text())["headlines"]}
    every = heads["Every Dragonfly has ⌊a/2⌋ completely independent spanning trees (Theorems 1–4)"]
    assert (every["paper"], every["model"], every["verdict"]) == (43, 39, "deviates")
    assert "relative, h = 1: a = 5, 7, 8 fail" in every["reading"] and "circulant: needs an even h" in every["reading"]
    on = heads["Algorithms 1–3 run in O(N) (Theorems 5–7)"]
    # instructions are counted, not timed: deterministic. Algorithm 3's k trees grow faster than N; the
    # partitions do not
    assert on["verdict"] == "deviates" and on["worst_at"].startswith("Algorithm 3 (all k trees)")
    assert all(v <= 0 for k, v in on["points"].items() if k.startswith(("Algorithm 1", "Algorithm 2")))


@pytest.mark.parametrize("argv, msg", [(["--workers", "0"], "--workers: 0 is out of range; valid: 1..256"),
                                       (["--seed", "x"], "--seed: 'x' is not an integer")])
def test_reproduce_bad_options(capsys, argv, msg):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "cist", *argv])
    assert e.value.code == 2 and msg in capsys.readouterr().err
