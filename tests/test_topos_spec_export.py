"""Spec parsing, parameter errors, determinism and JSON/DOT export."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dcnlab.topos import SpecError, parse_spec
from dcnlab.topos.export import from_json, to_dict, to_dot, to_json

BAD = {
    "bcube:n=1,k=1": "n=1",
    "bcube:n=4,k=-1": "k=-1",
    "bcube:n=16,k=5": "n^(k+1)",
    "bcube:n=4": "missing parameter(s) k",
    "bcube:n=four,k=1": "not an integer",
    "bcube:n=4,k=1,x=2": "unknown parameter 'x'",
    "fattree:k=5": "k=5 must be even",
    "fattree:k=0": "k=0 is out of range",
    "fattree:k=1000": "2 <= k <= 406",
    "midplane:cns=0": "cns=0",
    "midplane:q=2,m=2,p=1,k=2,w=2,cns=5,terminals=1": "cns=5 is out of range; valid: 1 <= cns <= 4",
    "midplane:terminals=0": "terminals=0",
    "dragonfly:a=4,h=3,arrangement=circulant": "even h",
    "dragonfly:a=0,h=2": "a=0",
    "dragonfly:a=4,h=0": "h=0",
    "dragonfly:a=4,h=2,arrangement=ring": "valid: relative, absolute, circulant",
    "torus:k=3": "unknown fabric 'torus'",
}


@pytest.mark.parametrize("spec,needle", BAD.items())
def test_bad_specs_name_the_parameter(spec, needle):
    with pytest.raises(SpecError) as e:
        parse_spec(spec)
    assert needle in str(e.value)


def test_cli_reports_bad_input_without_traceback():
    r = subprocess.run([sys.executable, "-m", "dcnlab", "topo", "show", "fattree:k=3"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "fattree: parameter k=3 must be even" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_show_lists_counts():
    r = subprocess.run([sys.executable, "-m", "dcnlab", "topo", "show", "bcube:n=4,k=1"],
                       capture_output=True, text=True, check=True)
    assert "servers   16" in r.stdout and "switches  8" in r.stdout and "links     48" in r.stdout


@pytest.mark.parametrize("spec", ["bcube:n=3,k=1", "fattree:k=4", "midplane:q=2,m=2,p=2,k=2,w=2,cns=3,terminals=2",
                                  "dragonfly:p=2,a=3,h=2,arrangement=circulant"])
def test_json_round_trip_and_determinism(spec):
    text = to_json(parse_spec(spec))
    assert text == to_json(parse_spec(spec)), "same spec, same export"
    again = to_json(from_json(text))
    assert json.loads(again) == json.loads(text)
    data = json.loads(text)
    assert data["spec"] == parse_spec(spec).spec
    assert {"name", "role", "label", "ports"} <= set(data["nodes"][0])
    assert {"a", "a_port", "b", "b_port"} == set(data["links"][0])
    loaded = from_json(text)
    assert loaded.counts() == parse_spec(spec).counts()


def test_addresses_are_deterministic_and_unique():
    f = parse_spec("fattree:k=4")
    hosts = list(f.hosts())
    assert hosts[0].ip == "10.0.0.1" and hosts[0].mac == "02:00:00:00:00:01"
    assert len({h.ip for h in hosts}) == len({h.mac for h in hosts}) == 16
    assert to_dict(f)["hosts"][5]["ip"] == "10.0.0.6"


def test_dot_export_has_every_link():
    f = parse_spec("bcube:n=2,k=1")
    dot = to_dot(f)
    assert dot.count(" -- ") == f.num_links()


def test_png_export(tmp_path):
    out = tmp_path / "f.png"
    r = subprocess.run([sys.executable, "-m", "dcnlab", "topo", "export", "dragonfly:p=1,a=4,h=2",
                        "--format", "png", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_png_refuses_huge_fabric(tmp_path):
    r = subprocess.run([sys.executable, "-m", "dcnlab", "topo", "export", "bcube:n=8,k=5",
                        "--format", "png", "-o", str(tmp_path / "x.png")], capture_output=True, text=True)
    assert r.returncode == 2 and "drawing is limited" in r.stderr
