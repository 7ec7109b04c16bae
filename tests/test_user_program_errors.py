"""`dcnlab run` on a user's exercise that is wrong: exit status 2, one line on stderr that
names the file and what is wrong, no traceback, and nothing created. test_topology_files.py and
test_entry_files.py check the messages of the readers themselves, and test_user_topology_bmv2.py a
``--program`` that does not compile; this file checks the command line's side, for a bad topology
file, an entry that does not fit the program's P4Info, and a program named by the topology file that
does not compile. The examples' labs (examples/*-lab) are copied and broken one thing at a time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from dcnlab.emu import preflight
from dcnlab.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(autouse=True)
def run_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    return root


def lab(tmp_path: Path, name: str) -> Path:
    """A copy of examples/<name> next to a copy of examples/programs (the labs name ../programs/X.p4)."""
    if not (tmp_path / "programs").exists():
        shutil.copytree(EXAMPLES / "programs", tmp_path / "programs")
    return Path(shutil.copytree(EXAMPLES / name, tmp_path / name))


def edit_json(path: Path, change: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def refused(argv: list[str], capsys, run_root: Path) -> str:
    """Run ``dcnlab ARGV``; it must exit 2 with one line on stderr, no traceback and no run created."""
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 2, (out, err)
    assert err.startswith("dcnlab: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert not run_root.exists() or not any(run_root.iterdir()), "a run was created before the error"
    return err


def needs_emulation() -> None:
    """`dcnlab run` checks root and the toolchain before it compiles anything."""
    if os.geteuid() != 0:
        pytest.skip("dcnlab run needs root")
    missing = preflight.problems()
    if missing:
        pytest.skip("; ".join(missing))


# -- topology files (no root needed: the file is read and checked first) ----------------------------
def _unknown_node(d: dict) -> None:
    d["links"][0] = ["h1", "s9-p1"]


def _missing_runtime_json(d: dict) -> None:
    d["switches"]["s1"]["runtime_json"] = "nope.json"


def _loss_out_of_range(d: dict) -> None:
    d["topology"]["links"][3] = ["s1", "s2", {"loss": 150}]


def _bad_strategy_names(d: dict) -> None:
    d["topology"]["hosts"]["hostA"] = d["topology"]["hosts"].pop("h3")
    d["topology"]["links"][2] = ["hostA", "s2"]


@pytest.mark.parametrize(("name", "file", "change", "words"), [
    ("l2-lab", "topology.json", _unknown_node, ["links[0][1]: unknown node 's9' in 's9-p1'"]),
    ("tunnel-lab", "topology.json", _missing_runtime_json, ["switch s1 runtime_json: file ", "nope.json does not exist"]),
    ("p4app-lab", "p4app.json", _loss_out_of_range, ["link s1-s2 loss: 150 is not a number in 0..99.99 %"]),
    ("p4app-lab", "p4app.json", _bad_strategy_names, ["host hostA: the l3 assignment strategy needs names h<number>"]),
    ("counter-lab", "topology.json", None, ["line 1 column 2: invalid JSON"]),
], ids=["unknown-node", "missing-file", "loss-range", "l3-names", "syntax"])
def test_bad_topology_file_is_one_line_and_exit_2(tmp_path, capsys, run_root, name, file, change, words):
    path = lab(tmp_path, name) / file
    if change is None:
        path.write_text(path.read_text()[:1] + ",")
    else:
        edit_json(path, change)
    err = refused(["run", str(path)], capsys, run_root)
    assert err.startswith(f"dcnlab: error: {path}: ") and all(w in err for w in words), err


# -- entries that do not fit the P4Info (after compiling, before anything is created) ---------------
def _port_too_wide(lab_dir: Path) -> Path:
    edit_json(lab_dir / "s1-runtime.json", lambda d: d["table_entries"][1]["action_params"].update(port=600))
    return lab_dir / "s1-runtime.json"


def _group_id_too_big(lab_dir: Path) -> Path:
    edit_json(lab_dir / "s1-runtime.json", lambda d: d["multicast_group_entries"][0].update(multicast_group_id=70000))
    return lab_dir / "s1-runtime.json"


def _cli_line(old: str, new: str) -> Callable[[Path], Path]:
    def change(lab_dir: Path) -> Path:
        p = lab_dir / "s1-commands.txt"
        text = p.read_text()
        assert old in text
        p.write_text(text.replace(old, new))
        return p
    return change


@pytest.mark.p4c
@pytest.mark.parametrize(("name", "change", "words"), [
    ("l2-lab", _port_too_wide, ["table_entries[1] (L2Ingress.dmac): L2Ingress.forward.port=600 does not fit in 9 bits"]),
    ("l2-lab", _group_id_too_big, ["multicast_group_entries[0]: multicast group id 70000 out of range"]),
    ("ecn-lab", _cli_line("=> 08:00:00:00:00:22 2", "=> 2"),
     ["line 3 (table_add): action EIngress.route takes 2 parameter(s) (dst_mac, port), got 1"]),
    ("ecn-lab", _cli_line("EEgress.ecn_threshold", "EEgress.ecn_limit"),
     ["line 6 (register_write): unknown register 'EEgress.ecn_limit'; known: EEgress.ecn_threshold"]),
    ("ecn-lab", _cli_line("ecn_threshold 0 10", "ecn_threshold 1 10"),
     ["line 6 (register_write): index 1 out of range for EEgress.ecn_threshold; valid: 0..0"]),
], ids=["json-param-width", "json-group-id", "cli-param-count", "cli-register-name", "cli-register-index"])
def test_entry_that_does_not_fit_is_one_line_and_exit_2(tmp_path, capsys, run_root, name, change, words):
    needs_emulation()
    lab_dir = lab(tmp_path, name)
    bad = change(lab_dir)
    err = refused(["run", str(lab_dir / "topology.json")], capsys, run_root)
    assert err.startswith(f"dcnlab: error: {bad}: ") and all(w in err for w in words), err


# -- a program named by the topology file that does not compile ------------------------------------
@pytest.mark.p4c
def test_program_of_a_topology_file_that_does_not_compile_shows_p4c_file_and_line(tmp_path, capsys, run_root):
    needs_emulation()
    lab_dir = lab(tmp_path, "p4app-lab")
    prog = tmp_path / "programs" / "router.p4"
    lines = prog.read_text().splitlines()
    n = next(i for i, line in enumerate(lines, 1) if "hdr.ipv4.ttl = hdr.ipv4.ttl - 1;" in line)
    lines[n - 1] = lines[n - 1].replace("hdr.ipv4.ttl - 1", "hdr.ipv4.hops - 1")
    prog.write_text("\n".join(lines) + "\n")
    err = refused(["run", str(lab_dir / "p4app.json"), "--check"], capsys, run_root)
    assert re.search(rf"{re.escape(str(prog))}\({n}\):.* error: .*hops", err), err
