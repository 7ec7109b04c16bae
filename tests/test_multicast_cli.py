"""``dcnlab plan multicast`` (JSON schema, errors) and the reproduction runner on a few paper patterns."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dcnlab.reproduce.multicast import model as multicast_model
from dcnlab.cli import main
from dcnlab.topos import parse_spec


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_json_schema(capsys):
    code, out, err = run_cli(capsys, "plan", "multicast", "--topo", "fattree:k=4", "--colors", "2",
                             "--pattern", "4x4", "--json")
    assert code == 0
    data = json.loads(out)                                        # exactly one JSON object on stdout
    for key in ("groups", "efi_max", "efi_avg", "tfi_max", "tfi_avg", "groups_after_merge", "seconds"):
        assert key in data
    f = parse_spec("fattree:k=4")
    assert len(data["groups"]) == 8 and data["groups_after_merge"] <= 8
    for g in data["groups"]:
        assert {"mgid", "color", "root", "links", "members", "merged_with"} <= g.keys()
        children = {c for _, c in g["links"]}
        assert set(g["members"]) <= children
        for parent, child in g["links"]:
            assert f.node(parent) and f.node(child)
        assert g["root"] in {p for p, _ in g["links"]}
    merged = [g for g in data["groups"] if g["merged_with"]]
    assert merged and data["tfi_max"] == 2


def test_plan_dual_and_text(capsys, tmp_path):
    path = tmp_path / "groups.json"
    path.write_text(json.dumps([{"mgid": 1, "members": ["h0_0_0", "h1_0_1", "h2_1_0"]},
                                {"mgid": 2, "members": ["h0_1_1"]}]))
    code, out, _ = run_cli(capsys, "plan", "multicast", "--topo", "fattree:k=4", "--colors", "4", "--groups",
                           str(path), "--dual", "--json")
    data = json.loads(out)
    g = data["groups"][0]
    assert code == 0 and g["backup"]["root"] != g["root"]
    upper = {tuple(e) for e in g["links"] if not e[1].startswith("h")}
    assert not upper & {tuple(e) for e in g["backup"]["links"]}
    code, out, _ = run_cli(capsys, "plan", "multicast", "--topo", "fattree:k=4", "--groups", str(path),
                           "--algo", "mr4lms")
    assert code == 0 and "EFI" in out and "group      1" in out


@pytest.mark.parametrize("argv,msg", [
    (["--pattern", "40x40"], "needs 1,600 terminals but fattree:k=4 has only 16"),
    (["--pattern", "4x4", "--algo", "opensm", "--dual"], "--dual applies to cmr4lms"),
    (["--pattern", "4x4x4:ppn=4", "--colors", "2"], "MGID layers"),
    (["--pattern", "wat"], "not understood"),
])
def test_plan_errors(capsys, argv, msg):
    code, out, err = run_cli(capsys, "plan", "multicast", "--topo", "fattree:k=4", *argv)
    assert code == 2 and out == "" and msg in err and err.startswith("dcnlab: error:")


def test_plan_bad_groups_file(capsys, tmp_path):
    path = tmp_path / "g.json"
    path.write_text('[{"mgid": 1, "members": ["h0_0_0", "nobody"]}]')
    code, _, err = run_cli(capsys, "plan", "multicast", "--topo", "fattree:k=4", "--groups", str(path))
    assert code == 2 and "unknown member 'nobody'" in err and "g.json" in err


def test_cli_starts_without_heavy_imports():
    code = ("import sys; from dcnlab.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('numpy', 'networkx', 'dcnlab.controller.multicast.cmr4lms') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "dcnlab.controller.multicast.cmr4lms" not in out


def test_reproduce_runner(monkeypatch, tmp_path, capsys):
    """The pool, the table, the claims and the plots, on three quick paper-scale runs."""
    tasks = [multicast_model.Task("181x181", a) for a in ("cmr4lms-fixed", "cmr4lms-dynamic", "mr4lms")]
    monkeypatch.setattr(multicast_model, "tasks_for", lambda quick, extra=(): tasks)
    code = main(["reproduce", "multicast", "--quick", "--emulate", "off", "--out", str(tmp_path), "--workers", "2"])
    out = capsys.readouterr().out
    assert code == 0 and "181x181" in out and "paper statement" in out
    data = json.loads((tmp_path / "multicast.json").read_text())
    rows = {r["algo"]: r for r in data["rows"]}
    assert rows["cmr4lms-fixed"]["groups_in"] == 362 and rows["cmr4lms-fixed"]["tfi_max"] == 1
    assert rows["cmr4lms-fixed"]["efi_max"] < rows["mr4lms"]["efi_max"]  # C-MR4LMS (Chen et al.), §4.2
    assert (tmp_path / "multicast_1ppn.png").stat().st_size > 10_000
    claims = {c["statement"]: c for c in data["claims"]}
    assert any(c["agrees"] for c in claims.values())


def test_claims_on_synthetic_rows():
    def row(p, a, **kw):
        base = {"pattern": p, "algo": a, "ppn": 4 if "ppn=4" in p else 1, "groups": 1000, "trees": 512,
                "tfi_max": 2, "tfi_avg": 1.5, "efi_max": 10, "efi_avg": 2.0, "seconds": 1.0}
        base.update(kw)
        return base
    rows = [row("64x32x16", "cmr4lms-fixed", tfi_max=7), row("64x32x16", "cmr4lms-dynamic", tfi_max=1),
            row("100x50x26:ppn=4", "cmr4lms-fixed"), row("100x50x26:ppn=4", "cmr4lms-dynamic", seconds=2.0),
            row("100x50x26:ppn=4", "mr4lms", tfi_max=168, tfi_avg=1.1, seconds=600.0, trees=8000)]
    cs = {c.statement: c for c in multicast_model.claims(rows)}
    assert cs["64x32x16 (1 ppn): max TFI, fixed vs dynamic"].agrees
    assert cs["MR4LMS max / avg TFI, 100x50x26 (4 ppn)"].agrees
    assert cs["time, 100x50x26 (4 ppn): C-MR4LMS vs MR4LMS"].agrees
