"""PTF against one switch of a running fabric: ``Network.ptf`` on a fat-tree k=4 with dcnlab's routes, and
``dcnlab lab DIR --ptf SWITCH`` on examples/basic-lab with its runtime JSON. The tests (tests/fixtures/ptf/fabric
and lab) push no pipeline (keep_pipeline) and see the entries the fabric installed; afterwards the switch's
ports are back on their links and its pipeline and entries are dcnlab's again."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dcnlab
from dcnlab.emu.cleanup import leftovers

pytestmark = [pytest.mark.bmv2, pytest.mark.p4c, pytest.mark.netns]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ptf"


def test_ptf_on_an_edge_switch_of_a_fat_tree(tmp_path, capfd):
    tests = tmp_path / "work" / "ptf"
    shutil.copytree(FIXTURES / "fabric", tests)
    with dcnlab.Network("fattree:k=4") as net:
        before = net.reachability()
        assert before.complete, before.summary()
        rc = net.ptf("e0_0", tests, ports=[0, 1, 2, 3], keep_pipeline=True)
        err = capfd.readouterr().err
        assert rc == 0, err
        assert "fabric_tests.FabricRoutes ... ok" in err and "\nOK\n" in err
        after = net.reachability()                       # e0_0's ports, pipeline and routes are back
        assert after.complete, after.summary()
        assert len(net.switches["e0_0"].read_table("ipv4_host")) == 16
        net.switches["e0_0"].write(-net.switches["e0_0"].read_table("ipv4_host")[0])   # dcnlab is primary again
    assert leftovers() == []


def test_lab_ptf_on_s1_with_the_labs_entries(tmp_path):
    lab = tmp_path / "basic-lab"
    shutil.copytree(ROOT / "examples" / "basic-lab", lab, ignore=shutil.ignore_patterns("build", "logs"))
    shutil.copytree(FIXTURES / "lab", lab / "ptf")
    r = subprocess.run([sys.executable, "-m", "dcnlab", "lab", str(lab), "--ptf", "s1", "--ptf-ports", "1,2,3",
                        "--keep-pipeline", "--exec", "h2 ping -c 1 -W 2 10.0.3.3"], capture_output=True, text=True,
                       timeout=900, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "lab_tests.LabEntries ... ok" in r.stderr and "PTF on s1 (device 0), ports 1, 2, 3" in r.stderr
    assert "1 packets transmitted, 1 received" in r.stdout
    assert leftovers() == []
