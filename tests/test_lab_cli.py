"""``dcnlab lab DIR`` without BMv2: what is read from an exercise directory, and the one-line
errors for a bad one, all before root and the toolchain are checked (as ``dcnlab run`` reads its topology
file first); then the preflight, before anything is compiled or written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dcnlab.controller.runtime.toolchain import PREFIX_VAR
from dcnlab.cli import main
from dcnlab.cli.errors import UserError
from dcnlab.emu.lab import load_lab, makefile_vars
from dcnlab.emu.lab_exec import check_execs, parse_exec

BASIC = Path(__file__).resolve().parent.parent / "examples" / "basic-lab"


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    """A copy of examples/basic-lab (the lab writes build/ into its directory)."""
    d = tmp_path / "basic-lab"
    shutil.copytree(BASIC, d, ignore=shutil.ignore_patterns("build", "logs", "received.txt"))
    return d


def _one_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dcnlab: error: ") and "Traceback" not in err, err
    return lines[0]


def test_basic_lab_is_read_as_make_run_would(lab):
    """TOPO from the Makefile, the one program at the root, runtime JSON named from the lab directory
    (``pod-topo/s1-runtime.json``, as the tutorials write it), switches in file order, hosts' eth0 data."""
    got = load_lab(lab)
    assert got.topology == lab / "pod-topo" / "topology.json" and got.program == lab / "basic.p4"
    assert got.build_json == lab / "build" / "basic.json"
    assert got.build_p4info == lab / "build" / "basic.p4.p4info.txtpb"
    assert [n.name for n in got.fabric.forwarding_nodes()] == ["s1", "s2", "s3", "s4"]
    assert got.fabric.switch_conf["s3"].runtime_json == lab / "pod-topo" / "s3-runtime.json"
    assert got.hosts() == ["h1", "h2", "h3", "h4"]
    h4 = next(h for h in got.fabric.hosts() if h.name == "h4")
    assert (h4.ip, h4.mac) == ("10.0.4.4", "08:00:00:00:04:04")
    assert "ip route add default via 10.0.4.254 dev eth0" in got.fabric.host_conf["h4"].commands
    assert not (lab / "build").exists()          # reading creates nothing


@pytest.mark.parametrize("line", ["TOPO = t/topology.json", "TOPO ?= t/topology.json", "TOPO := t/topology.json",
                                  "TOPO::=t/topology.json", "override TOPO = t/topology.json  # a comment",
                                  "D = t\nTOPO = $(D)/topology.json", "D := t\nTOPO = ${D}/topology.json"])
def test_makefile_topo_forms(lab, line):
    (lab / "t").mkdir()
    shutil.copy(lab / "pod-topo" / "topology.json", lab / "t" / "topology.json")
    (lab / "Makefile").write_text(f"BMV2_SWITCH_EXE = simple_switch_grpc\n{line}\n\ninclude ../utils/Makefile\n")
    assert load_lab(lab).topology == lab / "t" / "topology.json"


def test_makefile_vars_as_make_sets_them(tmp_path):
    mk = tmp_path / "Makefile"
    mk.write_text("A = 1\nA ?= 2\nB ?= 3\nB ?= 4\nC = x \\\n  y\nC += z\nrun:\n\tTOPO = no\n"
                  "ifndef TOPO\nTOPO = topology.json\nendif\n")
    assert makefile_vars(mk) == {"A": "1", "B": "3", "C": "x y z", "TOPO": "topology.json"}


def test_default_topology_json_without_makefile(lab):
    (lab / "Makefile").unlink()
    with pytest.raises(UserError, match=r"no topology: topology.json \(no TOPO in a Makefile\)"):
        load_lab(lab)
    (lab / "Makefile").write_text("BMV2_SWITCH_EXE = simple_switch_grpc\n")
    shutil.copy(lab / "pod-topo" / "topology.json", lab / "topology.json")
    assert load_lab(lab).topology == lab / "topology.json"


def test_a_program_chosen_from_several(lab):
    shutil.copy(lab / "basic.p4", lab / "other.p4")
    assert load_lab(lab, program=lab / "other.p4").program == lab / "other.p4"
    (lab / "Makefile").write_text((lab / "Makefile").read_text() + "DEFAULT_PROG = other.p4\n")
    assert load_lab(lab).program == lab / "other.p4"


