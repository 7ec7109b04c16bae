"""Commands that bring up Mininet's hosts refuse, in one line and before any work, where ``/`` is not a mount
point (a plain ``debootstrap`` + ``chroot``, a minimal container): each host's ``mnexec -n`` runs
``mount --make-rprivate /`` there, and ``dcnlab run`` failed deep inside Mininet with ``remount: Invalid
argument`` after it had compiled, made a run directory and a namespace. The refusal says how to make ``/``
a mount point (``mount --bind DIR DIR`` before ``chroot DIR``). Commands without hosts (``clean``,
``compile``) are not refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import fake_chroot
from dcnlab.emu import preflight

PROJECT = Path(__file__).resolve().parent.parent

#: A machine's own view: ``/`` is a mount point (optional fields, an escaped space in another mount point).
MACHINE = """\
22 27 0:21 / /proc rw,relatime shared:12 - proc proc rw
27 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
31 27 0:30 / /mnt/my\\040disk rw,relatime shared:20 master:3 - tmpfs tmpfs rw
"""
#: The same seen from a chroot into /srv/chroot (not a mount point): the mounts under it only, none at ``/``.
CHROOT = """\
412 411 254:1 /proc /proc rw,relatime - proc proc rw
413 411 0:24 / /dev/pts rw,relatime - devpts devpts rw
414 411 254:1 /tmp /tmp rw,relatime - ext4 /dev/vda1 rw
415 411 0:30 / /\\040 rw,relatime - tmpfs tmpfs rw
"""


def test_mountinfo_parsing():
    assert preflight.mount_points(MACHINE) == ["/proc", "/", "/mnt/my disk"]
    assert preflight.mount_points(CHROOT) == ["/proc", "/dev/pts", "/tmp", "/ "]
    assert preflight.mount_points("") == []
    assert preflight.root_is_mount_point(MACHINE) is True
    assert preflight.root_is_mount_point(CHROOT) is False          # "/ " (a directory named " ") is not "/"


def test_which_commands_are_refused(tmp_path, monkeypatch):
    """With a chroot's mountinfo: the emulation (BMv2 among its tools) is refused with the remedy, in one
    line; ``dcnlab clean`` (root, no tools) and ``dcnlab compile`` (p4c, no root) are not."""
    info = tmp_path / "mountinfo"
    info.write_text(CHROOT)
    monkeypatch.setattr(preflight, "MOUNTINFO", str(info))
    emulation = preflight.problems(preflight.EMULATION_TOOLS, root=True)
    assert preflight.NO_MOUNT_POINT in emulation
    assert preflight.NO_MOUNT_POINT not in preflight.problems((), root=True)
    assert preflight.NO_MOUNT_POINT not in preflight.problems(preflight.COMPILE_TOOLS, root=False)
    assert preflight.NO_MOUNT_POINT in preflight.problems((), root=True, hosts=True)
    text = preflight.message("dcnlab run", emulation)
    assert "\n" not in text and "mount --bind DIR DIR, then chroot DIR" in text, text
    if emulation == [preflight.NO_MOUNT_POINT]:      # root, and the toolchain installed
        assert text == f"dcnlab run cannot run here: {preflight.NO_MOUNT_POINT}"
    info.write_text(MACHINE)
    assert preflight.NO_MOUNT_POINT not in preflight.problems(preflight.EMULATION_TOOLS, root=True)
    info.unlink()                                      # no /proc: nothing claimed
    assert preflight.NO_MOUNT_POINT not in preflight.problems(preflight.EMULATION_TOOLS, root=True)


def _where_root_is_no_mount_point(tmp_path: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """``argv`` where ``/`` is not a mount point: in a :mod:`fake_chroot`, or here when this already is one
    (the namespace tests run inside a fake chroot too, where another cannot be made)."""
    env = [f"DCNLAB_RUN_ROOT={tmp_path / 'runs'}", f"PYTHONPATH={PROJECT}"]
    if not fake_chroot.root_is_mount_point():
        return subprocess.run(["env", *env, *argv], capture_output=True, text=True, timeout=300, cwd=PROJECT)
    root = tmp_path / f"root{len(list(tmp_path.glob('root*')))}"      # a new, empty one each time
    return fake_chroot.run(root, [*env, *argv], cwd=PROJECT, timeout=300)


@pytest.mark.netns
@pytest.mark.skipif(bool(fake_chroot.missing()), reason=f"needs {', '.join(fake_chroot.missing())}")
def test_run_in_a_chroot_is_refused_in_one_line_before_any_work(tmp_path):
    r = _where_root_is_no_mount_point(tmp_path, [sys.executable, "-m", "dcnlab", "run", "fattree:k=4"])
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dcnlab: error: dcnlab run "), r.stderr
    assert "/ is not a mount point" in lines[0] and "mount --bind DIR DIR, then chroot DIR" in lines[0], lines[0]
    assert "Traceback" not in r.stderr and "remount" not in r.stdout + r.stderr
    assert not (tmp_path / "runs").exists()               # nothing made: no run directory, no namespace
    r = _where_root_is_no_mount_point(tmp_path, [sys.executable, "-m", "dcnlab", "clean"])
    assert r.returncode == 0 and "mount point" not in r.stdout + r.stderr, r.stdout + r.stderr
