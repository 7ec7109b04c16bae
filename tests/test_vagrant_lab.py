"""The Vagrant lab: its provisioning script passes shellcheck, and ``vagrant validate`` accepts the
Vagrantfile for each box (Ubuntu 24.04 by default, 22.04 with DCNLAB_BOX) and refuses an unknown box in
one line. Each part skips, with the reason, where shellcheck or vagrant is not installed (./setup installs
shellcheck; Debian's vagrant is optional). vagrant runs on a copy of the two files in a temporary
directory, with a VAGRANT_HOME of its own, so that it writes nothing into the checkout or the user's home."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROVISION = ROOT / "vagrant" / "provision.sh"
HANG = 300      # s: a hang guard; shellcheck and vagrant validate take a few seconds


def test_the_vagrantfile_provisions_with_the_script():
    text = (ROOT / "Vagrantfile").read_text()
    assert 'path: "vagrant/provision.sh"' in text and "inline:" not in text
    assert 'ENV.fetch("DCNLAB_BOX", "ubuntu-24.04")' in text and '"ubuntu-24.04" => "bento/ubuntu-24.04"' in text
    assert PROVISION.is_file() and os.access(PROVISION, os.X_OK)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed (apt-get install shellcheck)")
def test_provisioning_script_passes_shellcheck():
    r = subprocess.run(["shellcheck", "--shell=bash", "--severity=style", str(PROVISION)], capture_output=True,
                       text=True, timeout=HANG)
    assert r.returncode == 0, r.stdout + r.stderr


def vagrant_validate(tmp_path: Path, box: str | None) -> subprocess.CompletedProcess:
    lab = tmp_path / "lab"
    (lab / "vagrant").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "Vagrantfile", lab / "Vagrantfile")
    shutil.copy(PROVISION, lab / "vagrant" / "provision.sh")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAGRANT_") and k != "DCNLAB_BOX"}
    env.update(HOME=str(tmp_path / "home"), VAGRANT_HOME=str(tmp_path / "vagrant.d"), VAGRANT_CHECKPOINT_DISABLE="1")
    if box is not None:
        env["DCNLAB_BOX"] = box
    # --ignore-provider: no VirtualBox or libvirt is needed to check the configuration
    return subprocess.run(["vagrant", "validate", "--ignore-provider"], cwd=lab, env=env, capture_output=True,
                          text=True, timeout=HANG)


needs_vagrant = pytest.mark.skipif(shutil.which("vagrant") is None,
                                   reason="vagrant is not installed (apt-get install --no-install-recommends vagrant)")


@needs_vagrant
@pytest.mark.parametrize("box", [None, "ubuntu-24.04", "ubuntu-22.04"])
def test_vagrant_validate_accepts_each_box(tmp_path, box):
    r = vagrant_validate(tmp_path, box)
    assert r.returncode == 0 and "validated successfully" in r.stdout, r.stdout + r.stderr


@needs_vagrant
def test_vagrant_refuses_an_unknown_box_in_one_line(tmp_path):
    r = vagrant_validate(tmp_path, "ubuntu-20.04")
    assert r.returncode != 0
    assert r.stderr.strip() == "DCNLAB_BOX=ubuntu-20.04: valid values are ubuntu-24.04, ubuntu-22.04", r.stdout + r.stderr
