"""``--check`` of ``dcnlab run`` and ``dcnlab bench emu``, and the emulation size limits (no BMv2 needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcnlab.emu import options
from dcnlab.emu.network import FabricNetwork, NetOptions
from dcnlab.cli import build_parser, main
from dcnlab.topos import parse_spec
from dcnlab.topos.errors import UserError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(autouse=True)
def run_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    return root


@pytest.mark.parametrize("argv, check", [([], None), (["--check"], "all-pairs"), (["--check", "rules"], "rules"),
                                         (["--check", "both"], "both"), (["--check", "all-pairs"], "all-pairs")])
def test_run_check_values(argv, check):
    assert build_parser().parse_args(["run", "fattree:k=4", *argv]).check == check


def test_bench_emu_checks_both_by_default():
    args = build_parser().parse_args(["bench", "emu", "fattree:k=4"])
    assert args.check == "both" and not args.no_writes
    assert build_parser().parse_args(["bench", "emu", "fattree:k=12", "--check", "rules"]).check == "rules"


@pytest.mark.parametrize("check", ["rules", "both"])
def test_rules_check_needs_dcnlabs_program(check, capsys, run_root):
    rc = main(["run", str(EXAMPLES / "router-lab" / "topology.json"), "--check", check])
    _, err = capsys.readouterr()
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"argument --check {check}: the rules check compares every switch's tables with dcnlab's routes" in err
    assert "valid here: --check all-pairs" in err
    assert not run_root.exists() or not any(run_root.iterdir())


def test_fattree_k12_fits_and_the_memory_bound_is_a_clear_error():
    FabricNetwork(parse_spec("fattree:k=12"), NetOptions())     # 180 switches, 432 hosts: accepted
    with pytest.raises(UserError, match=r"fattree:k=12 needs about .* GiB \(180 BMv2 switches .* 432 hosts .* "
                                        r"but this machine has 4\.0 GiB available; valid here: at most about"):
        options.check_memory("fattree:k=12", 180, 432, available_mib=4096)
    options.check_memory("fattree:k=12", 180, 432, available_mib=22 * 1024)