BAD = [
    ("missing", lambda d: shutil.rmtree(d), "lab directory '{d}' does not exist"),
    ("a file", lambda d: (shutil.rmtree(d), d.write_text("x")), "lab directory '{d}' is not a directory"),
    ("no topology", lambda d: (d / "Makefile").write_text("TOPO = nowhere/topology.json\n"),
     "no topology: its Makefile's TOPO = 'nowhere/topology.json': {d}/nowhere/topology.json does not exist"),
    ("Makefile a directory", lambda d: ((d / "Makefile").unlink(), (d / "Makefile").mkdir()),
     "Makefile '{d}/Makefile': is a directory"),
    ("Makefile not text", lambda d: (d / "Makefile").write_bytes(b"TOPO = \xff\xfe\n"),
     "Makefile '{d}/Makefile': not UTF-8 text"),
    ("Makefile computes TOPO", lambda d: (d / "Makefile").write_text("TOPO = $(wildcard */topology.json)\n"),
     "TOPO = '$(wildcard */topology.json)': dcnlab expands only $(VAR) of variables set in the Makefile"),
    ("two programs", lambda d: shutil.copy(d / "basic.p4", d / "alt.p4"),
     "has 2 P4 programs at its root (alt.p4, basic.p4); choose one with --program FILE"),
    ("no program", lambda d: (d / "basic.p4").unlink(), "has no P4 program (*.p4) at its root; give one with "
     "--program FILE"),
    ("bad topology", lambda d: (d / "pod-topo" / "s2-runtime.json").unlink(),
     "switch s2 runtime_json: file {d}/pod-topo/s2-runtime.json does not exist"),
]


@pytest.mark.parametrize("why, spoil, message", BAD, ids=[b[0] for b in BAD])
def test_bad_directory_is_one_line_exit_2(lab, capsys, why, spoil, message):
    spoil(lab)
    line = _one_error(capsys, ["lab", str(lab), "--exec", "h1 true"])
    assert message.format(d=lab) in line
    if lab.is_dir():
        assert not (lab / "build").exists()


def test_bad_program_option(lab, capsys):
    line = _one_error(capsys, ["lab", str(lab), "--program", str(lab / "Makefile")])
    assert f"argument --program: '{lab}/Makefile' is not a P4 source file" in line


def test_exec_parsing():
    e = parse_exec("  h2 python3 receive.py --log out.txt &  ")
    assert (e.host, e.command, e.background) == ("h2", "python3 receive.py --log out.txt", True)
    e = parse_exec("h1 true && echo a")
    assert (e.command, e.background) == ("true && echo a", False)
    assert not parse_exec("h1 echo \\&").background
    for bad, what in (("h1", "expected 'HOST COMMAND'"), ("h1 &", "no command before '&'"),
                      ("   ", "expected 'HOST COMMAND'")):
        with pytest.raises(UserError, match=what):
            parse_exec(bad)


def test_exec_host_must_exist(lab, capsys):
    with pytest.raises(UserError, match=r"no host 'h9' in pod-topo/topology.json; valid: h1, h2, h3, h4"):
        check_execs(["h1 true", "h9 ping -c 1 10.0.1.1"], load_lab(lab))
    line = _one_error(capsys, ["lab", str(lab), "--exec", "h1 true", "--exec", "s1 ping 10.0.1.1"])
    assert "argument --exec 's1 ping 10.0.1.1': no host 's1' in pod-topo/topology.json; valid: h1, h2, h3, h4" \
        in line


def _bare(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PREFIX_VAR}
    env.update(PATH="/usr/bin:/bin", DCNLAB_RUN_ROOT=str(tmp_path / "runs"))
    return env


def test_preflight_is_one_line_before_anything_is_built(lab, tmp_path):
    """Without the toolchain (PATH=/usr/bin:/bin): one line naming what is missing, and no build/ yet.
    A bad directory is reported first, as ``dcnlab run`` reports a bad topology file first."""
    if any(shutil.which(t, path="/usr/bin:/bin") for t in ("simple_switch_grpc", "p4c")):
        pytest.skip("the P4 toolchain is installed in /usr/bin: nothing is missing there")
    r = subprocess.run([sys.executable, "-m", "dcnlab", "lab", str(lab), "--exec", "h1 true"],
                       capture_output=True, text=True, env=_bare(tmp_path), timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("dcnlab: error: dcnlab lab needs ") and "not found" in lines[0]
    assert not (lab / "build").exists() and not (tmp_path / "runs").exists()
    r = subprocess.run([sys.executable, "-m", "dcnlab", "lab", str(tmp_path / "nope")], capture_output=True,
                       text=True, env=_bare(tmp_path), timeout=60)
    assert r.returncode == 2 and r.stderr.strip() == f"dcnlab: error: lab directory '{tmp_path / 'nope'}' does not exist"
